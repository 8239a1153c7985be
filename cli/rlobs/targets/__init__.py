"""The target registry: profile `target` -> the package that owns that target, imported only when it is used."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeVar, Union, cast

if TYPE_CHECKING:
    from pathlib import Path as FsPath

    from rlobs.bundle.fleetpart import FleetPart
    from rlobs.bundle.spec import Plan
    from rlobs.errors import Problem
    from rlobs.profile.fleet import Fleet
    from rlobs.profile.fleetspec import FleetTarget
    from rlobs.profile.model import ProfileBase
    from rlobs.profile.question import Question
    from rlobs.profile.schema import JsonSchema
    from rlobs.profile.yamlsource import Located, Path
    from rlobs.rl.catalog import Catalog
    from rlobs.rl.facts import RlFacts
    from rlobs.rl.naming import Pipeline
    from rlobs.rl.volume import Volume

T = TypeVar("T")

# Each target's package; its `target` module is the Target, which must stay light to import (constants, the
# functions it defines elsewhere in DEFERRED's modules): the writer asks every target's PATHS.
PACKAGES: dict[str, str] = {
    "eks": "rlobs.targets.eks",
    "gke": "rlobs.targets.gke",
}


class Target(Protocol):
    NAME: str
    PATHS: tuple[str, ...]  # every path its bundles hold, as patterns (`*`: one folder's names): all the writer deletes
    FLEET_PATHS: tuple[str, ...]  # every path its part of a fleet bundle can hold (fleet_part), as patterns
    QUESTIONS: tuple[Question, ...]  # what `init` asks, in order (and question.WORKLOAD); the rest: the blueprint's
    PLACEHOLDERS: dict[Path, str]  # keys whose blueprint value stands for the user's own -> what that is
    REPO_PATH: tuple[str, ...] | None  # the key of the bundle's path in the Git repository it is synced from, if any
    BLUEPRINTS: dict[str, str]  # starter profiles beyond the shipped blueprints/ folder: name -> the profile's text

    def profile_model(self) -> type[ProfileBase]:
        """Its profile class: the keys every profile has, `target: Literal[NAME]` and its section."""

    def schema_rules(self) -> Mapping[str, list[JsonSchema]]:
        """Its cross-field rules as JSON Schema: $defs name -> rules added to that definition's allOf."""

    def warnings(self, data: dict[str, Any]) -> Iterable[tuple[Path, str]]:
        """What a valid profile of it is warned about besides placeholders."""

    def fleet_file(self) -> FleetTarget: ...

    def fleet_part(self, fleet: Fleet, catalog: Catalog) -> FleetPart:
        """What it adds to a fleet bundle beside its clusters' own bundles (called with no cluster of it, too)."""

    def pipeline(self, profile: Any) -> Pipeline: ...

    def facts(self, profile: Any, catalog: Catalog) -> RlFacts: ...

    def plan(self, profile: Any, catalog: Catalog) -> Plan: ...

    def volume(self, profile: Any, catalog: Catalog) -> Volume: ...


# Target function -> the module defining it when a target's `target` module does not (imported when first asked for).
DEFERRED = {
    "schema_rules": "schema",
    "warnings": "warnings",
    "fleet_part": "fleet",
    "pipeline": "volume",
    "facts": "plan",
    "plan": "plan",
    "volume": "volume",
}


class _Deferred:
    def __init__(self, module: ModuleType) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        if name not in DEFERRED or hasattr(self._module, name):
            return getattr(self._module, name)
        return getattr(import_module(f"{self._module.__package__}.{DEFERRED[name]}"), name)


class _ByName(Mapping[str, T]):
    """Target name -> what `find` makes of it, when first asked for (the target's package imported only then)."""

    def __init__(self, find: Callable[[str], T]) -> None:
        self._find = find

    def __getitem__(self, name: str) -> T:
        return self._find(name)

    def __iter__(self) -> Iterator[str]:
        return iter(PACKAGES)

    def __len__(self) -> int:
        return len(PACKAGES)


TARGETS: Mapping[str, Target] = _ByName(
    lambda name: cast("Target", _Deferred(import_module(f"{PACKAGES[name]}.target")))
)
PROFILES: Mapping[str, type[ProfileBase]] = _ByName(lambda name: TARGETS[name].profile_model())


def profile_union() -> Any:
    from pydantic import Field

    models = tuple(PROFILES[name] for name in PACKAGES)
    return Annotated[Union[models], Field(discriminator="target")]  # noqa: UP007 (a union built at run time)


