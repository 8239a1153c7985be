"""The toy target (rlobs.targets.Target): a bundle of one ConfigMap and one PrometheusRule, built as data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rlobs.bundle.fleetpart import FleetPart
from rlobs.bundle.spec import DataFile, Plan
from rlobs.profile.fleet import Fleet
from rlobs.profile.fleetspec import FleetTarget
from rlobs.profile.model import ProfileBase
from rlobs.profile.question import WORKLOAD, Question
from rlobs.profile.schema import JsonSchema
from rlobs.profile.yamlsource import Path, get_at
from rlobs.rl.catalog import Catalog
from rlobs.rl.facts import RlFacts, rl_facts
from rlobs.rl.naming import Pipeline
from rlobs.rl.promrules import rule_groups

NAME = "toy"
PATHS: tuple[str, ...] = ("toy/*.yaml",)
FLEET_PATHS: tuple[str, ...] = ()
QUESTIONS: tuple[Question, ...] = (Question(("toy", "cluster"), "Toy cluster name"), *WORKLOAD)
PLACEHOLDERS: dict[Path, str] = {("toy", "owner"): "your own team"}
REPO_PATH: tuple[str, ...] | None = None  # a toy bundle is synced from no Git repository
BLUEPRINT = """\
apiVersion: rlobs/v1alpha1
kind: Profile
metadata:
  name: toy-demo
  description: The toy target's starter profile
target: toy
workload:
  name: trainer
  namespace: rl
  kind: Deployment
  container: trainer
  run:
    system: verl
    algorithm: grpo
    environment: gsm8k
    model: Qwen2.5-7B-Instruct
toy:
  cluster: toy-cluster   # change to your toy cluster
  owner: my-team         # change to your team
"""
BLUEPRINTS: dict[str, str] = {"toy-demo": BLUEPRINT}


def profile_model() -> type[ProfileBase]:
    from testing.toytarget.profile import ToyProfile

    return ToyProfile


def schema_rules() -> Mapping[str, list[JsonSchema]]:
    from testing.toytarget.profile import SCRAPE_INTERVALS

    # ToySpec._scrape_interval, as JSON Schema.
    return {"ToySpec": [{"properties": {"scrapeInterval": {"enum": list(SCRAPE_INTERVALS)}}}]}


def warnings(data: dict[str, Any]) -> Iterable[tuple[Path, str]]:
    if get_at(data, ("toy", "rack")) is None:
        yield ("toy", "cluster"), "expected a rack (toy.rack), got none: the toy's alerts will not say where it is"


def fleet_file() -> FleetTarget:
    from testing.toytarget import fleetspec

    return fleetspec


def fleet_part(fleet: Fleet, catalog: Catalog) -> FleetPart:
    del fleet, catalog
    return FleetPart()


def pipeline(profile: Any) -> Pipeline:
    del profile
    return "otel-collector"


def facts(profile: Any, catalog: Catalog) -> RlFacts:
    return rl_facts(profile, catalog, pipeline(profile), cluster=profile.toy.cluster)


def plan(profile: Any, catalog: Catalog) -> Plan:
    rl = facts(profile, catalog)
    name = f"rlobs-{profile.metadata.name}"
    meta = {"name": name, "namespace": profile.workload.namespace, "labels": {"team": profile.toy.owner}}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"cluster": profile.toy.cluster}}
    rules = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": meta,
        "spec": {"groups": rule_groups(rl)},
    }
    return Plan(
        profile.metadata.name,
        (
            DataFile("toy/config.yaml", "yaml", config, "The toy's settings."),
            DataFile("toy/rules.yaml", "yaml", rules, "The RL alerts as a PrometheusRule."),
        ),
    )
