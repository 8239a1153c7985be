"""A profile of the gke target: what every profile has, the `gke:` section, and the rules that need both."""

# No `from __future__ import annotations` here: pydantic would eval() each field's annotation string when it builds
# the classes, which made building them about a tenth slower (a profile's classes are built on every cold start).

from typing import Literal, Self

from pydantic import Field, model_validator

from rlobs.profile.fields import duration_seconds
from rlobs.profile.gke import MAX_EXPORT_SECONDS, MIN_EXPORT_SECONDS, SYSTEM_NAMESPACE, GkeSpec
from rlobs.profile.model import ProfileBase, Workload
from rlobs.profile.problems import ProblemAt, raise_all


class GkeProfile(ProfileBase):
    target: Literal["gke"] = Field(description="Which bundle to render.")
    gke: GkeSpec = Field(description="The GCP project, GKE cluster and Cloud Monitoring settings.")

    @model_validator(mode="after")
    def _workload_on_gke(self) -> Self:
        # Rules that need the workload and the gke section together.
        raise_all(_gke_workload_problems(self.workload))
        return self


def _gke_workload_problems(workload: Workload) -> list[ProblemAt]:
    """Rules GKE and Managed OpenTelemetry put on the workload; paths relative to the profile root."""
    problems = []
    seconds = duration_seconds(workload.export_interval)
    if not MIN_EXPORT_SECONDS <= seconds <= MAX_EXPORT_SECONDS:
        problems.append(
            ProblemAt(
                ("workload", "exportInterval"),
                f"expected {MIN_EXPORT_SECONDS}s to {MAX_EXPORT_SECONDS // 60}m on the gke target (Managed "
                f"OpenTelemetry accepts 5000-300000 ms), got {workload.export_interval!r}",
            )
        )
    if SYSTEM_NAMESPACE.fullmatch(workload.namespace):
        problems.append(
            ProblemAt(
                ("workload", "namespace"),
                "expected a namespace of your own, not one Kubernetes or GKE manages "
                f"(kube-*, gke-*, gmp-system, gmp-public), got {workload.namespace!r}",
            )
        )
    return problems
