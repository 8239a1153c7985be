"""The pydantic Profile type: one of the targets' profile models, chosen by `target`, for `rlobs schema`. Importing it
builds every target's model; the loader validates with its own target's only (rlobs.profile.load PROFILES), and
what every later step reads is the records' Profile (rlobs.profile.records)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from rlobs.profile.eksprofile import EksProfile
from rlobs.profile.gkeprofile import GkeProfile

# Adding a target adds one member here and its line in rlobs.profile.load PROFILES.
Profile = Annotated[EksProfile | GkeProfile, Field(discriminator="target")]
