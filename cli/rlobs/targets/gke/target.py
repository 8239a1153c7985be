"""The gke target (its rlobs.targets.Target): GKE with Managed OpenTelemetry and Cloud Monitoring."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlobs.profile.question import WORKLOAD, Question

if TYPE_CHECKING:
    from rlobs.profile.fleetspec import FleetTarget
    from rlobs.profile.model import ProfileBase
    from rlobs.profile.yamlsource import Path

NAME = "gke"
PATHS: tuple[str, ...] = (
    ".gitignore",
    "README.md",
    "app/*.py",
    "app/requirements.txt",
    "docs/*.md",
    "monitoring/alert-policies/*.json",
    "monitoring/dashboards/*.json",
    "monitoring/slos/*.json",
    "scripts/*.sh",
    "terraform/*.tf",
    "terraform/*.tf.json",
    "terraform/terraform.tfvars",
    "tests/*.yaml",
    "workload/*.yaml",
    "workload/openapi.json",
)
FLEET_PATHS: tuple[str, ...] = (
    "gke/*/setup.sh",
    "gke/*/terraform/main.tf",
    "gke/*/terraform/variables.tf",
    "gke/*/terraform/terraform.tfvars.json",
    "gke/*/terraform/alert_policies.tf.json",
    "gke/*/monitoring/dashboards/*.json",
)
# No path in a Git repository: nothing syncs the bundle from one (rlobs.targets.Target.REPO_PATH).
REPO_PATH: tuple[str, ...] | None = None
QUESTIONS: tuple[Question, ...] = (
    Question(("gke", "project"), "GCP project ID"),
    Question(("gke", "location"), "Region or zone of the GKE cluster"),
    Question(("gke", "cluster"), "GKE cluster name"),
    *WORKLOAD,
)
PLACEHOLDERS: dict[Path, str] = {("gke", "project"): "your own GCP project ID"}
BLUEPRINTS: dict[str, str] = {}  # its starter profiles are shipped in blueprints/


def profile_model() -> type[ProfileBase]:
    from rlobs.targets.gke.profile import GkeProfile

    return GkeProfile


def fleet_file() -> FleetTarget:
    from rlobs.targets.gke import fleetspec

    return fleetspec
