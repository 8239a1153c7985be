"""Dashboards and alert policies in the GKE bundle, parsed by Google's client libraries (unknown fields rejected)."""

from __future__ import annotations

import json

import pytest

from testing.bundles import build
from testing.gke import GKE_PROFILES
from testing.helpers import gke_profile, module, profile


def _monitoring(name: str, folder: str) -> dict[str, str]:
    prefix = f"monitoring/{folder}/"
    return {r.path: r.text for r in build(profile(name)) if r.path.startswith(prefix)}


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_dashboards_parse_as_monitoring_v1(name: str) -> None:
    module("google.cloud.monitoring_dashboard_v1", "parses the dashboards with Google's client library")
    from google.cloud.monitoring_dashboard_v1 import Dashboard

    dashboards = _monitoring(name, "dashboards")
    assert dashboards
    for path, text in dashboards.items():
        parsed = Dashboard.from_json(text)  # unknown fields raise
        assert parsed.display_name == json.loads(text)["displayName"], path


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_alert_policies_parse_as_monitoring_v3(name: str) -> None:
    module("google.cloud.monitoring_v3", "parses the alert policies with Google's client library")
    from google.cloud.monitoring_v3 import AlertPolicy

    p = gke_profile(name)
    policies = _monitoring(name, "alert-policies")
    if not p.alerts.enabled:
        assert not policies
    for path, text in policies.items():
        parsed = AlertPolicy.from_json(text)
        assert parsed.display_name, path
        severity = {"CRITICAL": "critical", "WARNING": "warning"}[parsed.severity.name]
        assert list(parsed.notification_channels) == p.gke.channels_for(severity), path
        for condition in parsed.conditions:
            promql = condition.condition_prometheus_query_language
            if promql.query:
                # The metrics may not exist before the first run; Cloud Monitoring rejects the policy otherwise.
                assert promql.disable_metric_validation, path


def test_display_names_are_unique_per_bundle() -> None:
    # The deploy script finds existing dashboards and policies by display name.
    for name in GKE_PROFILES:
        names = [json.loads(t)["displayName"] for t in _monitoring(name, "").values()]
        assert len(names) == len(set(names)), name


def test_google_parsers_reject_unknown_fields() -> None:
    module("google.cloud.monitoring_v3", "parses the alert policies with Google's client library")
    from google.cloud.monitoring_dashboard_v1 import Dashboard
    from google.cloud.monitoring_v3 import AlertPolicy

    with pytest.raises(Exception, match="no field named"):
        Dashboard.from_json('{"displayName": "x", "mosaicLayout": {"columns": 48, "tile": []}}')
    with pytest.raises(Exception, match="no field named"):
        AlertPolicy.from_json('{"displayName": "x", "conditions": [{"displayName": "c", "promql": {}}]}')


def test_user_labels_reach_the_dashboard_and_every_policy() -> None:
    import json

    from testing.bundles import build
    from testing.helpers import profile

    files = {r.path: r.text for r in build(profile("gke-autopilot-jobset"))}
    ours = {"team": "rl-research", "cost-center": "4711"}
    dashboards = [json.loads(t) for p, t in files.items() if p.startswith("monitoring/dashboards/")]
    policies = [json.loads(t) for p, t in files.items() if p.startswith("monitoring/alert-policies/")]
    assert dashboards and policies
    for obj in dashboards:
        assert obj["labels"].items() >= ours.items() and obj["labels"]["rlobs_bundle"] == "rl-autopilot"
    for obj in policies:
        assert obj["userLabels"].items() >= ours.items() and "rl_alert" in obj["userLabels"]
    # Terraform deploys the same data.
    tf = json.loads(files["terraform/alert_policies.tf.json"])
    for policy in tf["resource"]["google_monitoring_alert_policy"].values():
        assert policy["user_labels"].items() >= ours.items()
