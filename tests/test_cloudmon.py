from __future__ import annotations

import json
from typing import Any

import pytest

from rlobs.profile.gke import ChannelRoute
from rlobs.profile.model import GkeProfile
from rlobs.rl import naming
from rlobs.rl.catalog import load_catalog
from rlobs.targets.gke import monitoring
from testing.bundles import facts, pipeline_of
from testing.helpers import gke_profile, module, profile
from testing.promql import parse

CATALOG = load_catalog()


def _gmp(p: GkeProfile) -> GkeProfile:
    return p.model_copy(update={"gke": p.gke.model_copy(update={"naming": "gmp-collector"})})


def _with_channels(p: GkeProfile) -> GkeProfile:
    chans = (ChannelRoute(name="projects/my-rl-project/notificationChannels/123"),)
    return p.model_copy(update={"gke": p.gke.model_copy(update={"notification_channels": chans})})


def _queries(dash: dict[str, Any]) -> list[str]:
    return [
        ds["timeSeriesQuery"]["prometheusQuery"]
        for t in dash["mosaicLayout"]["tiles"]
        if "xyChart" in t["widget"]
        for ds in t["widget"]["xyChart"]["dataSets"]
    ]


def test_dashboard_layout_and_filters() -> None:
    dash = monitoring.dashboard(facts(profile("gke-managed-otel")))
    assert dash["mosaicLayout"]["columns"] == 48
    for t in dash["mosaicLayout"]["tiles"]:
        assert t["xPos"] + t["width"] <= 48
    filters = dash["dashboardFilters"]
    assert [f["labelKey"] for f in filters] == ["rl.run.id", "rl.algorithm", "rl.environment.name", "rl.model.name"]
    assert all(f["filterType"] == "METRIC_LABEL" for f in filters)
    for q in _queries(dash):
        for f in filters:
            assert "${" + f["templateVariable"] + "}" in q
        assert q.count('{"rl.') >= 1  # dotted names are quoted (telemetry-api)


def test_gmp_collector_naming() -> None:
    dash = monitoring.dashboard(facts(_gmp(profile("gke-managed-otel"))))
    assert dash["dashboardFilters"][0]["labelKey"] == "rl_run_id"
    assert any("rl_loop_duration_milliseconds_bucket{" in q for q in _queries(dash))


@pytest.mark.parametrize("gmp", [False, True])
def test_queries_parse_once_template_variables_expand(gmp: bool) -> None:
    p = _gmp(profile("gke-managed-otel")) if gmp else profile("gke-managed-otel")
    dash = monitoring.dashboard(facts(p))
    pipeline = pipeline_of(p)
    for q in _queries(dash):
        for f in dash["dashboardFilters"]:
            q = q.replace("${" + f["templateVariable"] + "}", f'{naming.label_token(f["labelKey"], pipeline)}=~".*"')
        parse(q)


def _policies(p: GkeProfile) -> list[tuple[str, dict[str, Any]]]:
    return monitoring.alert_policies(facts(p), p.gke.channels_for)


def test_alert_policies() -> None:
    policies = _policies(_with_channels(profile("gke-managed-otel")))
    stems = [s for s, _ in policies]
    assert stems == [
        "rl-gke-rl-training-stalled",
        "rl-gke-rl-reward-collapse",
        "rl-gke-rl-loss-spike",
        "rl-gke-rl-mfu-low",
        "rl-gke-rl-loop-regression",
        "rl-gke-rl-sync-latency-high",
    ]
    for _, pol in policies:
        cond = pol["conditions"][0]["conditionPrometheusQueryLanguage"]
        assert cond["disableMetricValidation"] is True
        assert int(cond["evaluationInterval"].removesuffix("s")) % 30 == 0
        assert cond["duration"].endswith("s")
        parse(cond["query"])
        assert pol["combiner"] == "OR" and pol["severity"] in {"CRITICAL", "WARNING", "ERROR"}
        assert pol["notificationChannels"] == ["projects/my-rl-project/notificationChannels/123"]
        assert pol["alertStrategy"]["autoClose"] == "1800s"
        doc = pol["documentation"]
        assert doc["mimeType"] == "text/markdown" and "**What to do.**" in doc["content"]
        assert len(doc["content"]) <= 8192
    mfu = dict(policies)["rl-gke-rl-mfu-low"]
    assert mfu["conditions"][0]["conditionPrometheusQueryLanguage"]["query"].endswith("< 0.25")
    assert mfu["conditions"][0]["conditionPrometheusQueryLanguage"]["duration"] == "1800s"


