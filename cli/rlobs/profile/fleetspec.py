"""The keys of a fleet file itself (rlobs.profile.fleet expands each cluster into its effective profile)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from rlobs.profile.eks import AWS_REGION, GitRevision, GitUrl, PrometheusEndpoint, RepoPath
from rlobs.profile.fields import DnsLabel, Model, matching
from rlobs.profile.gke import LOCATION, ProjectId
from rlobs.profile.model import Metadata
from rlobs.profile.problems import ProblemAt, raise_all

# Cluster names become Application names (`<cluster>-<component>`, the longest component being
# kube-prometheus-stack, 21 characters) and label values (63 characters at most:
# https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set).
# `in-cluster` is the name Argo CD gives its own cluster, which the fleet never targets.
ClusterName = Annotated[
    str,
    AfterValidator(
        matching(
            r"(?!in-cluster$)[a-z]([-a-z0-9]{0,38}[a-z0-9])?",
            "a cluster name (1-40 lowercase letters, digits and '-', starting with a letter, not `in-cluster`) "
            "like prod-use2-a",
        )
    ),
]


# Either target's region, refused where it is written before any effective profile is built (the fleet README shows
# it in a table); which of the two the cluster's target needs is checked in its effective profile.
Region = Annotated[
    str,
    AfterValidator(
        matching(
            f"{AWS_REGION}|{LOCATION}",
            "an AWS region like us-west-2 (eks) or a GCP region or zone like us-central1 (gke)",
            40,
        )
    ),
]


class FleetGitOps(Model):
    """The one Git repository the fleet's bundle is committed to; every EKS cluster syncs from it."""

    repo_url: GitUrl = Field(description="The Git repository this fleet bundle is committed to.")
    target_revision: GitRevision = Field(description="Branch, tag or commit every cluster syncs, unless it says.")
    path: RepoPath = Field(description="Path of the rendered fleet bundle inside that repository.")


class FleetCluster(Model):
    name: ClusterName = Field(description="Cluster name: the EKS or GKE cluster and its bundle's name.")
    target: Literal["eks", "gke"]
    environment: DnsLabel = Field(description="e.g. dev, staging, prod: selects the values layer env/<environment>.")
    region: Region = Field(description="AWS region (eks) or GCP region or zone (gke) of the cluster.")
    project: ProjectId | None = Field(None, description="gke: the cluster's GCP project.")
    revision: GitRevision | None = Field(
        None, description="eks: the revision this cluster syncs (default gitops.targetRevision), e.g. a release tag."
    )
    overrides: dict[str, Any] = Field(
        default_factory=dict, description="Profile keys for this cluster only, merged over `defaults`."
    )
    prometheus: PrometheusEndpoint | None = Field(
        None,
        description="eks, with views.grafana: how the hub's Grafana reaches this cluster's Prometheus (URL, and "
        "credentials as Secret references in the hub's Grafana namespace).",
    )

    @model_validator(mode="after")
    def _target_fields(self) -> FleetCluster:
        problems = []
        if self.target == "gke" and self.prometheus is not None:
            problems.append(
                ProblemAt(
                    ("prometheus",),
                    "expected no prometheus on a gke cluster (its metrics are in Cloud Monitoring), got one",
                )
            )
        if self.target == "gke" and self.project is None:
            problems.append(ProblemAt(("target",), "target is gke, so expected `project:`, got none"))
        if self.target == "eks" and self.project is not None:
            problems.append(ProblemAt(("project",), "expected no project on an eks cluster, got one"))
        if self.target == "gke" and self.revision is not None:
            problems.append(ProblemAt(("revision",), "expected no revision on a gke cluster (nothing syncs it)"))
        raise_all(problems)
        return self


class GrafanaHub(Model):
    hub: ClusterName = Field(
        description="The eks cluster (eks.mode: rlobs) whose Grafana gets a Prometheus datasource per other eks "
        "cluster (from each cluster's `prometheus:`)."
    )


class FleetViews(Model):
    """How the fleet's clusters are looked at together."""

    grafana: GrafanaHub | None = Field(None, description="One central Grafana for the eks clusters.")
    gke_dashboards: Literal["per-cluster", "per-project"] = Field(
        "per-cluster",
        description="gke.manage: terraform clusters: one Cloud Monitoring dashboard per cluster, or one per GCP "
        "project with a `cluster` dashboard filter (alert policies stay per cluster: each names its workload).",
    )


class FleetSpec(Model):
    api_version: Literal["rlobs/v1alpha1"] = Field(description="Fleet format version.")
    kind: Literal["Fleet"]
    metadata: Metadata
    gitops: FleetGitOps | None = Field(None, description="Required when the fleet has an eks cluster.")
    defaults: dict[str, Any] = Field(
        default_factory=dict, description="Profile keys shared by every cluster (both `eks:` and `gke:` may appear)."
    )
    clusters: tuple[FleetCluster, ...] = Field(min_length=1)
    views: FleetViews = Field(default_factory=FleetViews, description="Fleet-wide dashboards.")

    @model_validator(mode="after")
    def _fleet_rules(self) -> FleetSpec:
        problems = []
        seen: set[str] = set()
        for i, c in enumerate(self.clusters):
            if c.name in seen:
                problems.append(ProblemAt(("clusters", i, "name"), f"expected each cluster name once, got {c.name!r}"))
            seen.add(c.name)
        if self.gitops is None and any(c.target == "eks" for c in self.clusters):
            problems.append(ProblemAt(("kind",), "the fleet has eks clusters, so expected a `gitops:` section"))
        problems += self._hub_problems()
        raise_all(problems)
        return self

    def _hub_problems(self) -> list[ProblemAt]:
        hub = self.views.grafana.hub if self.views.grafana is not None else None
        eks = {c.name for c in self.clusters if c.target == "eks"}
        if hub is not None and hub not in eks:
            return [
                ProblemAt(("views", "grafana", "hub"), f"expected the name of an eks cluster of the fleet, got {hub!r}")
            ]
        problems = []
        for i, c in enumerate(self.clusters):
            if c.target != "eks":
                continue
            if hub is None and c.prometheus is not None:
                problems.append(
                    ProblemAt(
                        ("clusters", i, "prometheus"),
                        "expected no prometheus without views.grafana (nothing reads it), got one",
                    )
                )
            if hub is not None and c.name != hub and c.prometheus is None:
                problems.append(
                    ProblemAt(
                        ("clusters", i, "name"),
                        f"views.grafana.hub is {hub}, so expected "
                        f"`prometheus: {{url: ...}}` on cluster {c.name} (how the hub reaches it), got none",
                    )
                )
        return problems