def schema_rules() -> dict[str, list[JsonSchema]]:
    return {name: rules for t in TARGETS.values() for name, rules in t.schema_rules().items()}


def fleet_files() -> dict[str, FleetTarget]:
    return {name: t.fleet_file() for name, t in TARGETS.items()}


def parse_profile(text: str, display: str = "<profile>") -> ProfileBase:
    from rlobs.profile.load import parse_profile as parse

    return parse(text, PROFILES, display)


def load_profile(path: FsPath) -> ProfileBase:
    from rlobs.profile.load import load_profile as load

    return load(path, PROFILES)


def load_source(path: FsPath) -> tuple[bytes, ProfileBase]:
    """The profile's bytes exactly as read, and the profile parsed from those same bytes."""
    from rlobs.profile.load import load_source as load

    return load(path, PROFILES)


def blueprint_texts() -> dict[str, str]:
    return {name: text for t in TARGETS.values() for name, text in t.BLUEPRINTS.items()}


def placeholders(names: tuple[str, ...] | None = None) -> dict[str, str]:
    """placeholder text -> what the user's own value is, for the fleet's and the `names` targets' keys (None: all)."""
    return _placeholders(tuple(PACKAGES.items()), tuple(PACKAGES) if names is None else names)


@cache
def _placeholders(_packages: tuple[tuple[str, str], ...], names: tuple[str, ...]) -> dict[str, str]:
    from rlobs.profile.warnings import FLEET_PLACEHOLDERS, placeholders, shipped_blueprints

    keys = {**FLEET_PLACEHOLDERS}
    texts = shipped_blueprints()
    for name in names:
        keys.update(TARGETS[name].PLACEHOLDERS)
        texts += TARGETS[name].BLUEPRINTS.values()
    return placeholders(keys, texts)


def warnings(located: Located, display: str) -> list[Problem]:
    """Every warning for one parsed profile (or fleet file), in file order (rlobs.profile.warnings)."""
    from rlobs.profile.warnings import find

    # The placeholders it is checked for: its target's (a render imports no other target), or for a file of no
    # registered target (a fleet's), every target's.
    target = located.data.get("target") if isinstance(located.data, dict) else None
    known = placeholders((target,) if isinstance(target, str) and target in PACKAGES else None)
    return find(located, display, known, _warners())


def load_warnings(path: FsPath) -> list[Problem]:
    """The warnings for the profile file at `path`; none when it does not even parse (loading reports that)."""
    from rlobs.profile.source import read_source
    from rlobs.profile.yamlsource import YamlSyntaxError, load_located

    try:
        located = load_located(read_source(path).decode("utf-8"))
    except (OSError, ValueError, YamlSyntaxError):
        return []
    return warnings(located, str(path))


def _warners() -> dict[str, Any]:
    return {
        name: (lambda data, name=name: [*TARGETS[name].warnings(data), *_over_budget(name, data)]) for name in PACKAGES
    }


def _over_budget(name: str, data: dict[str, Any]) -> list[tuple[Path, str]]:
    """plan.budget's keys the plan is above; none for a profile that does not validate (loading reports that)."""
    plan = data.get("plan")
    if not isinstance(plan, dict) or not plan.get("budget"):
        return []
    from pydantic import ValidationError

    from rlobs.rl.catalog import for_profile, load_catalog
    from rlobs.rl.volume import planned

    try:
        profile = PROFILES[name].model_validate(data)
    except (ValidationError, ValueError):
        return []
    return list(planned(profile, for_profile(load_catalog(), profile), TARGETS[name].volume).over)


@cache
def _paths(packages: tuple[tuple[str, str], ...], fleet: tuple[str, ...] | None) -> re.Pattern[str]:
    def one(pattern: str) -> str:
        return "[^/]+".join(re.escape(piece) for piece in pattern.split("*"))

    if fleet is None:
        every = [p for name, _ in packages for p in TARGETS[name].PATHS]
    else:
        every = [*fleet, *(p for name, _ in packages for p in TARGETS[name].FLEET_PATHS)]
    return re.compile("|".join(one(p) for p in every))


def producible(path: str) -> bool:
    """Could any target produce this bundle path? (The writer's rule, rlobs.fleet.paths, adds a fleet's paths.)"""
    return _paths(tuple(PACKAGES.items()), None).fullmatch(path) is not None


def fleet_producible(path: str, own: tuple[str, ...]) -> bool:
    """Could a fleet bundle hold this path of its own (`own`: the fleet's patterns) or of a target's part?"""
    return _paths(tuple(PACKAGES.items()), own).fullmatch(path) is not None
