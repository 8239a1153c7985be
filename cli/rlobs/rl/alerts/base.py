"""What an RL alert is: the rule every backend renders, and the definition that builds it and its promtool case."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rlobs.profile.fields import Severity
from rlobs.profile.model import Alerts
from rlobs.rl import naming
from rlobs.rl.alerts.cases import Case, CaseBuilder
from rlobs.rl.alerts.lifecycle import Lifecycle
from rlobs.rl.catalog import Catalog
from rlobs.rl.naming import Pipeline

RUNBOOK_PATH = "docs/runbook.md"


@dataclass(frozen=True, slots=True)
class Alert:
    key: str  # the profile's alerts field (snake_case), e.g. loss_spike
    name: str  # CamelCase alert name, e.g. RLLossSpike
    severity: Severity
    summary: str  # one line; `{run}` stands for the run id (see text())
    description: str  # `{run}` likewise, and `{value}` for the measured value (the expression's)
    runbook: str  # Markdown: what it means, what to do
    expr: str  # PromQL; returns one series per run while the condition holds
    for_: str  # Prometheus duration
    metrics: tuple[str, ...]  # catalog keys the expression reads
    # Sub-expressions that must return data whenever the metrics exist, healthy or not; tests evaluate them against
    # a real Prometheus so a wrong series or label name cannot hide behind a threshold that is simply never met.
    probes: tuple[str, ...]
    keep_firing_for: str = ""  # Prometheus keep_firing_for (hysteresis); "" for none
    value_format: str = "humanize"  # the Go template function that prints the value in the description
    labels: tuple[tuple[str, str], ...] = ()  # extra alert labels (routing)

    def text(self, template: str, run: str, value: str = "the measured value") -> str:
        """`{run}` and `{value}` replaced by the backend's references to the run label and the measured value."""
        return template.replace("{run}", run).replace("{value}", value)

    @property
    def anchor(self) -> str:
        """The docs/runbook.md heading anchor (GitHub/GitLab: lower-cased heading text)."""
        return self.name.lower()


class Query:
    """PromQL building blocks for one pipeline, grouped per run."""

    def __init__(self, catalog: Catalog, pipeline: Pipeline, scope: Mapping[str, str], settings: Alerts) -> None:
        self.catalog = catalog
        self.pipeline = pipeline
        self.scope = scope  # label -> value every selector matches: the bundle's own workload only
        self.run = naming.label_token(catalog.attribute("run_id").name, pipeline)
        self.life = Lifecycle(self, settings.stall)

    def sel(self, key: str, part: naming.Part = "") -> str:
        return naming.selector(self.catalog.metric(key), self.pipeline, part, self.scope)

    def by(self, agg: str, inner: str, *extra: str) -> str:
        return f"{agg} by ({', '.join([self.run, *extra])}) ({inner})"

    def gated(self, per_series: str) -> str:
        """A per-series condition as one series per run, for runs that train and progress only."""
        return f"({self.by('max', per_series)} and on ({self.run}) {self.life.training_ok})"


Config = TypeVar("Config")


@dataclass(frozen=True, slots=True)
class AlertDef(Generic[Config]):
    """One alert, whole: the settings it reads from `alerts:` (`config`), its rule, and the promtool case proving it."""

    config: Callable[[Alerts], Config]
    rule: Callable[[Config, Query], Alert | None]  # None: the alert does not apply to the pipeline
    case: Callable[[Config, Alert, CaseBuilder], Case]

    def build(self, settings: Alerts, query: Query) -> Alert | None:
        return self.rule(self.config(settings), query)

    def prove(self, settings: Alerts, alert: Alert, query: Query) -> Case:
        builder = CaseBuilder(query.catalog.metric(alert.metrics[0]), query.catalog, query.pipeline, query.scope)
        return self.case(self.config(settings), alert, builder)


AnyAlertDef = AlertDef[Any]
