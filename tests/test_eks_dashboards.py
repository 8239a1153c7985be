"""The EKS dashboards: Grafana ConfigMaps the sidecar finds, metric names that exist (DCGM fields the exporter
collects, vLLM V1 names), PromQL that promtool accepts."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.targets import parse_profile
from rlobs.targets.eks.dashboards import inference_dashboard, training_dashboard
from testing.eks import EKS_PROFILES, of_kind
from testing.helpers import all_profiles, module, shared, tool

# vLLM V1 engine metrics (vllm/v1/metrics/loggers.py, 0.8 - 0.11); the V0 names below are gone or renamed.
VLLM_V1 = {
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:kv_cache_usage_perc",
    "vllm:prompt_tokens_total",
    "vllm:generation_tokens_total",
    "vllm:time_to_first_token_seconds_bucket",
    "vllm:e2e_request_latency_seconds_bucket",
    "vllm:inter_token_latency_seconds_bucket",
    "vllm:time_per_output_token_seconds_bucket",
    "vllm:request_success_total",
    "vllm:num_preemptions_total",
}
VLLM_GONE = {"vllm:gpu_cache_usage_perc", "vllm:cpu_cache_usage_perc", "vllm:avg_prompt_throughput_toks_per_s"}


def _configmaps(name: str) -> dict[str, dict[str, Any]]:
    return {p: o for p, o in of_kind(name, "ConfigMap").items() if p.startswith("rl-layer/dashboard-")}


def _dashboards(name: str) -> dict[str, dict[str, Any]]:
    out = {}
    for cm in _configmaps(name).values():
        ((key, text),) = cm["data"].items()
        out[key] = json.loads(text)
    return out


def _exprs(dashboard: dict[str, Any]) -> list[str]:
    return [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_dashboard_configmaps_are_valid_and_found_by_the_grafana_sidecar(name: str) -> None:
    module("kubernetes_validate", "validates the ConfigMaps against the Kubernetes schema")
    import kubernetes_validate

    cms = _configmaps(name)
    assert len(cms) == 3  # RL golden signals, training (Ray + GPU), inference (vLLM)
    for cm in cms.values():
        kubernetes_validate.validate(cm, "1.34", strict=True)
        assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
        assert cm["metadata"]["namespace"] == "monitoring"
    uids = [d["uid"] for d in _dashboards(name).values()]
    assert len(set(uids)) == 3 and all(len(u) <= 40 for u in uids)  # Grafana's uid limit


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_panels_query_the_prometheus_datasource_with_unique_ids(name: str) -> None:
    for key, board in _dashboards(name).items():
        if key.endswith("-rl.json"):
            continue  # the RL dashboard belongs to rlobs.grafana
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids)), key
        for panel in board["panels"]:
            if panel["type"] != "row":
                assert panel["datasource"] == {"type": "prometheus", "uid": "${cluster}"}, panel["title"]
        # every dashboard picks its cluster's Prometheus by the `cluster` variable, by default the cluster's own
        (variable,) = [v for v in board["templating"]["list"] if v["name"] == "cluster"]
        assert variable["type"] == "datasource" and variable["current"]["value"] == "prometheus"


def _dcgm_collected() -> set[str]:
    lines = shared("upstream/ai-on-eks/dcgm-exporter-metrics.csv").read_text().splitlines()
    return {line.split(",")[0].strip() for line in lines if line.strip() and not line.startswith("#")}


def test_gpu_panels_use_only_dcgm_fields_the_exporter_collects() -> None:
    used = {m for e in _exprs(training_dashboard(_profile())) for m in re.findall(r"DCGM_FI_[A-Z0-9_]+", e)}
    assert used, "the training dashboard has GPU panels"
    assert used <= _dcgm_collected(), used - _dcgm_collected()
    assert not {"DCGM_FI_DEV_NOT_A_FIELD"} <= _dcgm_collected()  # the check can fail


def test_vllm_panels_use_v1_metric_names() -> None:
    used = {m for e in _exprs(inference_dashboard(_profile())) for m in re.findall(r"vllm:[a-z0-9_]+", e)}
    assert used and used <= VLLM_V1, used - VLLM_V1
    assert not used & VLLM_GONE
    assert "vllm:kv_cache_usage_perc" in used


def _profile(name: str = "eks-jark") -> Any:
    return parse_profile(all_profiles()[name], f"{name}.yaml")


def test_long_bundle_names_keep_uids_within_grafanas_limit() -> None:
    long_name = "a" * 60
    text = all_profiles()["eks-jark"].replace("name: rl-eks\n", f"name: {long_name}\n", 1)
    prof = parse_profile(text, "long.yaml")
    uids = {training_dashboard(prof)["uid"], inference_dashboard(prof)["uid"]}
    assert len(uids) == 2 and all(len(u) <= 40 for u in uids)


def _promtool_check(exprs: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    # Grafana variables become match-all regexes, as Grafana interpolates "All".
    rules = [
        {"record": f"rlobs:dashboard_query_{i}", "expr": re.sub(r"\$[a-z_]+", ".*", e)} for i, e in enumerate(exprs)
    ]
    path = tmp / "queries.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}), encoding="utf-8")
    promtool = tool("promtool", "parses the dashboards' PromQL")
    return subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_promtool_parses_every_training_and_inference_query(tmp_path: Path) -> None:
    prof = _profile()
    exprs = _exprs(training_dashboard(prof)) + _exprs(inference_dashboard(prof))
    proc = _promtool_check(exprs, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_promtool_rejects_a_broken_query(tmp_path: Path) -> None:
    proc = _promtool_check(
        ["histogram_quantile(0.95, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket[5m]))"], tmp_path
    )
    assert proc.returncode != 0
