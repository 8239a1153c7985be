"""RLTelemetryTargetDown: a live run's scrape target fails scrapes; a platform warning while the stall page holds."""

from __future__ import annotations

from rlobs.profile.model import TargetDownAlert
from rlobs.rl import naming
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder
from rlobs.rl.alerts.lifecycle import OUTAGE

# Alertmanager routes alerts with this label to the platform's receivers (targets/eks/alerting.py).
ROUTE = ("rlobs_route", "platform")


def rule(t: TargetDownAlert, q: Query) -> Alert | None:
    outage = q.life.outage
    if outage is None:  # pushed to Google's backends: no scrape target to lose
        return None
    return Alert(
        key="target_down",
        name="RLTelemetryTargetDown",
        severity=t.severity,
        summary="RL run {run}: its metrics target fails to be scraped",
        description="Prometheus cannot scrape the target that carries run {run}'s metrics (up == 0 for "
        f"{t.for_}); the run's own alerts hold until the data is back.",
        runbook="A scrape problem, not an RL one: the target (the trainer's /metrics, or the OpenTelemetry "
        "Collector's exporter for pushed metrics) exists but fails its scrapes. Check the target on Prometheus' "
        "targets page (timeouts, TLS, a NetworkPolicy, an overloaded collector). RLTrainingStalled stays silent "
        "while the target is down and judges the run again once its data is back.",
        expr=q.by("max", f"{outage} and on ({q.run}) {q.life.live()}"),
        for_=t.for_,
        metrics=("run_state",),
        probes=(q.life.state,),
        labels=(ROUTE,),
    )


def case(_t: TargetDownAlert, _alert: Alert, b: CaseBuilder) -> Case:
    end, direct = 30, b.pipeline == "python-prometheus"
    for run, up in (("unscraped", f"1+0x10 0+0x{end - 10}"), ("scraped", f"1+0x{end}")):
        scope = {**b.scope, "instance": run}
        b.add(run, f"1+0x{end}", "run_state", scope=scope)
        b.add(run, f"0+0x{end}", "state_since", scope=scope)
        if direct:
            b.series.append((naming.labelled("up", scope), up))
        elif run == "unscraped":
            b.series.append((OUTAGE["otel-collector"][1], up))
    # Through the collector every run shares the one target: both are held, and both warn.
    return b.case(end, ["unscraped"], ["scraped"]) if direct else b.case(end, ["scraped", "unscraped"], [])


ALERT = AlertDef(lambda a: a.target_down, rule, case)
