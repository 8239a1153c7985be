"""The RL signal catalog: the one place metric, attribute and span names are defined (data/signals.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from rlobs.profile.yamlsource import load_yaml
from rlobs.resources import read_text

if TYPE_CHECKING:
    from rlobs.profile.model import ProfileBase

Kind = Literal["histogram", "counter", "gauge"]
Signal = Literal["latency", "traffic", "errors", "saturation"]
Scope = Literal["identity", "span", "metric"]


@dataclass(frozen=True, slots=True)
class Attribute:
    key: str  # how code refers to it, e.g. run_id
    name: str  # e.g. rl.run.id
    description: str
    scope: Scope  # identity: on every metric point and span; span: spans only
    values: tuple[str, ...] = ()  # metric scope: the fixed set of values it takes (rlobs plan counts them)
    droppable: bool = False  # workload.dropAttributes may drop it: no rendered query reads it


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


Value = Literal["last", "delta", "cumulative", "step"]
SourceUnit = Literal["s", "percent"]
Op = Literal["divide", "rate"]
# The conversion of a source unit into the catalog unit it may feed.
CONVERSIONS: dict[SourceUnit, tuple[str, float]] = {"s": ("ms", 1000.0), "percent": ("1", 0.01)}


@dataclass(frozen=True, slots=True)
class KeyMapping:
    key: str  # the framework's own key, e.g. timing_s/step
    metric: str  # catalog metric key
    phase: str  # which phase of the loop it measures
    value: Value = "last"
    unit: SourceUnit | None = None  # None: the catalog unit already
    note: str = ""

    @property
    def factor(self) -> float:
        return CONVERSIONS[self.unit][1] if self.unit else 1.0


@dataclass(frozen=True, slots=True)
class Derived:
    metric: str  # catalog metric key
    phase: str
    op: Op  # divide: sources[0] / sources[1] (seconds); rate: increase of sources[0] per wall-clock second
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Framework:
    name: str  # e.g. verl
    systems: tuple[str, ...]  # workload.run.system values that select it
    pinned: str  # the upstream revision the keys were read at
    sources: str  # where in that revision
    hook: str  # how the adapter attaches
    keys: tuple[KeyMapping, ...]
    derived: tuple[Derived, ...] = ()
    unmapped: tuple[tuple[str, str], ...] = ()  # (key, why it is not mapped)

    def coverage(self, metric: str) -> str:
        """mapped, derived or not available: how this framework supplies a catalog metric."""
        if any(k.metric == metric for k in self.keys):
            return "mapped"
        if any(d.metric == metric for d in self.derived) or metric in BY_THE_MODULE:
            return "derived"
        follows = FOLLOWS.get(metric)
        return "derived" if follows and self.coverage(follows[0]) != "not available" else "not available"


# What the app module records itself for every adapter-fed run: metric key -> how (docs/signals.md's mapping table;
# run_time's note names the framework's own timers, adapters.time_buckets).
BY_THE_MODULE = {
    "run_state": "2 from start-up, 1 from the first step, 3 in a pause (after train() returns), 0 finished, 4 failed",
    "state_since": "when the current run state began",
    "progress_time": "the time of the last step the hook reported",
    "step_interval": "p95 of the last 20 intervals between the steps the hook reported",
    "run_restarts": "TORCHELASTIC_RESTART_COUNT or RLOBS_RESTART_COUNT (the workload wiring)",
    "telemetry_dropped": "mapped values that are not finite scalars",
    "run_time": "",
    "run_gpus": "RL_NUM_GPUS or init(gpus=...) (the trainer's world size where the hook passes it)",
}
# What it derives from a mapped metric: metric key -> (the metric it follows, how). A NaN or infinite loss is
# counted, not set (loss_nonfinite in signals.yaml); a per-GPU rate is its total over the GPU count.
FOLLOWS = {
    "loss_nonfinite": ("train_loss", "each NaN or infinite loss the mapped loss key carries"),
    "tokens_rate_per_gpu": ("tokens_rate", "the total rate / RL_NUM_GPUS (or the trainer's world size)"),
    "samples_rate_per_gpu": ("samples_rate", "the total rate / RL_NUM_GPUS (or the trainer's world size)"),
}


@dataclass(frozen=True, slots=True)
class Catalog:
    attributes: tuple[Attribute, ...]
    metrics: tuple[Metric, ...]
    spans: tuple[Span, ...] = ()
    frameworks: tuple[Framework, ...] = ()

    def framework(self, system: str) -> Framework | None:
        """The framework a workload.run.system value (or a framework name) selects, if rlobs maps it."""
        wanted = system.lower()
        return next((f for f in self.frameworks if wanted == f.name or wanted in f.systems), None)

    def metric(self, key: str) -> Metric:
        """A metric by key (loop_duration) or by full name; attribute() and span() likewise."""
        return _find(self.metrics, key, "metric")

    def attribute(self, key: str) -> Attribute:
        return _find(self.attributes, key, "attribute")

    def span(self, key: str) -> Span:
        return _find(self.spans, key, "span")

    @property
    def identity(self) -> tuple[Attribute, ...]:
        return tuple(a for a in self.attributes if a.scope == "identity")


Entry = TypeVar("Entry", Attribute, Metric, Span)


def _find(entries: tuple[Entry, ...], key: str, what: str) -> Entry:
    for e in entries:
        if key in (e.key, e.name):
            return e
    raise KeyError(f"no {what} {key!r} in the signal catalog")


def parse_catalog(raw: dict[str, Any]) -> Catalog:
    attributes = tuple(
        Attribute(
            a["key"], a["name"], a["description"], a["scope"], tuple(a.get("values", ())), a.get("droppable", False)
        )
        for a in raw["attributes"]
    )
    identity = tuple(a.name for a in attributes if a.scope == "identity")
    by_key = {a.key: a for a in attributes}
    metrics = tuple(
        Metric(
            **{k: m[k] for k in ("key", "name", "kind", "unit", "description", "signal")},
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


def parse_frameworks(raw: dict[str, Any], catalog: Catalog) -> tuple[Framework, ...]:
    """The framework mappings; one that could feed seconds into ms or a running total into a counter is refused here."""
    phases = tuple(raw["phases"])
    out = []
    for f in raw["frameworks"]:
        keys = tuple(KeyMapping(**k) for k in f["keys"])
        derived = tuple(Derived(d["metric"], d["phase"], d["op"], tuple(d["from"])) for d in f.get("derived", ()))
        sources: tuple[KeyMapping | Derived, ...] = (*keys, *derived)
        for source in sources:
            if source.phase not in phases:
                raise ValueError(f"{f['name']}: {source.metric}: unknown phase {source.phase!r}")
        for k in keys:
            _check_key(f["name"], k, catalog.metric(k.metric))
        metrics = [source.metric for source in sources]
        if len(set(metrics)) != len(metrics):
            raise ValueError(f"{f['name']}: expected one source per catalog metric")
        for d in derived:
            if catalog.metric(d.metric).kind != "gauge":
                raise ValueError(f"{f['name']}: derived {d.metric}: expected a gauge (a rate)")
        out.append(
            Framework(
                f["name"],
                tuple(f["systems"]),
                f["pinned"],
                " ".join(f["sources"].split()),
                " ".join(f["hook"].split()),
                keys,
                derived,
                tuple(f.get("unmapped", {}).items()),
            )
        )
    return tuple(out)


def _check_key(framework: str, k: KeyMapping, metric: Metric) -> None:
    where = f"{framework}: {k.key}"
    counting = k.value in ("delta", "cumulative", "step")
    if counting != (metric.kind == "counter"):
        raise ValueError(f"{where}: value {k.value!r} cannot feed the {metric.kind} {metric.name}")
    if k.unit is not None and CONVERSIONS[k.unit][0] != metric.unit:
        raise ValueError(f"{where}: unit {k.unit!r} does not convert into {metric.unit!r} ({metric.name})")
    if metric.unit == "ms" and k.unit is None:
        raise ValueError(f"{where}: {metric.name} is in ms: say the key's unit (s or ms)")


def for_profile(catalog: Catalog, profile: ProfileBase) -> Catalog:
    bounds, w = profile.workload.histogram_buckets, profile.workload
    dropped = {catalog.attribute(k).name for k in w.drop_attributes}
    if bounds is None and not dropped:
        return catalog
    metrics = tuple(
        replace(
            m,
            buckets=tuple(bounds) if bounds is not None and m.kind == "histogram" else m.buckets,
            attributes=tuple(a for a in m.attributes if a not in dropped),
        )
        for m in catalog.metrics
    )
    return replace(catalog, metrics=metrics)


@cache
def load_catalog() -> Catalog:
    catalog = parse_catalog(load_yaml(read_text("data", "signals.yaml")))
    frameworks = parse_frameworks(load_yaml(read_text("data", "frameworks.yaml")), catalog)
    return replace(catalog, frameworks=frameworks)
