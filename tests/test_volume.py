"""rlobs.rl.volume and the targets' counts: series per family, samples per interval, tiered prices, budgets."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rlobs.rl.catalog import load_catalog
from rlobs.rl.volume import (
    Totals,
    amp_quota,
    as_data,
    cloud_monitoring_quota,
    in_cluster,
    over_budget,
    prices,
    rl_families,
    tiered,
)
from rlobs.sizing import plan_profile, text
from rlobs.targets import parse_profile
from testing.eks import remote_writing
from testing.helpers import GOOD, REPO, profile

CATALOG = load_catalog()
EKS = (REPO / "blueprints" / "eks-jark.yaml").read_text()


def test_a_run_has_every_bucket_sum_and_count_and_each_drop_reason() -> None:
    families = {f.name: f for f in rl_families(CATALOG, "otel-collector", 1, 15.0)}
    # 18 boundaries + the +Inf bucket, _sum and _count
    assert families["rl_loop_duration_milliseconds"].series == 21
    assert families["rl_telemetry_dropped_total"].series == len(CATALOG.attribute("drop_reason").values) == 5
    assert families["rl_train_loss"].series == 1
    assert sum(f.series for f in families.values()) == 181
    assert families["rl_train_loss"].samples_per_second == pytest.approx(1 / 15)


def test_runs_multiply_and_the_export_interval_divides() -> None:
    one = plan_profile(parse_profile(GOOD)).totals
    text = GOOD.replace("  container: trainer\n", "  container: trainer\n  exportInterval: 60s\n")
    four = plan_profile(parse_profile(text + "plan: {runs: 4}\n")).totals
    assert four.series == 4 * one.series
    assert four.samples_per_second == pytest.approx(2 * one.samples_per_second)  # 4 runs at half the rate


def test_tiered_prices_charge_each_tier_at_its_own_price() -> None:
    gmp = prices()["backends"]["gmp"]
    first = float(gmp["tiers"][0][0])
    assert tiered("gmp", 1e6) == pytest.approx(gmp["tiers"][0][1])
    above = tiered("gmp", first + 1e6)
    assert above == pytest.approx(first / 1e6 * gmp["tiers"][0][1] + gmp["tiers"][1][1])


def test_the_in_cluster_prometheus_warns_when_the_retention_outgrows_its_volume() -> None:
    fits = in_cluster(1000, 10.0, 86400.0, 50.0)
    assert not any("eks.prometheus.storageSize" in n for n in fits.notes)
    over = in_cluster(1000, 1e5, 30 * 86400.0, 50.0)
    assert over.notes[-1] == "more than the 50 GiB volume eks.prometheus.storageSize requests"
    assert over.usd_per_month == fits.usd_per_month  # the volume is billed by its size, not what fills it


def test_the_eks_bundle_estimates_what_it_scrapes_from_the_profile_counts() -> None:
    v = plan_profile(parse_profile(EKS + "plan: {nodes: 8, gpusPerNode: 8, runs: 2}\n"))
    by = {f.name: f for f in v.families}
    assert by["dcgm"].series == 64 * 51 and by["dcgm"].estimate
    assert by["node-exporter"].series == 8 * 1000
    assert "ray" in by  # a RayJob: Ray's agent is scraped on every node
    assert all(f.interval_s == 15 for f in v.families)  # the bundle's scrape interval
    assert [c.backend for c in v.costs] == ["prometheus"]
    text = EKS.replace("  metricsPipeline:", "  dcgmExporter: false\n  metricsPipeline:")
    no_dcgm = plan_profile(parse_profile(text))
    assert "dcgm" not in {f.name for f in no_dcgm.families}


def test_remote_write_to_a_workspace_adds_amp_and_its_quota() -> None:
    url = "https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-1/api/v1/remote_write"
    values = f"""  helmValues:
    kube-prometheus-stack:
      prometheus:
        prometheusSpec:
          remoteWrite: [{{url: "{url}"}}]
