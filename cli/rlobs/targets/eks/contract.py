"""The cluster Secrets' contract of a fleet's eks clusters: the labels and annotations each one's Argo CD cluster
Secret carries for the fleet's ApplicationSets (checked by rlobs.bundle.appsets).

The GitOps Bridge writes the cluster Secret from Terraform: labels are `var.cluster.addons` (enable flags), and
annotations are `var.cluster.metadata` (gitops-bridge-dev/terraform-helm-gitops-bridge main.tf, kubernetes_secret_v1).
rlobs emits only that metadata, as Terraform locals to merge in; the Secret and its credentials stay the bridge's.
"""

from __future__ import annotations

from typing import Any

from rlobs.bundle.appsets import CLUSTER, ENABLED, ENVIRONMENT, REGION, REVISION, TARGET, Rule, SecretMetadata
from rlobs.profile.fleet import Fleet, Member
from rlobs.targets.eks.profile import EksProfile

STACK = "rlobs.io/stack"  # eks.mode: rlobs (the fleet deploys the stack) or ai-on-eks (the reference stack does)
# What a valid value of the eks keys is (rlobs.bundle.appsets.RULES has the others).
RULES: dict[str, Rule] = {
    TARGET: (lambda v: v == "eks", "eks"),
    STACK: (lambda v: v in ("rlobs", "ai-on-eks"), "rlobs or ai-on-eks"),
}


def members(fleet: Fleet) -> list[tuple[Member, EksProfile]]:
    """The fleet's eks clusters, each with its effective profile."""
    return [(m, m.profile) for m in fleet.members if isinstance(m.profile, EksProfile)]


def metadata(member: Member, profile: EksProfile) -> SecretMetadata:
    c = member.cluster
    labels = {
        ENABLED: "true",
        TARGET: "eks",
        STACK: profile.eks.mode,
        CLUSTER: c.name,
        ENVIRONMENT: c.environment,
    }
    annotations = {
        CLUSTER: c.name,
        ENVIRONMENT: c.environment,
        REVISION: profile.eks.gitops.target_revision,
        REGION: profile.eks.cluster.region,
    }
    return SecretMetadata(c.name, labels, annotations)


def contract(fleet: Fleet) -> dict[str, SecretMetadata]:
    return {m.name: metadata(m, p) for m, p in members(fleet)}


def terraform(fleet: Fleet, contracts: dict[str, SecretMetadata]) -> dict[str, Any]:
    """Terraform JSON: a local per cluster to merge into the GitOps Bridge's `addons` (labels) and `metadata`
    (annotations), and an output with the same, for a Terraform that lives elsewhere (terraform_remote_state)."""
    value = {n: {"name": c.name, "labels": c.labels, "annotations": c.annotations} for n, c in contracts.items()}
    return {
        "locals": {"rlobs_cluster_secrets": value},
        "output": {
            "rlobs_cluster_secrets": {
                "description": f"rlobs fleet {fleet.name}: per EKS cluster, the Argo CD cluster Secret's name and "
                "the labels and annotations its ApplicationSets read (merge them; never the credentials).",
                "value": "${local.rlobs_cluster_secrets}",
            }
        },
    }
