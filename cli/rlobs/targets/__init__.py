"""The target registry: profile `target` -> the package that plans its bundle.

A target is a package under targets/ whose `plan` module has the Target shape; adding one means its package, its
profile type in the profile's union (rlobs.profile.profiles.Profile) and the loader's registry
(rlobs.profile.load PROFILES), its blueprint and templates, and its line here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from rlobs.bundle.spec import Plan
    from rlobs.rl.catalog import Catalog
    from rlobs.rl.facts import RlFacts
    from rlobs.rl.naming import Pipeline
    from rlobs.targets.eks import plan as eks
    from rlobs.targets.gke import plan as gke


class Target(Protocol):
    """What the generic stages need of a target: its name, how its metrics are named, and its bundle plan."""

    NAME: str
    PATHS: tuple[str, ...]  # every bundle path it can produce, as patterns (`*`: any name within one folder)

    def pipeline(self, profile: Any) -> Pipeline:
        """The metric pipeline the profile's bundle queries through (rlobs.rl.naming)."""
        ...

    def facts(self, profile: Any, catalog: Catalog) -> RlFacts:
        """The RL facts of the profile's bundle: pipeline, alerts, where alerts link the runbook."""
        ...

    def plan(self, profile: Any, catalog: Catalog) -> Plan:
        """Every file of the bundle, as data."""
        ...


# Each target's package; its `plan` module is the Target, its `paths` module the PATHS alone (light to import).
_PACKAGES = {"eks": "rlobs.targets.eks", "gke": "rlobs.targets.gke"}


class _Registry(Mapping[str, Target]):
    """Target name -> its plan module, imported when first asked for: a render imports only its own target."""

    def __getitem__(self, name: str) -> Target:
        return cast("Target", import_module(_PACKAGES[name] + ".plan"))

    def __iter__(self) -> Iterator[str]:
        return iter(_PACKAGES)

    def __len__(self) -> int:
        return len(_PACKAGES)


TARGETS: Mapping[str, Target] = _Registry()
if TYPE_CHECKING:  # each plan module has the Target shape
    _TYPED: tuple[Target, ...] = (eks, gke)


@cache
def _paths() -> re.Pattern[str]:
    def one(pattern: str) -> str:
        return "[^/]+".join(re.escape(piece) for piece in pattern.split("*"))

    every = (p for package in _PACKAGES.values() for p in import_module(package + ".paths").PATHS)
    return re.compile("|".join(one(p) for p in every))


def producible(path: str) -> bool:
    """Could any target produce this bundle path? (The writer's rule, rlobs.fleet.paths, adds a fleet's paths.)"""
    return _paths().fullmatch(path) is not None
