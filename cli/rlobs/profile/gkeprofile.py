"""A profile of the gke target: what every profile has, the `gke:` section, and the rules that need both."""

# No `from __future__ import annotations` here: pydantic would eval() each field's annotation string when it builds
# the classes, which made building them about a tenth slower (they are built for a profile with problems, and by
# `rlobs schema`; a valid profile is checked by rlobs.profile.records).

from typing import Literal, Self

from pydantic import Field, model_validator

from rlobs.profile.gke import GkeSpec
from rlobs.profile.gkechecks import workload_problems
from rlobs.profile.model import ProfileBase
from rlobs.profile.problems import raise_all


class GkeProfile(ProfileBase):
    target: Literal["gke"] = Field(description="Which bundle to render.")
    gke: GkeSpec = Field(description="The GCP project, GKE cluster and Cloud Monitoring settings.")

    @model_validator(mode="after")
    def _workload_on_gke(self) -> Self:
        # Rules that need the workload and the gke section together.
        raise_all(workload_problems(self.workload))
        return self
