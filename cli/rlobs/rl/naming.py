"""How a catalog metric is named in each backend: the one module every generated query goes through."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Literal, get_args

from rlobs.rl.catalog import Metric

# gke-telemetry-api: managed OTel on GKE -> Telemetry API; names and labels keep their dots, PromQL quotes them
#   (Google's RL dashboard queries prometheus.googleapis.com/<dotted name>/histogram; gke-managed-otel.md §2.2).
# otel-collector: an OpenTelemetry Collector's Prometheus exporter or Prometheus' own OTLP receiver with suffixes:
#   underscores, unit suffixes, `_total` on counters, `_ratio` on unit-1 gauges (prometheus/otlptranslator).
# python-prometheus: the OpenTelemetry Python Prometheus exporter scraped directly: like the collector but unit `1`
#   maps to "" (no `_ratio`; opentelemetry-exporter-prometheus _mapping.py, spec issue #4058).
# gke-gmp-collector: a self-run collector with the googlemanagedprometheus exporter (collector naming,
#   add_metric_suffixes default true: opentelemetry-operations-go exporter/collector/googlemanagedprometheus).
Pipeline = Literal["gke-telemetry-api", "gke-gmp-collector", "otel-collector", "python-prometheus"]
PIPELINES: tuple[Pipeline, ...] = get_args(Pipeline)
Part = Literal["", "bucket", "sum", "count"]

# UCUM unit -> Prometheus suffix word (prometheus/otlptranslator unit.go; the same table is copied into
# opentelemetry-exporter-prometheus _mapping.py _UNIT_MAPPINGS).
_UNITS = {
    "d": "days",
    "h": "hours",
    "min": "minutes",
    "s": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "ns": "nanoseconds",
    "By": "bytes",
    "KiBy": "kibibytes",
    "MiBy": "mebibytes",
    "GiBy": "gibibytes",
    "TiBy": "tibibytes",
    "KBy": "kilobytes",
    "MBy": "megabytes",
    "GBy": "gigabytes",
    "TBy": "terabytes",
    "m": "meters",
    "V": "volts",
    "A": "amperes",
    "J": "joules",
    "W": "watts",
    "g": "grams",
    "Cel": "celsius",
    "Hz": "hertz",
    "%": "percent",
}
_PER_UNITS = {"s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week", "mo": "month", "y": "year"}
_ANNOTATION = re.compile(r"\{[^}]*\}")
_INVALID = re.compile(r"[^a-zA-Z0-9:]+")
_INVALID_LABEL = re.compile(r"[^a-zA-Z0-9]+")
_PROM_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def dotted(pipeline: Pipeline) -> bool:
    return pipeline == "gke-telemetry-api"


def unit_suffix(unit: str, kind: str, pipeline: Pipeline) -> str:
    unit = _ANNOTATION.sub("", unit)
    if unit == "1":
        # Collectors name unit-1 gauges *_ratio; the Python exporter maps "1" to "" (its TODO on spec #4058).
        return "ratio" if kind == "gauge" and pipeline != "python-prometheus" else ""
    if unit in _UNITS:
        return _UNITS[unit]
    top, sep, bottom = unit.partition("/")
    if sep and bottom:
        top_word = _UNITS.get(top, _INVALID.sub("_", top).strip("_"))
        per = _PER_UNITS.get(bottom, _INVALID.sub("_", bottom).strip("_"))
        return f"{top_word}_per_{per}" if top_word else f"per_{per}"
    return _INVALID.sub("_", unit).strip("_")


def family(metric: Metric, pipeline: Pipeline) -> str:
    """The metric family name: what Prometheus TYPE/HELP lines and Cloud Monitoring metric types use."""
    if dotted(pipeline):
        return metric.name
    name = _INVALID.sub("_", metric.name).strip("_")
    suffix = unit_suffix(metric.unit, metric.kind, pipeline)
    # Both translators append the unit unless the name already ends with it (prometheus_client Metric.__init__).
    if suffix and not name.endswith("_" + suffix):
        name += "_" + suffix
    if metric.kind == "counter":
        name = name.removesuffix("_total") + "_total"
    return name


def series(metric: Metric, pipeline: Pipeline, part: Part = "") -> str:
    if metric.kind == "histogram" and not part:
        raise ValueError(f"{metric.name} is a histogram: expected a part (bucket, sum or count)")
    if metric.kind != "histogram" and part:
        raise ValueError(f"{metric.name} is a {metric.kind}: expected no part, got {part!r}")
    name = family(metric, pipeline)
    return f"{name}_{part}" if part else name


def label(attribute: str, pipeline: Pipeline) -> str:
    if dotted(pipeline):
        return attribute
    key = "_" + attribute[1:] if attribute[:1].isdigit() else attribute
    return _INVALID_LABEL.sub("_", key)


def quote(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def labelled(name: str, labels: Mapping[str, str]) -> str:
    """`name{label="value", ...}` of stored label names, sorted: a selector, and promtool's input series notation."""
    return name + "{" + ", ".join(f"{k}={quote(v)}" for k, v in sorted(labels.items())) + "}"


def _name_token(name: str) -> str:
    return name if _PROM_NAME.fullmatch(name) else quote(name)


def selector(
    metric: Metric,
    pipeline: Pipeline,
    part: Part = "",
    matchers: Mapping[str, str] | None = None,
    *,
    regex: Mapping[str, str] | None = None,
    raw: Iterable[str] = (),
) -> str:
    """Matcher keys are catalog attribute names (rl.run.id); `raw` is matcher text inserted verbatim (`${Var}`)."""
    name = series(metric, pipeline, part)
    parts = [f"{_name_token(label(k, pipeline))}={quote(v)}" for k, v in sorted((matchers or {}).items())]
    parts += [f"{_name_token(label(k, pipeline))}=~{quote(v)}" for k, v in sorted((regex or {}).items())]
    parts += list(raw)
    if _PROM_NAME.fullmatch(name):
        return name + ("{" + ", ".join(parts) + "}" if parts else "")
    return "{" + ", ".join([quote(name), *parts]) + "}"


def label_token(attribute: str, pipeline: Pipeline) -> str:
    return _name_token(label(attribute, pipeline))


def monitoring_type(metric: Metric, pipeline: Pipeline) -> str:
    return f"prometheus.googleapis.com/{family(metric, pipeline)}/{metric.kind}"
