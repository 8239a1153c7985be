"""What an RL alert is: the rule every backend renders, and the definition that builds it and its promtool case."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rlobs.profile.fields import Severity
from rlobs.profile.model import Alerts
from rlobs.rl import naming
from rlobs.rl.alerts.cases import Case, CaseBuilder
from rlobs.rl.catalog import Catalog, Metric
from rlobs.rl.naming import Pipeline

RUNBOOK_PATH = "docs/runbook.md"


@dataclass(frozen=True, slots=True)
class Alert:
    key: str  # the profile's alerts field (snake_case), e.g. loss_spike
    name: str  # CamelCase alert name, e.g. RLLossSpike
    severity: Severity
    summary: str  # one line; `{run}` stands for the run id (see text())
    description: str  # `{run}` likewise
    runbook: str  # Markdown: what it means, what to do
    expr: str  # PromQL; returns one series per run while the condition holds
    for_: str  # Prometheus duration
    metrics: tuple[str, ...]  # catalog keys the expression reads
    # Sub-expressions that must return data whenever the metrics exist, healthy or not; tests evaluate them against
    # a real Prometheus so a wrong series or label name cannot hide behind a threshold that is simply never met.
    probes: tuple[str, ...]

    def text(self, template: str, run: str) -> str:
        """summary or description with `{run}` replaced by the backend's reference to the run label."""
        return template.replace("{run}", run)

    @property
    def anchor(self) -> str:
        """The docs/runbook.md heading anchor (GitHub/GitLab: lower-cased heading text)."""
        return self.name.lower()


class Query:
    """PromQL building blocks for one pipeline, grouped per run."""

    def __init__(self, catalog: Catalog, pipeline: Pipeline, scope: Mapping[str, str]) -> None:
        self.catalog = catalog
        self.pipeline = pipeline
        self.scope = scope  # label -> value every selector matches: the bundle's own workload only
        self.run = naming.label_token(catalog.attribute("run_id").name, pipeline)

    def m(self, key: str) -> Metric:
        return self.catalog.metric(key)

    def sel(self, key: str, part: naming.Part = "") -> str:
        return naming.selector(self.m(key), self.pipeline, part, self.scope)

    def by(self, agg: str, inner: str, *extra: str) -> str:
        return f"{agg} by ({', '.join([self.run, *extra])}) ({inner})"

    def p95(self, key: str, window: str, offset: str = "") -> str:
        shift = f" offset {offset}" if offset else ""
        rate = f"rate({self.sel(key, 'bucket')}[{window}]{shift})"
        return f"histogram_quantile(0.95, {self.by('sum', rate, 'le')})"


Config = TypeVar("Config")


@dataclass(frozen=True, slots=True)
class AlertDef(Generic[Config]):
    """One alert, whole: the profile thresholds it reads, its rule, and the promtool case that proves the rule.

    `config` picks the alert's settings out of the profile's `alerts:`; `rule` builds the Alert from them; `case`
    builds input series on which the rule must fire for some runs and stay silent for others.
    """

    config: Callable[[Alerts], Config]
    rule: Callable[[Config, Query], Alert]
    case: Callable[[Config, Alert, CaseBuilder], Case]

    def build(self, settings: Alerts, query: Query) -> Alert:
        return self.rule(self.config(settings), query)

    def prove(self, settings: Alerts, alert: Alert, query: Query) -> Case:
        builder = CaseBuilder(query.m(alert.metrics[0]), query.catalog, query.pipeline, query.scope)
        return self.case(self.config(settings), alert, builder)


AnyAlertDef = AlertDef[Any]
