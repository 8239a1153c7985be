"""The profile's SLOs in Cloud Monitoring: API JSON (scripts mode) and Terraform resources, from the same data."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rlobs.bundle.filters import number
from rlobs.profile.fields import duration_seconds
from rlobs.rl import naming
from rlobs.rl import slos as rlslos
from rlobs.rl.alerts import RUNBOOK_PATH
from rlobs.rl.facts import RlFacts
from rlobs.rl.slos import BUDGET_TITLE, BURNS, PAGE, SLO_LABEL, TICKET, UNJUDGED
from rlobs.targets.gke import tfpolicy
from rlobs.targets.gke.monitoring import BUNDLE_LABEL, TILE_HEIGHT, alert_policy, kebab, promql_condition, xy_chart

SLO_DIR = "monitoring/slos"
SERVICE_FILE = f"{SLO_DIR}/service.json"
GOODPUT = "goodput"  # the SLO id; the only SLO object (the others are PromQL policies: promql_policies)
SLO_FILE = f"{SLO_DIR}/{GOODPUT}.json"
_NAMES = {PAGE: "RLGoodputBudgetBurn", TICKET: "RLGoodputBudgetBurnSlow"}


@dataclass(frozen=True, slots=True)
class SloObjects:
    service_id: str
    service: dict[str, Any] | None  # Service (monitoring v3); None without slos.goodput
    slo: dict[str, Any] | None  # the goodput ServiceLevelObjective
    # (file stem, AlertPolicy): goodput's per burn-rate window pair, then the time-based SLOs' (promql_policies)
    policies: list[tuple[str, dict[str, Any]]]


def service_id(facts: RlFacts) -> str:
    return f"rlobs-{facts.name}"


def slo_name(project: str, facts: RlFacts) -> str:
    return f"projects/{project}/services/{service_id(facts)}/serviceLevelObjectives/{GOODPUT}"


def _filter(facts: RlFacts, bucket: str = "") -> str:
    """A filter on the workload's run_time counter: one bucket or all but UNJUDGED; keys quoted, as dotted ones must."""
    metric = facts.catalog.metric("run_time")
    parts = [f"metric.type={naming.quote(naming.monitoring_type(metric, facts.pipeline))}"]
    parts += ['resource.type="prometheus_target"']
    parts += [f'resource.label."{k}"={naming.quote(v)}' for k, v in sorted(facts.scope.items())]
    key = naming.label(facts.catalog.attribute("time_bucket").name, facts.pipeline)
    op, value = ("=", bucket) if bucket else ("!=", UNJUDGED)
    parts.append(f'metric.label."{key}"{op}{naming.quote(value)}')
    return " AND ".join(parts)


def objects(
    facts: RlFacts, project: str, channels: Callable[[str], list[str]], user_labels: Mapping[str, str]
) -> SloObjects | None:
    """The goodput SLO's service, SLO and burn-rate policies, and the time-based SLOs' policies; None without any."""
    slos = facts.profile.slos
    timed = promql_policies(facts, channels, user_labels)
    if slos is None or slos.goodput is None:
        return SloObjects(service_id(facts), None, None, timed) if timed else None
    objective, name = slos.goodput.objective, facts.name
    labels = {**user_labels, BUNDLE_LABEL: name}
    service = {"displayName": f"RL workload {facts.profile.workload.name} ({name})", "custom": {}, "userLabels": labels}
    slo = {
        "displayName": f"Goodput at least {number(objective)} over {slos.window_days}d ({name})",
        "goal": objective,
        "rollingPeriod": f"{slos.window_days * 86400}s",
        "serviceLevelIndicator": {
            "requestBased": {
                "goodTotalRatio": {"goodServiceFilter": _filter(facts, "train"), "totalServiceFilter": _filter(facts)}
            }
        },
        "userLabels": labels,
    }
    # A burn rate above 1 / (1 - objective) cannot happen (every second bad); a higher workbook rate is capped just
    # below it, so that policy fires when nearly the whole window was bad.
    top = math.floor(0.999 / (1 - objective) * 1000) / 1000
    policies = []
    counter = facts.catalog.metric("run_time").name
    for severity, long, short, burn in BURNS:
        rate = min(burn, top)
        alert = _NAMES[severity]
        conditions = [
            {
                "displayName": f"Goodput budget burn rate over {w} at least {number(rate)}x",
                "conditionThreshold": {
                    "filter": f'select_slo_burn_rate("{slo_name(project, facts)}", "{duration_seconds(w)}s")',
                    "comparison": "COMPARISON_GE",
                    "thresholdValue": rate,
                    "duration": "0s",
                },
            }
            for w in (long, short)
        ]
        content = (
            f"## {alert}\n\nThe goodput of {facts.profile.workload.name} (train seconds over all seconds of "
            f"{counter}) burns its error budget at {number(rate)}x or more over both {long} and {short} "
            f"(objective {number(objective)} over {slos.window_days}d). The time-accounting panels show where the "
            "time went: stalls, restarts, slow syncs or idle loops."
            f"\n\nRunbook: `{RUNBOOK_PATH}#{alert.lower()}` in the rlobs bundle `{name}`."
        )
        title, doc, tag = f"{alert} {long}/{short}", {"subject": alert}, "goodput-budget-burn"
        policy = alert_policy(title, name, user_labels, tag, content, doc, conditions, channels, severity, "AND")
        policies.append((f"{name}-{alert[2:].lower()}-{long}", policy))
    return SloObjects(service_id(facts), service, slo, policies + timed)


