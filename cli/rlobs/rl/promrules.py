"""PrometheusRule groups for the RL alerts, and promtool unit tests proving each fires on bad data only."""

from __future__ import annotations

from typing import Any

from rlobs.rl import naming, slos, tracker
from rlobs.rl.alerts import Alert, cases, records
from rlobs.rl.catalog import Catalog
from rlobs.rl.facts import RlFacts
from rlobs.rl.naming import Pipeline

RULE_FILE = "rl-alerts.rules.yaml"  # the rules a test file loads, beside it (promtool resolves it from its folder)


def run_template(catalog: Catalog, pipeline: Pipeline) -> str:
    run_label = naming.label(catalog.attribute("run_id").name, pipeline)
    if naming.dotted(pipeline):
        return "{{ index $labels " + naming.quote(run_label) + " }}"
    return "{{ $labels." + run_label + " }}"


def _annotations(facts: RlFacts, alert: Alert, run: str) -> dict[str, str]:
    value = "{{ $value | " + alert.value_format + " }}"
    found = {
        "summary": alert.text(alert.summary, run),
        "description": alert.text(alert.description, run, value),
        "runbook_url": f"{facts.runbook}#{alert.anchor}",
    }
    links = tracker.links(facts.profile.workload.tracker)
    if links is not None:
        # `run` is the run label's template (or, in rule tests, its value); the profile's part is Go-template safe.
        if links.run_base is None:
            found["tracker_url"] = tracker.go_template_literal(links.home[1])
        else:
            found["tracker_url"] = tracker.go_template_literal(links.run_base) + run
    return found


def _labels(facts: RlFacts, alert: Alert) -> dict[str, str]:
    return {"severity": alert.severity, **facts.alert_labels, **dict(alert.labels)}


def firing_labels(facts: RlFacts, alert: Alert, run: str) -> dict[str, str]:
    """The labels of the alert's firing `ALERTS` series for run `run`: what promtool tests compare (values vary)."""
    run_label = naming.label(facts.catalog.attribute("run_id").name, facts.pipeline)
    return {"alertname": alert.name, "alertstate": "firing", **_labels(facts, alert), run_label: run}


def _rule(facts: RlFacts, alert: Alert, run: str) -> dict[str, Any]:
    rule = {"alert": alert.name, "expr": alert.expr, "for": alert.for_}
    if alert.keep_firing_for:
        rule["keep_firing_for"] = alert.keep_firing_for  # Prometheus >= 2.42
    return {**rule, "labels": _labels(facts, alert), "annotations": _annotations(facts, alert, run)}


def rule_groups(facts: RlFacts) -> list[dict[str, Any]]:
    slo = slos.rule_group(facts)
    return [*_alert_groups(facts), *([slo] if slo else [])]


def _alert_groups(facts: RlFacts) -> list[dict[str, Any]]:
    if not facts.alerts:
        return []
    run = run_template(facts.catalog, facts.pipeline)
    # The run's lifecycle values, once per evaluation and before the alerts that read them (a group evaluates its
    # rules in order); labelled with the bundle's scope, so two bundles' records never collide.
    scope = {naming.label(k, facts.pipeline): v for k, v in facts.scope.items()}
    recorded = [
        {"record": name, "expr": expr, **({"labels": scope} if scope else {})}
        for name, expr in records(facts.profile.alerts, facts.catalog, facts.pipeline, facts.scope)
    ]
    return [
        {"name": f"rlobs-{facts.name}.rl-alerts", "rules": [*recorded, *(_rule(facts, a, run) for a in facts.alerts)]}
    ]


def rule_tests(facts: RlFacts) -> dict[str, Any]:
    """A `promtool test rules` file: per alert, bad runs that must fire and a healthy run that must stay silent."""
    if naming.dotted(facts.pipeline):
        # promtool parses the quoted UTF-8 series notation only from Prometheus 3.0 on.
        raise ValueError(f"{facts.pipeline}: promtool rule tests are generated for classic (underscored) names only")
    tests = []
    for alert, case in cases(facts.profile.alerts, facts.alerts, facts.catalog, facts.pipeline, facts.scope):
        exp = [
            {"labels": naming.labelled("ALERTS", firing_labels(facts, alert, run)), "value": 1} for run in case.firing
        ]
        tests.append(
            {
                "name": f"{alert.name} fires for {', '.join(case.firing) or 'no run'}, not for "
                f"{', '.join(case.silent) or 'no run'}",
                "interval": case.interval,
                "input_series": [{"series": s, "values": v} for s, v in case.series],
                "promql_expr_test": [
                    {
                        "expr": f'ALERTS{{alertname="{alert.name}", alertstate="firing"}}',
                        "eval_time": case.eval_time,
                        "exp_samples": exp,
                    }
                ],
            }
        )
    return {"rule_files": [RULE_FILE], "evaluation_interval": "1m", "tests": tests + slos.rule_tests(facts)}
