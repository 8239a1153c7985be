"""The RL alerts: a registry of definitions, each in its own module (rule, promtool case, thresholds it reads)."""

from __future__ import annotations

from collections.abc import Mapping

from rlobs.profile.model import Alerts
from rlobs.rl.alerts import loop, loss, mfu, reward, stall, sync, targetdown
from rlobs.rl.alerts.base import RUNBOOK_PATH, Alert, AnyAlertDef, Query
from rlobs.rl.alerts.cases import Case
from rlobs.rl.catalog import Catalog
from rlobs.rl.naming import Pipeline

__all__ = ["REGISTRY", "RUNBOOK_PATH", "Alert", "Case", "alerts", "cases", "records", "thresholds"]

# In the order rules, runbook sections and policies appear. A new alert: its module (`rule`, `case`, `ALERT`), a line
# here, and its settings class in the profile's `alerts:` (rlobs.profile.model.Alerts).
REGISTRY: tuple[AnyAlertDef, ...] = (
    stall.ALERT,
    reward.ALERT,
    loss.ALERT,
    mfu.ALERT,
    loop.ALERT,
    sync.ALERT,
    targetdown.ALERT,
)


def alerts(
    settings: Alerts, catalog: Catalog, pipeline: Pipeline, scope: Mapping[str, str] | None = None
) -> tuple[Alert, ...]:
    """Every enabled RL alert the pipeline has; `scope` (label -> value) confines them to one workload."""
    if not settings.enabled:
        return ()
    query = Query(catalog, pipeline, scope or {}, settings)
    return tuple(a for d in REGISTRY if (a := d.build(settings, query)) is not None)


def cases(
    settings: Alerts, built: tuple[Alert, ...], catalog: Catalog, pipeline: Pipeline, scope: Mapping[str, str]
) -> tuple[tuple[Alert, Case], ...]:
    query = Query(catalog, pipeline, scope, settings)
    defs = {a.key: d for d in REGISTRY if (a := d.build(settings, query)) is not None}
    return tuple((a, defs[a.key].prove(settings, a, query)) for a in built)


def thresholds(settings: Alerts, key: str) -> list[dict[str, str]]:
    """The profile settings of one alert (`alerts.<key>`): camelCase key, value and what it means, for the runbook."""
    section = getattr(settings, key)
    return [
        {"key": f.alias or name, "value": str(getattr(section, name)), "description": f.description or ""}
        for name, f in type(section).model_fields.items()
    ]


def records(settings: Alerts, catalog: Catalog, pipeline: Pipeline, scope: Mapping[str, str]) -> list[tuple[str, str]]:
    """(series name, expression) of the recording rules the alerts read (Prometheus pipelines; [] elsewhere)."""
    return Query(catalog, pipeline, scope, settings).life.records
