from __future__ import annotations

import json
import re

import pytest

from rlobs.rl import naming
from rlobs.rl.catalog import load_catalog
from rlobs.rl.grafana import dashboard_uid, rl_dashboard
from testing.bundles import facts
from testing.helpers import profile
from testing.promql import parse

CATALOG = load_catalog()


def _exprs(dash: dict) -> list[str]:
    return [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]


@pytest.mark.parametrize("pipeline", naming.PIPELINES)
def test_dashboard_model(pipeline: naming.Pipeline) -> None:
    dash = rl_dashboard(facts(profile("eks-jark"), pipeline))
    assert dash["uid"] == "rlobs-rl-eks-rl" and len(dash["uid"]) <= 40
    assert 36 <= dash["schemaVersion"] <= 41
    assert "id" not in dash
    ids = [p["id"] for p in dash["panels"]]
    assert ids == list(range(1, len(ids) + 1))
    for p in dash["panels"]:
        if p["type"] != "row":
            assert p["datasource"] == {"type": "prometheus", "uid": "${cluster}"}
            assert all(t["datasource"]["uid"] == "${cluster}" for t in p["targets"])
    names = [v["name"] for v in dash["templating"]["list"]]
    assert names == ["cluster", "run", "algorithm", "environment", "model"]
    for v in dash["templating"]["list"][1:]:
        assert v["datasource"]["uid"] == "${cluster}"
        label = naming.label_token(CATALOG.attribute({"run": "run_id"}.get(v["name"], v["name"])).name, pipeline)
        assert v["query"]["query"].endswith(f", {label})")
    assert rl_dashboard(facts(profile("eks-jark"), pipeline)) == dash  # deterministic


def test_every_catalog_metric_is_charted_with_the_filters() -> None:
    exprs = _exprs(rl_dashboard(facts(profile("eks-jark"), "otel-collector")))
    for m in CATALOG.metrics:
        part: naming.Part = "bucket" if m.kind == "histogram" else ""
        assert any(naming.series(m, "otel-collector", part) in e for e in exprs), m.name
    for e in exprs:
        for var, label in (("run", "rl_run_id"), ("algorithm", "rl_algorithm"), ("model", "rl_model_name")):
            assert f'{label}=~"${var}"' in e


def test_panels_have_latency_percentiles_and_units() -> None:
    dash = rl_dashboard(facts(profile("eks-jark"), "python-prometheus"))
    by_title = {p["title"]: p for p in dash["panels"]}
    loop = by_title["Loop iteration duration"]
    assert loop["fieldConfig"]["defaults"]["unit"] == "ms"
    assert [t["legendFormat"] for t in loop["targets"]] == [
        "{{rl_run_id}} p50",
        "{{rl_run_id}} p95",
        "{{rl_run_id}} p99",
    ]
    assert by_title["Model FLOPs utilisation"]["fieldConfig"]["defaults"]["unit"] == "percentunit"
    rows = [p["title"] for p in dash["panels"] if p["type"] == "row"]
    assert rows == ["Goodput", "Latency", "Throughput", "Training health", "Saturation"]


def test_panels_do_not_overlap() -> None:
    dash = rl_dashboard(facts(profile("eks-jark"), "otel-collector"))
    cells = set()
    for p in dash["panels"]:
        g = p["gridPos"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, p["title"]
                cells.add((x, y))


def test_the_cluster_variable_picks_a_prometheus_datasource_and_defaults_to_the_clusters_own() -> None:
    """On one cluster the variable's default is kube-prometheus-stack's own datasource (uid prometheus), so every
    panel queries what it queried before; on a fleet's hub it lists one datasource per cluster."""
    (variable,) = [
        v for v in rl_dashboard(facts(profile("eks-jark"))).get("templating")["list"] if v["type"] == "datasource"
    ]
    assert variable["name"] == "cluster" and variable["query"] == "prometheus"
    assert variable["current"]["value"] == "prometheus" and not variable["multi"] and not variable["includeAll"]


def test_long_names_keep_a_short_stable_uid() -> None:
    long, other = "x" * 60, "x" * 59 + "y"
    for suffix in ("rl", "train", "infer"):
        uid = dashboard_uid(long, suffix)
        assert len(uid) <= 40 and re.fullmatch(r"[a-z0-9-]+", uid)
        assert uid != dashboard_uid(other, suffix) and uid != dashboard_uid(long, suffix + "x")
    assert dashboard_uid("rl-eks", "rl") == "rlobs-rl-eks-rl"


@pytest.mark.parametrize("pipeline", naming.PIPELINES)
def test_every_query_parses(pipeline: naming.Pipeline) -> None:
    dash = rl_dashboard(facts(profile("eks-jark"), pipeline))
    for expr in _exprs(dash):
        parse(expr.replace("$__rate_interval", "1m"))
    json.dumps(dash)
