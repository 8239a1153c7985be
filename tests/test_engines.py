"""Rollout-engine metrics (data/engines.yaml): the inference dashboard and the engine PodMonitor use the names of the
profile's engine and metrics path, every name they query is in the packaged data, and the data accounts for every
vLLM name the reference stack's dashboard queries."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.errors import RlobsError
from rlobs.profile.model import ROLLOUT_PATHS, Rollout
from rlobs.rl.engines import load_engines
from rlobs.targets import parse_profile
from rlobs.targets.eks.dashboards import inference_dashboard
from rlobs.targets.eks.monitors import rollout_engine
from rlobs.targets.eks.profile import EksProfile
from testing.bundles import build
from testing.crdschema import errors
from testing.eks import schema as crd
from testing.helpers import all_profiles, eks_profile, module, shared, tool

# Every (engine, path) a profile can select.
COMBINATIONS = [(e, p) for e, paths in ROLLOUT_PATHS.items() for p in paths]
# An engine metric in PromQL: vllm:x, sglang:x or ray_vllm_x; histogram series suffixes belong to the base name.
ENGINE_NAME = re.compile(r"\b(?:ray_)?(?:vllm|sglang)[:_][a-zA-Z0-9_:]+")
SUFFIX = re.compile(r"_(bucket|sum|count)$")


def _with_rollout(rollout: dict[str, Any], name: str = "eks-jark") -> EksProfile:
    p = eks_profile(name)
    workload = p.workload.model_copy(update={"rollout": Rollout.model_validate(rollout)})
    return p.model_copy(update={"workload": workload})


def _exprs(board: dict[str, Any]) -> list[str]:
    exprs = [t["expr"] for panel in board["panels"] for t in panel.get("targets", [])]
    # Query variables carry PromQL; the cluster variable picks a datasource and has none.
    return exprs + [v["definition"] for v in board["templating"]["list"] if v["type"] == "query"]


def _used(board: dict[str, Any]) -> set[str]:
    return {SUFFIX.sub("", m) for e in _exprs(board) for m in ENGINE_NAME.findall(e)}


def _base_names(engine: str, path: str) -> set[str]:
    data = load_engines()
    return {SUFFIX.sub("", data.name(m, path)) for m in data.engine(engine).roles}


def test_the_profile_paths_are_the_packaged_ones() -> None:
    data = load_engines()
    assert {e.key: e.paths for e in data.engines} == ROLLOUT_PATHS


@pytest.mark.parametrize(("engine", "path"), COMBINATIONS)
def test_every_engine_metric_the_inference_dashboard_queries_is_packaged(engine: str, path: str) -> None:
    board = inference_dashboard(_with_rollout({"engine": engine, "metrics": path}))
    used = _used(board)
    assert len(used) >= 8, used
    assert used <= load_engines().names(engine, path), used - load_engines().names(engine, path)
    other = {e for e in ROLLOUT_PATHS if e != engine}
    assert not any(n.removeprefix("ray_").startswith(tuple(other)) for n in used)  # no other engine's names


def test_the_ray_path_uses_the_names_rays_own_vllm_dashboard_queries() -> None:
    # ray-project/ray@35bbe82 python/ray/dashboard/modules/metrics/dashboards/vllm_engine_panels.py queries these.
    ray_queries = {
        "ray_vllm_generation_tokens_total",
        "ray_vllm_kv_cache_usage_perc",
        "ray_vllm_num_requests_running",
        "ray_vllm_num_requests_waiting",
        "ray_vllm_time_to_first_token_seconds",
        "ray_vllm_e2e_request_latency_seconds",
    }
    used = _used(inference_dashboard(_with_rollout({"engine": "vllm", "metrics": "ray"})))
    assert ray_queries <= used
    assert not any(":" in n for n in used)
    engine_used = _used(inference_dashboard(_with_rollout({"engine": "vllm", "metrics": "engine"})))
    assert {"ray_" + n.replace(":", "_") for n in engine_used} == used


def test_the_shipped_blueprint_keeps_vllm_scraped_from_the_engine() -> None:
    p = eks_profile("eks-jark")
    assert p.workload.rollout == Rollout()
    board = inference_dashboard(p)
    assert board["title"].startswith("RL inference: vLLM (")
    assert all(n.startswith("vllm:") for n in _used(board))


def test_sglang_panels_skip_what_sglang_does_not_export() -> None:
    board = inference_dashboard(_with_rollout({"engine": "sglang"}))
    titles = [p["title"] for p in board["panels"]]
    assert "Preemptions" not in titles  # SGLang's retracted-requests gauge is not a preemption counter
    assert "Finished / aborted requests" in titles
    assert "sglang:token_usage" in _used(board)


def test_every_vllm_name_the_reference_dashboard_queries_is_packaged_or_retired() -> None:
    reference = shared("upstream/ai-ml-observability/ray-vllm-inference-dashboard.json").read_text()
    queried = {SUFFIX.sub("", m) for m in re.findall(r"vllm:[a-zA-Z0-9_]+", reference)}
    vllm = load_engines().engine("vllm")
    retired = {name for name, _ in vllm.retired}
    assert queried, "the reference dashboard queries vLLM metrics"
    assert queried <= _base_names("vllm", "engine") | retired, queried - _base_names("vllm", "engine") - retired
    # What the reference still queries under a retired name, rlobs draws under the current one.
    assert "vllm:gpu_cache_usage_perc" in queried & retired


@pytest.mark.parametrize(
    ("rollout", "message"),
    [
        (
            "{engine: sglang, metrics: ray}",
            "workload.rollout.metrics: expected one of engine for sglang (SGLang has no Ray metrics path), got 'ray'",
        ),
        ("{metrics: ray, port: 8000}", "workload.rollout.port: expected no port with metrics: ray"),
        ("{engine: tgi}", "workload.rollout.engine:"),
    ],
)
def test_impossible_rollouts_are_one_line_problems(rollout: str, message: str) -> None:
    text = all_profiles()["eks-jark"].replace("  run:\n", f"  rollout: {rollout}\n  run:\n", 1)
    with pytest.raises(RlobsError) as info:
        parse_profile(text, "p.yaml")
    lines = str(info.value).splitlines()
    assert len(lines) == 1 and lines[0].startswith("p.yaml:") and message in lines[0], lines


def test_no_engine_podmonitor_without_a_port() -> None:
    paths = {r.path for r in build(eks_profile("eks-jark"))}
    assert not any("rollout-engine" in p for p in paths)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_engine_port_gets_a_podmonitor_the_crd_accepts(engine: str) -> None:
    module("jsonschema", "validates the PodMonitor against the prometheus-operator CRD")
    p = _with_rollout({"engine": engine, "port": load_engines().engine(engine).default_port})
    found = [yaml.safe_load(r.text) for r in build(p) if r.path.endswith("rollout-engine-podmonitor.yaml")]
    assert found == [rollout_engine(p)]
    (obj,) = found
    assert obj["kind"] == "PodMonitor"
    assert obj["spec"]["podMetricsEndpoints"] == [
        {"portNumber": load_engines().engine(engine).default_port, "path": "/metrics", "interval": "15s"}
    ]
    assert obj["spec"]["selector"]["matchLabels"] == {"rlobs.io/workload": p.workload.name}
    for operator in ("v0.84.1", "v0.93.1"):
        assert errors(crd(f"prometheus-operator/crd-podmonitors.{operator}.yaml"), obj) == [], operator


@pytest.mark.slow
@pytest.mark.parametrize(("engine", "path"), COMBINATIONS)
def test_promtool_parses_every_inference_query_of_each_path(engine: str, path: str, tmp_path: Path) -> None:
    exprs = _exprs(inference_dashboard(_with_rollout({"engine": engine, "metrics": path})))[:-1]  # not label_values
    rules = [{"record": f"rlobs:q{i}", "expr": re.sub(r"\$[a-z_]+", ".*", e)} for i, e in enumerate(exprs)]
    file = tmp_path / "q.yaml"
    file.write_text(yaml.safe_dump({"groups": [{"name": "q", "rules": rules}]}), encoding="utf-8")
    promtool = tool("promtool", "parses the inference dashboard's PromQL")
    proc = subprocess.run([promtool, "check", "rules", str(file)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("rollout", "says", "serve_note"),
    [
        ({}, "vLLM (/metrics on the Ray Serve port)", True),
        ({"metrics": "ray"}, "vLLM via Ray (ray_vllm_* through Ray's metrics agent)", False),
        ({"engine": "sglang", "port": 30000}, "SGLang (/metrics on port 30000 of the workload's pods)", False),
        ({"engine": "sglang"}, "SGLang (/metrics: set workload.rollout.port to scrape it)", False),
    ],
)
def test_the_bundle_readme_says_where_engine_metrics_come_from(
    rollout: dict[str, Any], says: str, serve_note: bool
) -> None:
    p = _with_rollout(rollout)  # a RayJob: the Ray Serve note applies to vLLM scraped from the engine only
    readme = next(r.text for r in build(p) if r.path == "README.md")
    assert says in readme
    assert ("make_asgi_app" in readme) == serve_note
