"""The gke target's part of the fleet file (rlobs.profile.fleetspec.FleetTarget)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rlobs.errors import Problem
from rlobs.profile.fleetspec import FleetCluster, FleetSpec, Layer, Region
from rlobs.profile.problems import ProblemAt
from rlobs.targets.gke.profile import LOCATION, GkeProfile, ProjectId
from rlobs.targets.gke.project import identity

if TYPE_CHECKING:
    from rlobs.profile.fleet import Member
    from rlobs.profile.yamlsource import Located, Path

NAME = "gke"
NOUN = "GKE"
REGION = Region(LOCATION, "GCP region or zone", "us-central1")
NEEDS_GITOPS = False  # nothing syncs a gke cluster from Git

FIELDS: dict[str, tuple[Any, Any]] = {
    "project": (ProjectId | None, Field(None, description="gke: the cluster's GCP project.")),
}
VIEWS: dict[str, tuple[Any, Any]] = {
    "gke_dashboards": (
        Literal["per-cluster", "per-project"],
        Field(
            "per-cluster",
            description="gke.manage: terraform clusters: one Cloud Monitoring dashboard per cluster, or one per GCP "
            "project with a `cluster` dashboard filter (alert policies stay per cluster: each names its workload).",
        ),
    ),
}
FIXED: dict[Path, str] = {
    ("gke", "project"): "the cluster's project",
    ("gke", "location"): "the cluster's region",
    ("gke", "cluster"): "the cluster's name",
}


def dashboards(spec: FleetSpec) -> str:
    return str(getattr(spec.views, "gke_dashboards", "per-cluster"))


def cluster_problems(cluster: FleetCluster) -> list[ProblemAt]:
    problems = []
    if getattr(cluster, "prometheus", None) is not None:
        message = "expected no prometheus on a gke cluster (its metrics are in Cloud Monitoring), got one"
        problems.append(ProblemAt(("prometheus",), message))
    if getattr(cluster, "project", None) is None:
        problems.append(ProblemAt(("target",), "target is gke, so expected `project:`, got none"))
    if getattr(cluster, "revision", None) is not None:
        problems.append(ProblemAt(("revision",), "expected no revision on a gke cluster (nothing syncs it)"))
    return problems


def spec_problems(spec: FleetSpec) -> list[ProblemAt]:
    del spec  # its rules across clusters need their effective profiles (fleet_problems)
    return []


def layer(spec: FleetSpec, index: int, cluster: FleetCluster, raw: list[Any]) -> Layer:
    del spec, raw
    at: Path = ("clusters", index)
    return [
        (("gke", "project"), getattr(cluster, "project", None), (*at, "project")),
        (("gke", "location"), cluster.region, (*at, "region")),
        (("gke", "cluster"), cluster.name, (*at, "name")),
    ]


def projects(members: Sequence[Member], manage: str) -> dict[str, list[tuple[Member, GkeProfile]]]:
    """project -> its clusters of that gke.manage (one Terraform root per project iterates over its terraform ones)."""
    found: dict[str, list[tuple[Member, GkeProfile]]] = {}
    for m in members:
        if isinstance(m.profile, GkeProfile) and m.profile.gke.manage == manage:
            found.setdefault(m.profile.gke.project, []).append((m, m.profile))
    return found


def fleet_problems(spec: FleetSpec, members: list[Member], located: Located, display: str) -> list[Problem]:
    problems = []
    # A project's Terraform root iterates over its clusters with one resource per kind: they must agree on the shape
    # of what it creates (whether and how a cluster is created, and which kind of principal gets the roles).
    for project, found in projects(members, "terraform").items():
        shapes = {(p.gke.cluster_mode, identity(p).mode) for _, p in found}
        if len(shapes) < 2:
            continue
        got = ", ".join(f"{m.name} ({p.gke.cluster_mode}, {identity(p).mode})" for m, p in found)
        for m, _ in found:
            pos = located.pos(("clusters", m.index, "project"), key=True)
            message = (
                f"expected the gke.manage: terraform clusters of project {project} (one Terraform root) to share "
                f"gke.clusterMode and the workload identity form (none, kubernetesServiceAccount only, or "
                f"gcpServiceAccount), got {got}"
            )
            problems.append(Problem(display, pos.line, pos.column, f"clusters[{m.index}].project", message))
    if dashboards(spec) == "per-project" and members and not projects(members, "terraform"):
        # Only a project's Terraform root deploys the per-project dashboard: the setting would change nothing.
        pos = located.pos(("views", "gkeDashboards"))
        message = "expected per-cluster: no gke cluster has gke.manage: terraform (only its project's root deploys "
        message += "a per-project dashboard), got per-project"
        problems.append(Problem(display, pos.line, pos.column, "views.gkeDashboards", message))
    return problems
