"""How a catalog metric is named in each backend: the one function every generated query goes through.

STUB: the signal-catalog work replaces this with the full rules (unit suffixes, _total, quoting).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from rlobs.catalog import Metric

# gke-telemetry-api: managed OTel on GKE -> Telemetry API; names and labels keep their dots.
# otel-collector: an OpenTelemetry Collector's Prometheus exporter (underscores, unit suffixes, _total, _ratio).
# python-prometheus: the OpenTelemetry Python Prometheus exporter scraped directly (like the collector, no _ratio).
# gke-gmp-collector: a self-run collector with the googlemanagedprometheus exporter (collector naming).
Pipeline = Literal["gke-telemetry-api", "gke-gmp-collector", "otel-collector", "python-prometheus"]
Part = Literal["", "bucket", "sum", "count"]


def series(metric: Metric, pipeline: Pipeline, part: Part = "") -> str:
    raise NotImplementedError


def label(attribute: str, pipeline: Pipeline) -> str:
    raise NotImplementedError


def selector(metric: Metric, pipeline: Pipeline, part: Part = "", matchers: Mapping[str, str] | None = None) -> str:
    """A PromQL instant-vector selector for the metric with `attribute -> value` equality matchers."""
    raise NotImplementedError
