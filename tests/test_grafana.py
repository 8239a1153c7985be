from __future__ import annotations

import json
import re

import pytest

from helpers import profile
from promql_check import parse
from rlobs.rl import naming
from rlobs.rl.catalog import load_catalog
from rlobs.rl.grafana import dashboard_uid, rl_dashboard

CATALOG = load_catalog()


def _exprs(dash: dict) -> list[str]:
    return [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]


@pytest.mark.parametrize("pipeline", naming.PIPELINES)
def test_dashboard_model(pipeline: naming.Pipeline) -> None:
    dash = rl_dashboard(profile("eks-jark"), CATALOG, pipeline)
    assert dash["uid"] == "rlobs-rl-eks-rl" and len(dash["uid"]) <= 40
    assert 36 <= dash["schemaVersion"] <= 41
    assert "id" not in dash
    ids = [p["id"] for p in dash["panels"]]
    assert ids == list(range(1, len(ids) + 1))
    for p in dash["panels"]:
        if p["type"] != "row":
            assert p["datasource"] == {"type": "prometheus", "uid": "prometheus"}
            assert all(t["datasource"]["uid"] == "prometheus" for t in p["targets"])
    names = [v["name"] for v in dash["templating"]["list"]]
    assert names == ["run", "algorithm", "environment", "model"]
    for v in dash["templating"]["list"]:
        label = naming.label_token(CATALOG.attribute({"run": "run_id"}.get(v["name"], v["name"])).name, pipeline)
        assert v["query"]["query"].endswith(f", {label})")
    assert rl_dashboard(profile("eks-jark"), CATALOG, pipeline) == dash  # deterministic


def test_every_catalog_metric_is_charted_with_the_filters() -> None:
    exprs = _exprs(rl_dashboard(profile("eks-jark"), CATALOG, "otel-collector"))
    for m in CATALOG.metrics:
        part: naming.Part = "bucket" if m.kind == "histogram" else ""
        assert any(naming.series(m, "otel-collector", part) in e for e in exprs), m.name
    for e in exprs:
        for var, label in (("run", "rl_run_id"), ("algorithm", "rl_algorithm"), ("model", "rl_model_name")):
            assert f'{label}=~"${var}"' in e


def test_panels_have_latency_percentiles_and_units() -> None:
    dash = rl_dashboard(profile("eks-jark"), CATALOG, "python-prometheus")
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
    assert rows == ["Latency", "Throughput", "Training health", "Saturation"]


def test_panels_do_not_overlap() -> None:
    dash = rl_dashboard(profile("eks-jark"), CATALOG, "otel-collector")
    cells = set()
    for p in dash["panels"]:
        g = p["gridPos"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, p["title"]
                cells.add((x, y))


def test_long_names_keep_a_short_stable_uid() -> None:
    p = profile("eks-jark")
    long = p.model_copy(update={"metadata": p.metadata.model_copy(update={"name": "x" * 60})})
    other = p.model_copy(update={"metadata": p.metadata.model_copy(update={"name": "x" * 59 + "y"})})
    assert len(dashboard_uid(long)) <= 40 and re.fullmatch(r"[a-z0-9-]+", dashboard_uid(long))
    assert dashboard_uid(long) != dashboard_uid(other)


@pytest.mark.parametrize("pipeline", naming.PIPELINES)
def test_every_query_parses(pipeline: naming.Pipeline) -> None:
    dash = rl_dashboard(profile("eks-jark"), CATALOG, pipeline)
    for expr in _exprs(dash):
        parse(expr.replace("$__rate_interval", "1m"))
    json.dumps(dash)
