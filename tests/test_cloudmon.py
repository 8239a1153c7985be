from __future__ import annotations

import json
from typing import Any

import pytest

from rlobs.rl import naming
from rlobs.rl.catalog import load_catalog
from rlobs.targets.gke import monitoring
from rlobs.targets.gke.profile import ChannelRoute, DashboardFilter, GkeProfile
from testing.bundles import facts
from testing.gke import GKE_PROFILES
from testing.helpers import gke_profile, module, profile, shared
from testing.promql import parse, shape
from testing.tfdiff import plan_is_empty

CATALOG = load_catalog()


def _gmp(p: GkeProfile) -> GkeProfile:
    return p.model_copy(update={"gke": p.gke.model_copy(update={"naming": "gmp-collector"})})


def _with_channels(p: GkeProfile) -> GkeProfile:
    chans = (ChannelRoute(name="projects/my-rl-project/notificationChannels/123"),)
    return p.model_copy(update={"gke": p.gke.model_copy(update={"notification_channels": chans})})


def _queries(dash: dict[str, Any]) -> list[str]:
    """The PromQL of every chart (the error-budget tile reads its SLO with a filter instead: test_slo.py)."""
    return [
        ds["timeSeriesQuery"]["prometheusQuery"]
        for t in dash["mosaicLayout"]["tiles"]
        if "xyChart" in t["widget"]
        for ds in t["widget"]["xyChart"]["dataSets"]
        if "prometheusQuery" in ds["timeSeriesQuery"]
    ]


def test_dashboard_layout_and_filters() -> None:
    dash = monitoring.dashboard(facts(profile("gke-managed-otel")))
    assert dash["mosaicLayout"]["columns"] == 48
    for t in dash["mosaicLayout"]["tiles"]:
        assert t.get("xPos", 0) + t["width"] <= 48
    filters = dash["dashboardFilters"]
    # Google's RL dashboard filters on the same keys, rl.system and rl.system.version included.
    assert [f["labelKey"] for f in filters] == [
        "rl.run.id",
        "rl.algorithm",
        "rl.environment.name",
        "rl.model.name",
        "rl.system",
        "rl.system.version",
    ]
    assert all(f == {"filterType": "METRIC_LABEL", "labelKey": f["labelKey"]} for f in filters)
    for q in _queries(dash):
        # Pinned filters: no template variable to expand, on a dotted key or any other.
        assert "${" not in q
        assert q.count('{"rl.') >= 1  # dotted names are quoted (telemetry-api)


def test_dashboard_filters_match_googles_rl_dashboard() -> None:
    google = json.loads(shared("upstream/google-cloud/rl-workload-performance.dashboard.json").read_text())
    theirs = {f["labelKey"]: f for f in google["dashboardFilters"]}
    ours = monitoring.dashboard(facts(profile("gke-managed-otel")))["dashboardFilters"]
    for f in ours:
        # The same kind of filter on the same key, and, like theirs, no template variable.
        assert theirs[f["labelKey"]]["filterType"] == f["filterType"]
        assert not theirs[f["labelKey"]]["templateVariable"] and "templateVariable" not in f


def test_gmp_collector_naming() -> None:
    dash = monitoring.dashboard(facts(_gmp(profile("gke-managed-otel"))))
    assert dash["dashboardFilters"][0]["labelKey"] == "rl_run_id"
    assert any("rl_loop_duration_milliseconds_bucket{" in q for q in _queries(dash))


@pytest.mark.parametrize("gmp", [False, True])
def test_queries_parse(gmp: bool) -> None:
    p = _gmp(profile("gke-managed-otel")) if gmp else profile("gke-managed-otel")
    for q in _queries(monitoring.dashboard(facts(p))):
        parse(q)