def test_no_policies_when_alerts_are_disabled() -> None:
    p = profile("gke-managed-otel")
    off = p.model_copy(update={"alerts": p.alerts.model_copy(update={"enabled": False})})
    assert _policies(off) == []


def test_google_client_libraries_accept_dashboard_and_policies() -> None:
    module("google.cloud.monitoring_dashboard_v1", "Google's Dashboard message parses the dashboard JSON")
    module("google.cloud.monitoring_v3", "Google's AlertPolicy message parses the policy JSON")
    from google.cloud.monitoring_dashboard_v1.types import Dashboard
    from google.cloud.monitoring_v3.types import AlertPolicy

    for p in (profile("gke-managed-otel"), _gmp(_with_channels(profile("gke-managed-otel")))):
        dash = Dashboard.from_json(json.dumps(monitoring.dashboard(facts(p))), ignore_unknown_fields=False)
        assert dash.mosaic_layout.columns == 48 and len(dash.dashboard_filters) == 4
        for _, pol in _policies(p):
            parsed = AlertPolicy.from_json(json.dumps(pol), ignore_unknown_fields=False)
            assert parsed.conditions[0].condition_prometheus_query_language.disable_metric_validation


def test_google_client_libraries_reject_a_bad_field() -> None:
    module("google.cloud.monitoring_v3", "Google's AlertPolicy message parses the policy JSON")
    from google.cloud.monitoring_dashboard_v1.types import Dashboard
    from google.cloud.monitoring_v3.types import AlertPolicy

    dash = monitoring.dashboard(facts(profile("gke-managed-otel")))
    dash["mosaicLayout"]["tiles"][1]["widget"]["xyChart"]["dataSets"][0]["timeSeriesQuery"]["promQuery"] = "up"
    with pytest.raises(Exception, match="promQuery"):
        Dashboard.from_json(json.dumps(dash), ignore_unknown_fields=False)
    [(_, pol), *_] = _policies(profile("gke-managed-otel"))
    pol["conditions"][0]["conditionPrometheusQueryLanguage"]["disableMetricValidaton"] = True
    with pytest.raises(Exception, match="disableMetricValidaton"):
        AlertPolicy.from_json(json.dumps(pol), ignore_unknown_fields=False)


def test_every_catalog_metric_is_charted() -> None:
    queries = _queries(monitoring.dashboard(facts(profile("gke-managed-otel"))))
    for m in CATALOG.metrics:
        part: naming.Part = "bucket" if m.kind == "histogram" else ""
        quoted = "{" + naming.quote(naming.series(m, "gke-telemetry-api", part)) + ", "
        assert any(quoted in q for q in queries), m.name


def test_channels_get_only_the_severities_they_ask_for() -> None:
    p = gke_profile("gke-managed-otel")
    pager = ChannelRoute(name="projects/my-rl-project/notificationChannels/1", severities=("critical",))
    chat = ChannelRoute(name="projects/my-rl-project/notificationChannels/2")
    routed = p.model_copy(update={"gke": p.gke.model_copy(update={"notification_channels": (pager, chat)})})
    for _, policy in _policies(routed):
        expected = [pager.name, chat.name] if policy["severity"] == "CRITICAL" else [chat.name]
        assert policy["notificationChannels"] == expected, policy["displayName"]
    assert {pol["severity"] for _, pol in _policies(routed)} == {"CRITICAL", "WARNING"}