"""
    text = EKS.replace("  metricsPipeline:", values + "  metricsPipeline:") + "plan: {nodes: 100}\n"
    v = plan_profile(parse_profile(text))
    (amp,) = [c for c in v.costs if c.backend == "amp"]
    assert amp.endpoint == url and amp.usd_per_month > 0
    quota = int(prices()["backends"]["amp"]["quota_samples_per_second"])
    assert amp_quota(quota) == [] and f"{quota:,}" in amp_quota(quota + 1)[0]


def test_cloud_monitorings_series_per_monitored_resource_is_checked_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlobs.sizing import plan_fleet

    limit = int(prices()["backends"]["gmp"]["quota_series_per_resource"])
    assert cloud_monitoring_quota(limit) == [] and f"{limit:,}" in cloud_monitoring_quota(limit + 1)[0]
    one, four = (plan_profile(parse_profile(GOOD + f"plan: {{runs: {n}}}\n")) for n in (1, 4))
    assert one.costs[0].quota == four.costs[0].quota == ()  # each run's rank 0 is its own monitored resource
    # A limit below one run's 181 series: the profile's plan and a fleet of it are over, each cluster alone.
    monkeypatch.setitem(prices()["backends"]["gmp"], "quota_series_per_resource", 100)
    (over,) = plan_profile(parse_profile(GOOD)).costs[0].quota
    assert "181 series per run" in over
    fleet = plan_fleet("f", parse_profile(GOOD).plan.budget, [parse_profile(GOOD), parse_profile(GOOD)])
    assert [m for _, m in fleet.over] == [f"{one.name}: {over}"] * 2


def test_a_budget_reports_each_key_it_is_above() -> None:
    totals = Totals(series=200, samples_per_second=10.0, usd_per_month=1.0)
    budget = parse_profile(GOOD + "plan: {budget: {series: 100, moneyPerMonth: 5}}\n").plan.budget
    (over,) = over_budget(totals, budget)
    assert over[0] == ("plan", "budget", "series") and "200 active series" in over[1]


def test_the_levers_are_settings_with_their_effect() -> None:
    v = plan_profile(profile("gke-managed-otel"))
    levers = {lv.setting: lv for lv in v.levers}
    assert levers["workload.exportInterval"].after.samples_per_second == pytest.approx(
        levers["workload.exportInterval"].before.samples_per_second / 2
    )
    buckets = levers["workload.histogramBuckets"]
    assert buckets.after.series == buckets.before.series - 7 * 9  # 7 histograms, 9 boundaries fewer each
    # On EKS Prometheus scrapes every 15 s whatever the SDK's export interval: no lever there.
    assert "workload.exportInterval" not in {lv.setting for lv in plan_profile(parse_profile(EKS)).levers}


def test_histogram_buckets_are_what_the_rendered_module_records(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rlobs.main import app

    text = GOOD.replace("  container: trainer\n", "  container: trainer\n  histogramBuckets: [100, 1000, 60000]\n")
    (tmp_path / "p.yaml").write_text(text)
    result = CliRunner().invoke(app, ["render", str(tmp_path / "p.yaml"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    module = (tmp_path / "out" / "app" / "rlobs_telemetry.py").read_text()
    assert "_BOUNDS_0 = (100, 1000, 60000)" in module and "14400000" not in module
    # The drop reasons the plan counts are the module's.
    (reasons,) = [line for line in module.splitlines() if line.startswith("REASONS = ")]
    assert ast.literal_eval(reasons.split(" = ", 1)[1]) == CATALOG.attribute("drop_reason").values
    (buckets,) = [
        n
        for n in ast.parse(module).body
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "BUCKETS_OF_TIME"
    ]
    assert ast.literal_eval(buckets.value) == CATALOG.attribute("time_bucket").values
    assert plan_profile(parse_profile(text)).totals.series == 181 - 7 * 15


def test_histogram_buckets_must_ascend() -> None:
    from rlobs.errors import ProfileError

    text = GOOD.replace("  container: trainer\n", "  container: trainer\n  histogramBuckets: [100, 50]\n")
    with pytest.raises(ProfileError, match=r"workload.histogramBuckets: expected ascending boundaries"):
        parse_profile(text, "p.yaml")


def test_a_dropped_attribute_is_a_lever_the_profile_sets() -> None:
    text = GOOD.replace("  container: trainer\n", "  container: trainer\n  dropAttributes: [drop_reason]\n")
    v = plan_profile(parse_profile(text))
    reasons = len(CATALOG.attribute("drop_reason").values)
    assert v.totals.series == 181 - (reasons - 1)  # rl.telemetry.dropped: one series instead of one per reason
    (lever,) = [lv for lv in v.levers if lv.setting == "workload.dropAttributes"]
    assert lever.set and lever.change == "[] -> [drop_reason]"
    assert (lever.before.series, lever.after.series) == (181, v.totals.series)
    assert "workload.dropAttributes" not in {lv.setting for lv in plan_profile(parse_profile(GOOD)).levers}


@pytest.mark.parametrize("key", ["run_id", "time_bucket", "loop", "nope"])
def test_only_attributes_no_query_reads_can_be_dropped(key: str) -> None:
    from rlobs.errors import ProfileError

    text = GOOD.replace("  container: trainer\n", f"  container: trainer\n  dropAttributes: [{key}]\n")
    with pytest.raises(ProfileError, match=rf"workload.dropAttributes\[0\]: expected one of drop_reason .*'{key}'"):
        parse_profile(text, "p.yaml")


def test_aggregating_before_remote_write_sends_the_per_run_records_only() -> None:
    plain, aggregated = (plan_profile(parse_profile(remote_writing(EKS, a) + "plan: {nodes: 8}\n")) for a in (0, 1))
    (amp_all,), (amp_runs,) = ([c for c in v.costs if c.backend == "amp"] for v in (plain, aggregated))
    rl = sum(f.series for f in plain.families if f.source == "rl")
    assert amp_all.series == plain.totals.series and amp_runs.series == rl
    assert amp_runs.samples_per_second == pytest.approx(rl / 30)  # the records' evaluation interval
    assert amp_runs.usd_per_month < amp_all.usd_per_month / 10
    (lever,) = [lv for lv in aggregated.levers if lv.setting == "eks.prometheus.remoteWrite"]
    assert lever.set and lever.change == "all -> aggregated"
    assert (lever.before.usd_per_month, lever.after.usd_per_month) == (
        plain.totals.usd_per_month,
        aggregated.totals.usd_per_month,
    )
    assert lever.remote is not None and (lever.remote[0][0], lever.remote[1][0]) == (amp_all.series, rl)
    data = as_data(aggregated)["levers"][-1]["remoteWrite"]
    assert (data["before"]["series"], data["after"]["series"]) == (amp_all.series, rl)
    assert f"remote write {amp_all.series:,} -> {rl:,} series" in text(aggregated)
    # Unset, the plan tries it where the bundle remote-writes to a workspace.
    (tried,) = [lv for lv in plain.levers if lv.setting == "eks.prometheus.remoteWrite"]
    assert not tried.set and tried.after.usd_per_month == pytest.approx(aggregated.totals.usd_per_month)


def test_aggregating_needs_a_remote_write() -> None:
    from rlobs.errors import ProfileError

    text = EKS.replace("  metricsPipeline:", "  prometheus: {remoteWrite: aggregated}\n  metricsPipeline:")
    with pytest.raises(ProfileError, match=r"eks.prometheus.remoteWrite: expected a remote write to aggregate for"):
        parse_profile(text, "p.yaml")
