"""The labels and annotations each fleet eks cluster's Argo CD Secret carries for the fleet's ApplicationSets."""

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
    """Locals to merge into the GitOps Bridge's `var.cluster.addons` (the Secret's labels) and `var.cluster.metadata`
    (annotations; gitops-bridge-dev/terraform-helm-gitops-bridge main.tf), and an output for a Terraform elsewhere."""
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
