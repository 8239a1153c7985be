"""The RL signal catalog: the one place metric, attribute and span names are defined (data/signals.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from rlobs.profile.yamlsource import load_yaml
from rlobs.resources import read_text

Kind = Literal["histogram", "counter", "gauge"]
Signal = Literal["latency", "traffic", "errors", "saturation"]
Scope = Literal["identity", "span", "metric"]


@dataclass(frozen=True, slots=True)
class Attribute:
    key: str  # how code refers to it, e.g. run_id
    name: str  # e.g. rl.run.id
    description: str
    scope: Scope  # identity: on every metric point and span; span: spans only


@dataclass(frozen=True, slots=True)
class Metric:
    key: str  # how code refers to it, e.g. loop_duration
    name: str  # the instrument name, dotted (see data/signals.yaml)
    kind: Kind
    unit: str  # UCUM, as the SDK is given it: ms, 1, {token}
    description: str
    signal: Signal
    buckets: tuple[float, ...] = ()  # explicit bucket boundaries, histograms only
    attributes: tuple[str, ...] = ()  # attribute names on each data point


@dataclass(frozen=True, slots=True)
class Span:
    key: str  # loop, sample, reward, train, sync
    name: str  # e.g. rl.sample
    description: str
    metric: str  # key of the duration histogram this span's phase records
    attributes: tuple[str, ...]  # span-scope attribute keys the phase accepts


@dataclass(frozen=True, slots=True)
class Catalog:
    attributes: tuple[Attribute, ...]
    metrics: tuple[Metric, ...]
    spans: tuple[Span, ...] = ()

    def metric(self, key: str) -> Metric:
        """A metric by key (loop_duration) or by full name."""
        for m in self.metrics:
            if key in (m.key, m.name):
                return m
        raise KeyError(f"no metric {key!r} in the signal catalog")

    def attribute(self, key: str) -> Attribute:
        for a in self.attributes:
            if key in (a.key, a.name):
                return a
        raise KeyError(f"no attribute {key!r} in the signal catalog")

    def span(self, key: str) -> Span:
        for s in self.spans:
            if key in (s.key, s.name):
                return s
        raise KeyError(f"no span {key!r} in the signal catalog")

    @property
    def identity(self) -> tuple[Attribute, ...]:
        """The attributes on every metric point and span."""
        return tuple(a for a in self.attributes if a.scope == "identity")


def parse_catalog(raw: dict[str, Any]) -> Catalog:
    attributes = tuple(Attribute(a["key"], a["name"], a["description"], a["scope"]) for a in raw["attributes"])
    identity = tuple(a.name for a in attributes if a.scope == "identity")
    by_key = {a.key: a for a in attributes}
    metrics = tuple(
        Metric(
            key=m["key"],
            name=m["name"],
            kind=m["kind"],
            unit=m["unit"],
            description=m["description"],
            signal=m["signal"],
            buckets=tuple(float(b) for b in m.get("buckets", ())),
            attributes=identity + tuple(by_key[k].name for k in m.get("extra_attributes", ())),
        )
        for m in raw["metrics"]
    )
    spans = tuple(
        Span(s["key"], s["name"], s["description"], s["metric"], tuple(s.get("attributes", ())))
        for s in raw.get("spans", ())
    )
    return Catalog(attributes, metrics, spans)


@cache
def load_catalog() -> Catalog:
    return parse_catalog(load_yaml(read_text("data", "signals.yaml")))
