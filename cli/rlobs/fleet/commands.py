"""What `render`, `validate` and `init --fleet` do with a fleet file, checked against every registered target."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlobs.bundle import appsets
from rlobs.bundle.check import Checker
from rlobs.bundle.filters import to_yaml
from rlobs.bundle.owner import Owner
from rlobs.bundle.request import RenderRequest
from rlobs.bundle.write import Changes
from rlobs.errors import RlobsError
from rlobs.fleet import preview
from rlobs.fleet.paths import producible
from rlobs.fleet.plan import FleetBuild, build_fleet
from rlobs.profile import fleet as fleets
from rlobs.profile.fleet import Fleet
from rlobs.profile.fleetspec import fleet_model
from rlobs.targets import PROFILES, fleet_files

EXAMPLE = "rl-fleet.yaml"


def load_fleet(path: Path, out: Path | None = None) -> Fleet:
    return fleets.load_fleet(path, fleets.Targets(fleet_files(), PROFILES), out)


def parse_fleet(text: str, display: str = "<fleet>") -> Fleet:
    return fleets.parse_fleet(text, fleets.Targets(fleet_files(), PROFILES), display)


def build(path: Path, out: Path | None = None) -> tuple[Fleet, FleetBuild]:
    fleet = load_fleet(path, out)
    checker = Checker()
    built = build_fleet(fleet, checker)
    checker.check(built.files)
    return fleet, built


def render(path: Path, request: RenderRequest) -> tuple[str, Changes]:
    """By the same writer and rules as a profile's bundle; the folder's owner is the fleet, by name."""
    if request.out.exists() and not request.out.is_dir():
        raise RlobsError(f"{request.out}: expected a directory, got a file")
    fleet, built = build(path, request.out)
    return fleet.name, request.render_into(built.files, producible, owner=Owner("fleet", fleet.name))


def validate(path: Path, cluster_secrets: Path | None = None) -> str:
    """With `cluster_secrets` (the hub's cluster Secrets' metadata as YAML), also checks what ApplicationSets read."""
    fleet, built = build(path)
    if cluster_secrets is not None:
        live = appsets.live_metadata(_documents(cluster_secrets))
        problems = appsets.live_problems(built.appsets, built.selected, live, built.rules)
        if problems:
            raise RlobsError(
                f"{cluster_secrets}: the cluster Secrets do not fit the fleet:\n  " + "\n  ".join(problems)
            )
    return fleet.name


def _documents(path: Path) -> list[Any]:
    import yaml

    from rlobs.files import MIB, read_capped

    try:
        # A hub's Secrets' metadata: a few hundred bytes per cluster.
        return list(yaml.safe_load_all(read_capped(path, 8 * MIB).decode("utf-8")))
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise RlobsError(
            f"{path}: expected the cluster Secrets' metadata as YAML (see the fleet README), got {exc}"
        ) from None


def pairs(built: FleetBuild) -> list[preview.Pair]:
    return [
        preview.Pair(path, cluster, appset["spec"]["template"], preview.params(built.contracts[cluster]))
        for path, appset in built.appsets.items()
        for cluster in built.selected[path]
    ]


def preview_text(path: Path) -> str:
    """The Applications every ApplicationSet creates for every cluster, as one YAML stream."""
    _, built = build(path)
    found = pairs(built)
    return "".join(
        f"---\n# {pair.appset} for cluster {pair.cluster}\n{to_yaml(app)}"
        for pair, app in zip(found, preview.expand(found), strict=True)
    )


SCHEMA_FILE = "rlobs-fleet.schema.json"


def schema_text() -> str:
    """The fleet file's JSON Schema; `defaults` and `overrides` are profile bodies, validated as profiles."""
    from rlobs.profile.schema import document

    return document(fleet_model(fleet_files()).spec.model_json_schema(by_alias=True), "fleet")
