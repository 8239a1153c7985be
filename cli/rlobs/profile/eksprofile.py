"""A profile of the eks target: what every profile has, and the `eks:` section."""

# No `from __future__ import annotations` here: pydantic would eval() each field's annotation string when it builds
# the classes, which made building them about a tenth slower (a profile's classes are built on every cold start).

from typing import Literal

from pydantic import Field

from rlobs.profile.eks import EksSpec
from rlobs.profile.model import ProfileBase


class EksProfile(ProfileBase):
    target: Literal["eks"] = Field(description="Which bundle to render.")
    eks: EksSpec = Field(description="The EKS cluster, GitOps source and observability stack.")
