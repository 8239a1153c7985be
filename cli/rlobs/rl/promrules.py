"""PrometheusRule groups for the RL alerts, and promtool unit tests proving each fires on bad data only."""

from __future__ import annotations

from typing import Any

from rlobs.profile.model import Profile
from rlobs.rl import naming
from rlobs.rl.alerts import RUNBOOK_PATH, Alert, alerts
from rlobs.rl.catalog import Catalog
from rlobs.rl.naming import Pipeline
from rlobs.rl.promtests import alert_inputs


def group_name(profile: Profile) -> str:
    return f"rlobs-{profile.metadata.name}.rl-alerts"


def runbook_url(profile: Profile, alert: Alert) -> str:
    """Link to the alert's section of docs/runbook.md: in the GitOps repository when it is an https URL."""
    rel = f"{RUNBOOK_PATH}#{alert.anchor}"
    eks = profile.eks
    if eks is not None and eks.gitops.repo_url.startswith("https://"):
        # GitHub and GitLab both serve <repo>/blob/<rev>/<path> (GitLab redirects to /-/blob/).
        repo = eks.gitops.repo_url.removesuffix(".git").rstrip("/")
        return f"{repo}/blob/{eks.gitops.target_revision}/{eks.gitops.path}/{rel}"
    return rel


def run_template(catalog: Catalog, pipeline: Pipeline) -> str:
    """A Prometheus alert template expression printing the run id label."""
    run_label = naming.label(catalog.attribute("run_id").name, pipeline)
    if naming.dotted(pipeline):
        return "{{ index $labels " + naming.quote(run_label) + " }}"
    return "{{ $labels." + run_label + " }}"


def _rule(profile: Profile, alert: Alert, run: str) -> dict[str, Any]:
    return {
        "alert": alert.name,
        "expr": alert.expr,
        "for": alert.for_,
        "labels": {"severity": alert.severity},
        "annotations": {
            "summary": alert.text(alert.summary, run),
            "description": alert.text(alert.description, run),
            "runbook_url": runbook_url(profile, alert),
        },
    }


def rule_groups(profile: Profile, catalog: Catalog, pipeline: Pipeline) -> list[dict[str, Any]]:
    """The `spec.groups` of the RL PrometheusRule (alerts only; no group when alerts are disabled)."""
    found = alerts(profile, catalog, pipeline)
    if not found:
        return []
    run = run_template(catalog, pipeline)
    # The dashboards read the raw series directly, so no recording rules: nothing to keep in sync.
    return [{"name": group_name(profile), "rules": [_rule(profile, a, run) for a in found]}]


def rule_tests(
    profile: Profile, catalog: Catalog, pipeline: Pipeline, rule_file: str = "rl-alerts.rules.yaml"
) -> dict[str, Any]:
    """A `promtool test rules` file: per alert, bad runs that must fire and a healthy run that must stay silent.

    `rule_file` is relative to the test file (promtool resolves it from the test file's folder).
    """
    if naming.dotted(pipeline):
        # promtool parses the quoted UTF-8 series notation only from Prometheus 3.0 on.
        raise ValueError(f"{pipeline}: promtool rule tests are generated for classic (underscored) names only")
    tests = []
    for alert in alerts(profile, catalog, pipeline):
        case = alert_inputs(alert, profile, catalog, pipeline)
        exp = [
            {
                "exp_labels": {"severity": alert.severity, case.run_label: run},
                "exp_annotations": {
                    "summary": alert.text(alert.summary, run),
                    "description": alert.text(alert.description, run),
                    "runbook_url": runbook_url(profile, alert),
                },
            }
            for run in case.firing
        ]
        tests.append(
            {
                "name": f"{alert.name} fires for {', '.join(case.firing) or 'no run'}, not for "
                f"{', '.join(case.silent) or 'no run'}",
                "interval": case.interval,
                "input_series": [{"series": s, "values": v} for s, v in case.series],
                "alert_rule_test": [
                    {"eval_time": case.eval_time, "alertname": alert.name, "exp_alerts": exp},
                ],
            }
        )
    return {"rule_files": [rule_file], "evaluation_interval": "1m", "tests": tests}
