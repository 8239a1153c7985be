"""The gke target: GKE with Managed OpenTelemetry and Cloud Monitoring.

This module is the Target (rlobs.targets.Target): light to import, each function importing the part of the package
it needs when called; its names stay apart from the package's module names, which the package's attributes are."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlobs.profile.question import WORKLOAD, Question

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from rlobs.bundle.fleetpart import FleetPart
    from rlobs.bundle.spec import Plan
    from rlobs.profile.fleet import Fleet
    from rlobs.profile.fleetspec import FleetTarget
    from rlobs.profile.model import ProfileBase
    from rlobs.profile.schema import JsonSchema
    from rlobs.profile.yamlsource import Path
    from rlobs.rl.catalog import Catalog
    from rlobs.rl.facts import RlFacts
    from rlobs.rl.naming import Pipeline

NAME = "gke"
# Every path this target's bundles can hold (`*` stays within one folder); the writer deletes nothing else.
PATHS: tuple[str, ...] = (
    "README.md",
    "app/*.py",
    "app/requirements.txt",
    "docs/*.md",
    "monitoring/alert-policies/*.json",
    "monitoring/dashboards/*.json",
    "scripts/*.sh",
    "terraform/*.tf",
    "terraform/*.tf.json",
    "terraform/terraform.tfvars",
    "tests/*.yaml",
    "workload/*.yaml",
    "workload/openapi.json",
)
# Every path its part of a fleet bundle can hold (rlobs.targets.gke.fleet).
FLEET_PATHS: tuple[str, ...] = (
    "gke/*/setup.sh",
    "gke/*/terraform/main.tf",
    "gke/*/terraform/variables.tf",
    "gke/*/terraform/terraform.tfvars.json",
    "gke/*/terraform/alert_policies.tf.json",
    "gke/*/monitoring/dashboards/*.json",
)
# What a user must answer; everything else keeps the blueprint's value (edit the file afterwards).
QUESTIONS: tuple[Question, ...] = (
    Question(("gke", "project"), "GCP project ID"),
    Question(("gke", "cluster"), "GKE cluster name"),
    *WORKLOAD,
)
PLACEHOLDERS: dict[Path, str] = {("gke", "project"): "your own GCP project ID"}


def profile_model() -> type[ProfileBase]:
    from rlobs.targets.gke.profile import GkeProfile

    return GkeProfile


def schema_rules() -> Mapping[str, list[JsonSchema]]:
    from rlobs.targets.gke.schema import schema_rules as rules

    return rules()


def blueprints() -> Mapping[str, str]:
    return {}  # its starter profiles are shipped in blueprints/


def warnings(data: dict[str, Any]) -> Iterable[tuple[Path, str]]:
    from rlobs.targets.gke.warnings import warnings as found

    return found(data)


def fleet_file() -> FleetTarget:
    from rlobs.targets.gke import fleetspec

    return fleetspec


def fleet_part(fleet: Fleet, catalog: Catalog) -> FleetPart:
    from rlobs.targets.gke.fleet import fleet_part as part

    return part(fleet, catalog)


def pipeline(profile: Any) -> Pipeline:
    from rlobs.targets.gke.plan import pipeline as chosen

    return chosen(profile)


def facts(profile: Any, catalog: Catalog) -> RlFacts:
    from rlobs.targets.gke.plan import facts as found

    return found(profile, catalog)


def plan(profile: Any, catalog: Catalog) -> Plan:
    from rlobs.targets.gke.plan import plan as planned

    return planned(profile, catalog)
