"""The Profile type: one of the targets' profiles, chosen by `target`. Importing it builds every target's model; a
render loads only its own target's (rlobs.profile.load PROFILES), so the modules on its path import this one for
type checking only."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from rlobs.profile.eksprofile import EksProfile
from rlobs.profile.gkeprofile import GkeProfile

# Adding a target adds one member here and its line in rlobs.profile.load PROFILES.
Profile = Annotated[EksProfile | GkeProfile, Field(discriminator="target")]
