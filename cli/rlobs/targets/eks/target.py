"""The eks target: EKS with the AI on EKS (JARK) stack, its bundle delivered by Argo CD.

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

NAME = "eks"
# Every path this target's bundles can hold (`*` stays within one folder); the writer deletes nothing else.
PATHS: tuple[str, ...] = (
    "README.md",
    "app/*.py",
    "app/requirements.txt",
    "argocd/root-app.yaml",
    "argocd/apps/*.yaml",
    "docs/*.md",
    "rl-layer/*.yaml",
    "stack/*.yaml",
    "terraform/blueprint.tfvars",
    "tests/*.yaml",
    "values/*.yaml",
    "workload/*.yaml",
    "workload/openapi.json",
)
# Every path its part of a fleet bundle can hold (rlobs.targets.eks.fleet).
FLEET_PATHS: tuple[str, ...] = (
    "applicationsets/*.yaml",
    "terraform/*.tf.json",
    "values/common/*.yaml",
    "values/env/*/*.yaml",
    "values/clusters/*/*.yaml",
)
# What a user must answer; everything else keeps the blueprint's value (edit the file afterwards).
QUESTIONS: tuple[Question, ...] = (
    Question(("eks", "cluster", "name"), "EKS cluster name"),
    Question(("eks", "cluster", "region"), "AWS region"),
    *WORKLOAD,
    Question(("eks", "gitops", "repoUrl"), "Git repository Argo CD syncs the bundle from"),
)
PLACEHOLDERS: dict[Path, str] = {
    ("eks", "gitops", "repoUrl"): "your own GitOps repository (Argo CD syncs the bundle from it)",
}


def profile_model() -> type[ProfileBase]:
    from rlobs.targets.eks.profile import EksProfile

    return EksProfile


def schema_rules() -> Mapping[str, list[JsonSchema]]:
    from rlobs.targets.eks.schema import schema_rules as rules

    return rules()


def blueprints() -> Mapping[str, str]:
    return {}  # its starter profiles are shipped in blueprints/


def warnings(data: dict[str, Any]) -> Iterable[tuple[Path, str]]:
    from rlobs.targets.eks.warnings import warnings as found

    return found(data)


def fleet_file() -> FleetTarget:
    from rlobs.targets.eks import fleetspec

    return fleetspec


def fleet_part(fleet: Fleet, catalog: Catalog) -> FleetPart:
    from rlobs.targets.eks.fleet import fleet_part as part

    return part(fleet, catalog)


def pipeline(profile: Any) -> Pipeline:
    from rlobs.targets.eks.plan import pipeline as chosen

    return chosen(profile)


def facts(profile: Any, catalog: Catalog) -> RlFacts:
    from rlobs.targets.eks.plan import facts as found

    return found(profile, catalog)


def plan(profile: Any, catalog: Catalog) -> Plan:
    from rlobs.targets.eks.plan import plan as planned

    return planned(profile, catalog)
