"""The RL signal catalog: the one place metric and attribute names are defined (data/signals.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import yaml

from rlobs.resources import read_text

Kind = Literal["histogram", "counter", "gauge"]
Signal = Literal["latency", "traffic", "errors", "saturation"]


@dataclass(frozen=True, slots=True)
class Attribute:
    name: str  # e.g. rl.run.id
    description: str
    scope: Literal["identity", "span"]  # identity: on every metric point and span; span: spans only


@dataclass(frozen=True, slots=True)
class Metric:
    name: str  # e.g. rl.loop.duration
    kind: Kind
    unit: str  # UCUM, as the SDK is given it: ms, 1, {token}
    description: str
    signal: Signal
    buckets: tuple[float, ...] = ()  # explicit bucket boundaries, histograms only
    attributes: tuple[str, ...] = ()  # attribute names on each data point


@dataclass(frozen=True, slots=True)
class Catalog:
    attributes: tuple[Attribute, ...]
    metrics: tuple[Metric, ...]

    def metric(self, name: str) -> Metric:
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(f"no metric {name!r} in the signal catalog")


def load_catalog() -> Catalog:
    raw = yaml.safe_load(read_text("data", "signals.yaml"))
    attributes = tuple(Attribute(a["name"], a["description"], a["scope"]) for a in raw["attributes"])
    identity = tuple(a.name for a in attributes if a.scope == "identity")
    metrics = tuple(
        Metric(
            name=m["name"],
            kind=m["kind"],
            unit=m["unit"],
            description=m["description"],
            signal=m["signal"],
            buckets=tuple(float(b) for b in m.get("buckets", ())),
            attributes=identity + tuple(m.get("extra_attributes", ())),
        )
        for m in raw["metrics"]
    )
    return Catalog(attributes, metrics)
