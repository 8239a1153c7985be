"""The eks target's part of the fleet file (its rlobs.profile.fleetspec.FleetTarget)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from rlobs.profile.fields import Model
from rlobs.profile.fleetspec import ClusterName, FleetCluster, FleetSpec, Layer, Region, bundle_path
from rlobs.profile.git import GitRevision
from rlobs.profile.problems import ProblemAt
from rlobs.profile.yamlsource import plain
from rlobs.targets.eks.profile import AWS_REGION, PrometheusEndpoint

if TYPE_CHECKING:
    from rlobs.errors import Problem
    from rlobs.profile.fleetspec import Member
    from rlobs.profile.yamlsource import Located, Path

NAME = "eks"
NOUN = "EKS"
REGION = Region(AWS_REGION, "AWS region", "us-west-2")
NEEDS_GITOPS = True  # Argo CD syncs each cluster from the fleet's repository


class GrafanaHub(Model):
    hub: ClusterName = Field(
        description="The eks cluster (eks.mode: rlobs) whose Grafana gets a Prometheus datasource per other eks "
        "cluster (from each cluster's `prometheus:`)."
    )


FIELDS: dict[str, tuple[Any, Any]] = {
    "revision": (
        GitRevision | None,
        Field(
            None,
            description="eks: the revision this cluster syncs (default gitops.targetRevision), e.g. a release tag.",
        ),
    ),
    "prometheus": (
        PrometheusEndpoint | None,
        Field(
            None,
            description="eks, with views.grafana: how the hub's Grafana reaches this cluster's Prometheus (URL, and "
            "credentials as Secret references in the hub's Grafana namespace).",
        ),
    ),
}
VIEWS: dict[str, tuple[Any, Any]] = {
    "grafana": (GrafanaHub | None, Field(None, description="One central Grafana for the eks clusters.")),
}
FIXED: dict[Path, str] = {
    ("eks", "cluster", "name"): "the cluster's name",
    ("eks", "cluster", "region"): "the cluster's region",
    ("eks", "gitops"): "the fleet's gitops and the cluster's revision",
    ("eks", "grafana", "remotePrometheus"): "views.grafana and the clusters' prometheus",
}


def hub(spec: FleetSpec) -> str | None:
    grafana: GrafanaHub | None = getattr(spec.views, "grafana", None)
    return grafana.hub if grafana is not None else None


def cluster_problems(cluster: FleetCluster) -> list[ProblemAt]:
    del cluster  # an eks entry's own keys need nothing of each other
    return []


def spec_problems(spec: FleetSpec) -> list[ProblemAt]:
    name = hub(spec)
    eks = {c.name for c in spec.clusters if c.target == NAME}
    if name is not None and name not in eks:
        return [
            ProblemAt(("views", "grafana", "hub"), f"expected the name of an eks cluster of the fleet, got {name!r}")
        ]
    problems = []
    for i, c in enumerate(spec.clusters):
        if c.target != NAME:
            continue
        prometheus = getattr(c, "prometheus", None)
        if name is None and prometheus is not None:
            message = "expected no prometheus without views.grafana (nothing reads it), got one"
            problems.append(ProblemAt(("clusters", i, "prometheus"), message))
        if name is not None and c.name != name and prometheus is None:
            message = f"views.grafana.hub is {name}, so expected `prometheus: {{url: ...}}` on cluster {c.name} (how "
            problems.append(ProblemAt(("clusters", i, "name"), message + "the hub reaches it), got none"))
    return problems


def remote_prometheus(spec: FleetSpec, raw_clusters: list[Any]) -> list[dict[str, Any]]:
    """eks.grafana.remotePrometheus of the hub: each other eks cluster's `prometheus:` as written, with its name."""
    name = hub(spec)
    return [
        {"name": c.name, **plain(raw_clusters[i]["prometheus"])}
        for i, c in enumerate(spec.clusters)
        if c.target == NAME and c.name != name and getattr(c, "prometheus", None) is not None
    ]


def layer(spec: FleetSpec, index: int, cluster: FleetCluster, raw: list[Any]) -> Layer:
    assert spec.gitops is not None  # the fleet's rules require it with an eks cluster
    at: Path = ("clusters", index)
    own: str | None = getattr(cluster, "revision", None)
    found: Layer = [
        (("eks", "cluster", "name"), cluster.name, (*at, "name")),
        (("eks", "cluster", "region"), cluster.region, (*at, "region")),
        (("eks", "gitops", "repoUrl"), spec.gitops.repo_url, ("gitops", "repoUrl")),
        (
            ("eks", "gitops", "targetRevision"),
            own or spec.gitops.target_revision,
            (*at, "revision") if own else ("gitops", "targetRevision"),
        ),
        (("eks", "gitops", "path"), bundle_path(spec, cluster.name), ("gitops", "path")),
    ]
    if hub(spec) == cluster.name:
        found.append(
            (("eks", "grafana", "remotePrometheus"), remote_prometheus(spec, raw), ("views", "grafana", "hub"))
        )
    return found


def fleet_problems(spec: FleetSpec, members: list[Member], located: Located, display: str) -> list[Problem]:
    del spec, members, located, display  # its rules are all on the fleet's own keys (spec_problems)
    return []
