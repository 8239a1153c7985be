"""The RL alerts: a registry of definitions, each in its own module (rule, promtool case, thresholds it reads).

Adding an alert: a module here with `rule`, `case` and `ALERT`, its line in REGISTRY, and its settings class in the
profile's `alerts:` (rlobs.profile.model.Alerts).
"""

from __future__ import annotations

from collections.abc import Mapping

from rlobs.profile.model import Alerts
from rlobs.rl.alerts import loop, loss, mfu, reward, stall, sync
from rlobs.rl.alerts.base import RUNBOOK_PATH, Alert, AnyAlertDef, Query
from rlobs.rl.alerts.cases import Case
from rlobs.rl.catalog import Catalog
from rlobs.rl.naming import Pipeline

__all__ = ["REGISTRY", "RUNBOOK_PATH", "Alert", "Case", "alerts", "cases"]

# In the order rules, runbook sections and policies appear.
REGISTRY: tuple[AnyAlertDef, ...] = (stall.ALERT, reward.ALERT, loss.ALERT, mfu.ALERT, loop.ALERT, sync.ALERT)


def alerts(
    settings: Alerts, catalog: Catalog, pipeline: Pipeline, scope: Mapping[str, str] | None = None
) -> tuple[Alert, ...]:
    """Every enabled RL alert, in REGISTRY order; `scope` (label -> value) confines them to one workload."""
    if not settings.enabled:
        return ()
    query = Query(catalog, pipeline, scope or {})
    return tuple(d.build(settings, query) for d in REGISTRY)


def cases(
    settings: Alerts, built: tuple[Alert, ...], catalog: Catalog, pipeline: Pipeline, scope: Mapping[str, str]
) -> tuple[tuple[Alert, Case], ...]:
    """Each alert `alerts()` built, with the promtool case that proves it."""
    query = Query(catalog, pipeline, scope)
    return tuple((a, d.prove(settings, a, query)) for d, a in zip(REGISTRY, built, strict=True))
