"""A fleet whose two GKE clusters share one project under gke.manage: terraform (one Terraform root)."""

from __future__ import annotations

from rlobs.fleet.commands import parse_fleet
from rlobs.profile.fleet import Fleet
from testing.fleet import example_text


def terraform_fleet_text(*, identity: str = "", dashboards: str = "per-cluster", mode: str = "create-standard") -> str:
    """The example fleet with both GKE clusters in rl-prod-project, Terraform owning the project set-up."""
    text = example_text().replace("project: rl-dev-project", "project: rl-prod-project")
    protection = "\n    deletionProtection: true" if mode != "existing" else ""
    gke = f"    clusterMode: {mode}\n    manage: terraform{protection}{identity}"
    text = text.replace("    clusterMode: existing\n    manage: scripts", gke)
    return text.replace("views:\n", f"views:\n  gkeDashboards: {dashboards}\n")


def terraform_fleet(**kwargs: str) -> Fleet:
    return parse_fleet(terraform_fleet_text(**kwargs), "fleet.yaml")
