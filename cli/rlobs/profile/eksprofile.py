"""A profile of the eks target: what every profile has, and the `eks:` section."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rlobs.profile.eks import EksSpec
from rlobs.profile.model import ProfileBase


class EksProfile(ProfileBase):
    target: Literal["eks"] = Field(description="Which bundle to render.")
    eks: EksSpec = Field(description="The EKS cluster, GitOps source and observability stack.")
