"""Rollout-engine metric names per engine and path (data/engines.yaml): the one place a `vllm:*` name is written."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from rlobs.profile.yamlsource import load_yaml
from rlobs.resources import read_text

EngineKind = Literal["gauge", "counter", "histogram"]
# What the Ray path does to a name: ray.util.metrics accepts [a-zA-Z0-9_] only (vllm/v1/metrics/ray_wrappers.py).
_RAY_UNSAFE = re.compile(r"[^a-zA-Z0-9_]")


@dataclass(frozen=True, slots=True)
class EngineMetric:
    role: str  # what a panel asks for, e.g. kv_cache_usage
    name: str  # as the engine's own /metrics spells it
    kind: EngineKind
    reason_label: str | None = None  # the label that splits finished requests by reason, if the engine has one


@dataclass(frozen=True, slots=True)
class Engine:
    key: str  # vllm, sglang (workload.rollout.engine)
    title: str
    pinned: str  # owner/repo@commit the names were read at
    source: str
    model_label: str
    paths: tuple[str, ...]  # the workload.rollout.metrics values the engine can produce
    default_port: int
    roles: tuple[EngineMetric, ...]
    retired: tuple[tuple[str, str], ...]  # names the engine no longer exports -> why

    def role(self, role: str) -> EngineMetric | None:
        return next((m for m in self.roles if m.role == role), None)


@dataclass(frozen=True, slots=True)
class Engines:
    engines: tuple[Engine, ...]
    ray_prefix: str

    def engine(self, key: str) -> Engine:
        for e in self.engines:
            if e.key == key:
                return e
        raise KeyError(f"no rollout engine {key!r} in data/engines.yaml")

    def name(self, metric: EngineMetric, path: str) -> str:
        if path == "ray":
            return self.ray_prefix + _RAY_UNSAFE.sub("_", metric.name)
        return metric.name

    def names(self, key: str, path: str) -> frozenset[str]:
        return frozenset(self.name(m, path) for m in self.engine(key).roles)


def parse_engines(raw: dict[str, Any]) -> Engines:
    paths = set(raw["paths"])
    engines = []
    for key, e in raw["engines"].items():
        roles = tuple(EngineMetric(role, m["name"], m["kind"], m.get("reason_label")) for role, m in e["roles"].items())
        unknown = set(e["paths"]) - paths
        if unknown:
            raise ValueError(f"{key}: unknown metric paths {sorted(unknown)}")
        engines.append(
            Engine(
                key,
                e["title"],
                e["pinned"],
                " ".join(e["source"].split()),
                e["model_label"],
                tuple(e["paths"]),
                int(e["default_port"]),
                roles,
                tuple((e.get("retired") or {}).items()),
            )
        )
    return Engines(tuple(engines), raw["paths"]["ray"]["prefix"])


@cache
def load_engines() -> Engines:
    return parse_engines(load_yaml(read_text("data", "engines.yaml")))