def _charts(dash: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    tiles = dash["mosaicLayout"]["tiles"]
    return [(t["widget"]["title"], t["widget"]["xyChart"]) for t in tiles if "xyChart" in t["widget"]]


@pytest.mark.parametrize("gmp", [False, True])
def test_every_multi_series_chart_names_its_series(gmp: bool) -> None:
    p = _gmp(profile("gke-managed-otel")) if gmp else profile("gke-managed-otel")
    charts = _charts(monitoring.dashboard(facts(p)))
    multi = [(title, chart) for title, chart in charts if len(chart["dataSets"]) > 1]
    assert len(multi) >= 8
    for title, chart in multi:
        legends = [ds.get("legendTemplate", "") for ds in chart["dataSets"]]
        assert all(legends) and len(set(legends)) == len(legends), (title, legends)
    for _, chart in charts:
        for ds in chart["dataSets"]:
            # Plain label keys are referenced; a dotted one never (its form in a legend is undocumented).
            legend = ds.get("legendTemplate", "")
            assert ("${metric.labels.rl_run_id}" in legend) is gmp, legend
            assert "${metric.labels.rl." not in legend


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_one_unit_per_axis(name: str) -> None:
    # xy_chart draws two axes: every panel of rl.panels must hold at most two units.
    for title, chart in _charts(monitoring.dashboard(facts(profile(name)))):
        for axis, key in (("Y1", "yAxis"), ("Y2", "y2Axis")):
            units = {ds["timeSeriesQuery"]["unitOverride"] for ds in chart["dataSets"] if ds["targetAxis"] == axis}
            assert len(units) <= 1, (title, axis, units)
            if units:
                assert chart[key]["label"] == units.pop(), (title, axis)
    per_gpu = dict(_charts(monitoring.dashboard(facts(profile("gke-managed-otel")))))["Per-GPU throughput"]
    assert [ds["targetAxis"] for ds in per_gpu["dataSets"]] == ["Y1", "Y2"]  # tokens/s/GPU beside samples/s/GPU


def _api_form(text: str) -> dict[str, Any]:
    """What the API stores and returns: the dashboard through Google's proto, as proto3 JSON without defaults."""
    from google.cloud.monitoring_dashboard_v1.types import Dashboard

    parsed = Dashboard.from_json(text, ignore_unknown_fields=False)
    out: dict[str, Any] = json.loads(
        Dashboard.to_json(parsed, use_integers_for_enums=False, always_print_fields_with_no_presence=False)
    )
    return out


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_dashboard_is_in_the_apis_normalised_form(name: str) -> None:
    module("google.cloud.monitoring_dashboard_v1", "round-trips the dashboard through Google's proto")
    text = json.dumps(monitoring.dashboard(facts(profile(name))))
    config = json.loads(text)
    api = _api_form(text)
    # Nothing dropped or rewritten by the round trip...
    assert api == config
    # ...so the provider's diff rule finds no change, with the fields the API adds (name, etag) ignored.
    assert plan_is_empty({**api, "name": "projects/1/dashboards/d", "etag": "e"}, config)


def test_normalisation_check_catches_a_zero_value() -> None:
    module("google.cloud.monitoring_dashboard_v1", "round-trips the dashboard through Google's proto")
    config = monitoring.dashboard(facts(profile("gke-managed-otel")))
    config["mosaicLayout"]["tiles"][0]["xPos"] = 0  # what the dashboards carried before: a permanent diff
    api = _api_form(json.dumps(config))
    assert "xPos" not in api["mosaicLayout"]["tiles"][0]
    assert not plan_is_empty(api, config)


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
    assert "< 0.25)" in mfu["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
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
        assert dash.mosaic_layout.columns == 48 and len(dash.dashboard_filters) == 6
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


def _with_filters(p: GkeProfile, *filters: DashboardFilter) -> GkeProfile:
    return p.model_copy(update={"gke": p.gke.model_copy(update={"dashboard_filters": filters})})


def test_profile_dashboard_filters_follow_rlobs_own_in_the_dashboard() -> None:
    extra = (DashboardFilter(label="location", type="resource", value="us-central1"), DashboardFilter(label="team"))
    dash = monitoring.dashboard(facts(_with_filters(profile("gke-managed-otel"), *extra)), extra=extra)
    assert dash["dashboardFilters"][6:] == [
        {"filterType": "RESOURCE_LABEL", "labelKey": "location", "stringValue": "us-central1"},
        {"filterType": "METRIC_LABEL", "labelKey": "team"},
    ]
    assert [f["labelKey"] for f in dash["dashboardFilters"][:6]] == [
        naming.label(CATALOG.attribute(k).name, "gke-telemetry-api") for k in monitoring.FILTERS
    ]


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_every_query_of_the_rendered_dashboard_names_the_bundles_workload(name: str) -> None:
    """Cloud Monitoring holds every bundle of the project: a chart reads only the workload the alert policies read."""
    from rlobs.pipeline import plan_bundle

    p = gke_profile(name)
    plan = plan_bundle(p)
    (dash,) = [f.data for f in plan.files if getattr(f, "path", "").startswith("monitoring/dashboards/")]
    policies = [f.data for f in plan.files if getattr(f, "path", "").startswith("monitoring/alert-policies/")]
    w = p.workload
    scope = {
        "cluster": "=" + p.gke.cluster,
        "namespace": "=" + w.namespace,
        "job": f"={w.namespace}/{w.otel_service_name}",
    }
    queries = _queries(dash)
    assert len(queries) >= 30
    for q in queries:
        selectors, _ = shape(q)
        assert selectors, q
        for s in selectors:
            assert scope.items() <= s.items(), q
    for policy in policies:  # the same scope as the alert policies'
        selectors, _ = shape(policy["conditions"][0]["conditionPrometheusQueryLanguage"]["query"])
        assert any(scope.items() <= s.items() for s in selectors), policy["displayName"]


@pytest.mark.parametrize("gmp", [False, True])
def test_every_aggregation_keeps_the_labels_the_dashboard_filters_on(gmp: bool) -> None:
    """A pinned filter narrows a chart only where its series carry the label, so no sum drops a filtered label."""
    extra = (DashboardFilter(label="location", type="resource"), DashboardFilter(label="team"))
    p = _with_filters(_gmp(profile("gke-managed-otel")) if gmp else profile("gke-managed-otel"), *extra)
    dash = monitoring.dashboard(facts(p), extra=(*extra, DashboardFilter(label="team", type="user-metadata")))
    filtered = {f["labelKey"] for f in dash["dashboardFilters"] if not f["filterType"].endswith("METADATA_LABEL")}
    assert {"location", "team", naming.label("rl.algorithm", "gke-gmp-collector" if gmp else "gke-telemetry-api")} < (
        filtered
    )
    for q in _queries(dash):
        _, groupings = shape(q)
        assert groupings, q
        for labels in groupings:
            assert filtered <= set(labels), q


def test_the_project_dashboard_matches_its_clusters_and_keeps_the_cluster_label() -> None:
    dash = monitoring.dashboard(facts(profile("gke-managed-otel")), clusters=["rl-b", "rl-a"])
    assert dash["dashboardFilters"][0] == {"filterType": "METRIC_LABEL", "labelKey": "cluster"}
    for q in _queries(dash):
        selectors, groupings = shape(q)
        assert all(s["cluster"] == "=~rl-a|rl-b" and s["namespace"].startswith("=") for s in selectors), q
        assert all("cluster" in labels for labels in groupings), q


def test_a_profile_filter_on_a_label_the_queries_fix_is_refused() -> None:
    from rlobs.errors import RlobsError

    for label, kind in (("namespace", "resource"), ("cluster", "metric"), ("job", "resource")):
        extra = (DashboardFilter(label=label, type=kind),)  # type: ignore[arg-type]
        with pytest.raises(RlobsError, match=rf"gke.dashboardFilters\[0\].label: .* workload .*got '{label}'"):
            monitoring.dashboard(facts(profile("gke-managed-otel")), extra=extra)


def test_the_rendered_dashboard_carries_the_profiles_filters() -> None:
    from rlobs.pipeline import plan_bundle

    plan = plan_bundle(gke_profile("gke-standard-rayjob"))
    (dash,) = [f.data for f in plan.files if getattr(f, "path", "").startswith("monitoring/dashboards/")]
    expected = {"filterType": "RESOURCE_LABEL", "labelKey": "location", "stringValue": "us-central1-a"}
    assert expected in dash["dashboardFilters"]


def test_a_profile_filter_on_one_of_rlobs_own_labels_is_refused() -> None:
    from rlobs.errors import RlobsError

    extra = (DashboardFilter(label="rl.run.id"),)
    with pytest.raises(RlobsError, match=r"gke.dashboardFilters\[0\].label: expected a label rlobs does not filter on"):
        monitoring.dashboard(facts(profile("gke-managed-otel")), extra=extra)
    # A resource label of the same name is another filter.
    monitoring.dashboard(
        facts(profile("gke-managed-otel")), extra=(DashboardFilter(label="rl.run.id", type="resource"),)
    )


def test_google_client_libraries_accept_the_profiles_filters() -> None:
    module("google.cloud.monitoring_dashboard_v1", "Google's Dashboard message parses the dashboard JSON")
    from google.cloud.monitoring_dashboard_v1.types import Dashboard

    extra = tuple(DashboardFilter(label="x", type=t, value="v") for t in monitoring.FILTER_TYPES)  # type: ignore[arg-type]
    dash = Dashboard.from_json(
        json.dumps(monitoring.dashboard(facts(profile("gke-managed-otel")), extra=extra)), ignore_unknown_fields=False
    )
    assert [f.filter_type.name for f in dash.dashboard_filters][6:] == list(monitoring.FILTER_TYPES.values())
    assert dash.dashboard_filters[6].string_value == "v"