def promql_policies(
    facts: RlFacts, channels: Callable[[str], list[str]], user_labels: Mapping[str, str]
) -> list[tuple[str, dict[str, Any]]]:
    """The time-based SLOs' burn-rate policies, in PromQL: an SLO object's windows-based MetricRange reads one gauge's
    value, not a step rate or a wait since a start."""
    s, name, found = facts.profile.slos, facts.name, []
    for o in (o for o in rlslos.objectives(facts) if o.bad):
        for severity in (PAGE, TICKET):
            alert = rlslos.alert_name(o, severity)
            pairs = " or ".join(f"{long}/{short} at {number(b)}x" for sev, long, short, b in BURNS if sev == severity)
            content = (
                f"## {alert}\n\nThe SLO {o.key} of {facts.profile.workload.name} (objective {number(o.objective)} "
                f"{o.meaning} over {s.window_days if s else 0}d) burns its error budget: {pairs}, both windows of a "
                "pair. The dashboard's error-budget tile shows what is left; the runs' time-accounting and pace panels "
                "show which runs spent it."
                f"\n\nRunbook: `{RUNBOOK_PATH}#{alert.lower()}` in the rlobs bundle `{name}`."
            )
            condition = promql_condition(
                f"{o.key} budget burn ({'fast' if severity == PAGE else 'slow'})",
                rlslos.inline_burn(o, severity),
                "0s",
                alert,
                f"rlobs-{name}-slos",
                {**facts.alert_labels, SLO_LABEL: o.key},
            )
            doc = {"subject": alert}
            policy = alert_policy(alert, name, user_labels, kebab(alert), content, doc, [condition], channels, severity)
            found.append((f"{name}-{kebab(alert)}", policy))
    return found


def with_budget_tile(dashboard: dict[str, Any], project: str, facts: RlFacts) -> dict[str, Any]:
    """The dashboard with a remaining-error-budget tile below its others (unchanged without an SLO)."""
    s = facts.profile.slos
    if s is None:
        return dashboard
    series: list[tuple[dict[str, Any], str, str]] = []  # query, unit, legend
    if s.goodput:
        query = {"timeSeriesFilter": {"filter": f'select_slo_budget_fraction("{slo_name(project, facts)}")'}}
        series.append((query, "1", GOODPUT))
    for o in (o for o in rlslos.objectives(facts) if o.bad):
        left = f"1 - {rlslos.ratio(o, f'{s.window_days}d')} / {number(round(1 - o.objective, 6))}"
        series.append(({"prometheusQuery": left}, "1", o.key))
    if not series:
        return dashboard
    layout = dashboard["mosaicLayout"]
    bottom = max(t.get("yPos", 0) + t["height"] for t in layout["tiles"])
    tile = {"yPos": bottom, "width": layout["columns"] // 2, "height": TILE_HEIGHT}
    widget = {"title": BUDGET_TITLE, "xyChart": xy_chart("1", series)}
    return {**dashboard, "mosaicLayout": {**layout, "tiles": [*layout["tiles"], {**tile, "widget": widget}]}}


TF_FILE = "terraform/slos.tf.json"


def resources(found: SloObjects, bundle: str, depends_on: list[str]) -> dict[str, Any]:
    """slos.tf.json: the service, the goodput SLO and the burn-rate policies, which wait for the SLO they select."""
    common = {"provider": "google-beta", "project": "${var.project_id}"}
    s = found.slo
    waits = [f"google_monitoring_slo.{GOODPUT}"] if s else depends_on
    policies = tfpolicy.resources(bundle, found.policies, waits)["resource"]
    if s is None or found.service is None:
        return {"resource": policies}
    return {
        "resource": {
            "google_monitoring_custom_service": {
                "rl": {
                    **common,
                    "service_id": found.service_id,
                    "display_name": tfpolicy.literal(found.service["displayName"]),
                    "user_labels": tfpolicy.arguments(found.service["userLabels"], "userLabels"),
                    "depends_on": depends_on,
                }
            },
            "google_monitoring_slo": {
                GOODPUT: {
                    **common,
                    "service": "${google_monitoring_custom_service.rl.service_id}",
                    "slo_id": GOODPUT,
                    "display_name": tfpolicy.literal(s["displayName"]),
                    "goal": s["goal"],
                    "rolling_period_days": duration_seconds(s["rollingPeriod"]) // 86400,
                    "request_based_sli": tfpolicy.arguments(s["serviceLevelIndicator"]["requestBased"]),
                    "user_labels": tfpolicy.arguments(s["userLabels"], "userLabels"),
                }
            },
            **policies,
        }
    }
