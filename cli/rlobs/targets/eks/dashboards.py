"""Grafana dashboards of the EKS bundle beyond the RL golden signals: Ray + GPU training, and vLLM inference."""

from __future__ import annotations

from typing import Any

from rlobs.profile.model import EksProfile
from rlobs.rl.grafana import (
    DATASOURCE,
    PANEL_HEIGHT,
    SCHEMA_VERSION,
    WIDTH,
    cluster_variable,
    dashboard_uid,
    row,
    timeseries,
)
from rlobs.rl.panels import rows_height, two_per_row


def _grid(panels: list[tuple[str, list[tuple[str, str]], str]], y: int) -> list[dict[str, Any]]:
    """Two panels per row from y on (ids are numbered by _dashboard)."""
    return [timeseries(0, t, u, q, two_per_row(i, y, WIDTH // 2, PANEL_HEIGHT)) for i, (t, q, u) in enumerate(panels)]


def _query_var(name: str, label: str, query: str, *, include_all: bool) -> dict[str, Any]:
    return {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": query, "refId": name},
        "definition": query,
        "refresh": 2,
        "includeAll": include_all,
        "multi": include_all,
        "sort": 1,
        "current": {},
    }


def _dashboard(
    uid: str, title: str, tags: list[str], variables: list[dict[str, Any]], panels: list[Any]
) -> dict[str, Any]:
    for i, p in enumerate(panels, start=1):
        p["id"] = i
    return {
        "uid": uid,
        "title": title,
        "tags": ["rlobs", *tags],
        "schemaVersion": SCHEMA_VERSION,
        "editable": True,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "timezone": "browser",
        "templating": {"list": [cluster_variable(), *variables]},
        "panels": panels,
    }


def training_dashboard(profile: EksProfile) -> dict[str, Any]:
    """Ray cluster (KubeRay metrics, `ray_io_cluster` from the monitors) and DCGM GPU panels."""
    ns = profile.workload.namespace
    ray = 'ray_io_cluster=~"$ray_cluster"'
    gpu = f'namespace="{ns}"'
    ray_panels = [
        (
            "Ray node CPU utilisation",
            [(f"avg by (ray_io_cluster) (ray_node_cpu_utilization{{{ray}}})", "{{ray_io_cluster}}")],
            "percent",
        ),
        (
            "Ray node memory used",
            [(f"sum by (ray_io_cluster) (ray_node_mem_used{{{ray}}})", "{{ray_io_cluster}}")],
            "bytes",
        ),
        (
            "Ray GPU utilisation",
            [(f"avg by (ray_io_cluster) (ray_node_gpus_utilization{{{ray}}})", "{{ray_io_cluster}}")],
            "percent",
        ),
        (
            "Ray GPU memory used",
            [(f"sum by (ray_io_cluster) (ray_node_gram_used{{{ray}}})", "{{ray_io_cluster}}")],
            "decmbytes",
        ),
        ("Ray tasks by state", [(f"sum by (State) (ray_tasks{{{ray}}})", "{{State}}")], "short"),
        ("Ray actors by state", [(f"sum by (State) (ray_actors{{{ray}}})", "{{State}}")], "short"),
        ("Object store memory", [(f"sum by (Location) (ray_object_store_memory{{{ray}}})", "{{Location}}")], "bytes"),
        (
            "Active nodes (autoscaler)",
            [(f"sum by (NodeType) (ray_cluster_active_nodes{{{ray}}})", "{{NodeType}}")],
            "short",
        ),
    ]
    gpu_panels = [
        ("GPU utilisation", [(f"avg by (pod) (DCGM_FI_DEV_GPU_UTIL{{{gpu}}})", "{{pod}}")], "percent"),
        (
            "SM / tensor core / DRAM activity",
            [
                (f"avg(DCGM_FI_PROF_SM_ACTIVE{{{gpu}}})", "SM active"),
                (f"avg(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{gpu}}})", "tensor active"),
                (f"avg(DCGM_FI_PROF_DRAM_ACTIVE{{{gpu}}})", "DRAM active"),
            ],
            "percentunit",
        ),
        (
            "GPU framebuffer memory",
            [
                (f"sum by (pod) (DCGM_FI_DEV_FB_USED{{{gpu}}})", "used {{pod}}"),
                (f"sum by (pod) (DCGM_FI_DEV_FB_FREE{{{gpu}}})", "free {{pod}}"),
            ],
            "decmbytes",
        ),
        ("GPU power", [(f"sum by (pod) (DCGM_FI_DEV_POWER_USAGE{{{gpu}}})", "{{pod}}")], "watt"),
        ("GPU temperature", [(f"max by (pod) (DCGM_FI_DEV_GPU_TEMP{{{gpu}}})", "{{pod}}")], "celsius"),
        (
            "NVLink traffic",
            [
                (f"sum(rate(DCGM_FI_PROF_NVLINK_TX_BYTES{{{gpu}}}[5m]))", "tx"),
                (f"sum(rate(DCGM_FI_PROF_NVLINK_RX_BYTES{{{gpu}}}[5m]))", "rx"),
            ],
            "Bps",
        ),
        (
            "XID errors (last value)",
            [(f"max by (Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS{{{gpu}}})", "{{Hostname}} GPU {{gpu}}")],
            "short",
        ),
    ]
    panels: list[Any] = [row(0, "Ray cluster", 0), *_grid(ray_panels, 1)]
    y = 1 + rows_height(len(ray_panels), PANEL_HEIGHT)
    panels += [row(0, f"GPUs (DCGM) of pods in namespace {ns}", y), *_grid(gpu_panels, y + 1)]
    variables = [
        _query_var(
            "ray_cluster", "Ray cluster", "label_values(ray_node_cpu_utilization, ray_io_cluster)", include_all=True
        )
    ]
    return _dashboard(
        dashboard_uid(profile.metadata.name, "train"),
        f"RL training: Ray and GPUs ({profile.metadata.name})",
        ["ray", "gpu", "dcgm"],
        variables,
        panels,
    )


def inference_dashboard(profile: EksProfile) -> dict[str, Any]:
    """vLLM serving panels with the V1 engine metric names (vLLM >= 0.8; never vllm:gpu_cache_usage_perc)."""
    m = 'model_name=~"$model_name"'

    def quantiles(metric: str) -> list[tuple[str, str]]:
        return [
            (f"histogram_quantile({q}, sum by (le) (rate({metric}_bucket{{{m}}}[5m])))", f"p{int(q * 100)}")
            for q in (0.5, 0.95, 0.99)
        ]

    # vLLM 0.11 renamed time_per_output_token_seconds to inter_token_latency_seconds; `or` covers both.
    itl = (
        f"histogram_quantile(0.95, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket{{{m}}}[5m])))"
        f" or histogram_quantile(0.95, sum by (le) (rate(vllm:time_per_output_token_seconds_bucket{{{m}}}[5m])))"
    )
    vllm_panels = [
        (
            "Requests running / waiting",
            [
                (f"sum(vllm:num_requests_running{{{m}}})", "running"),
                (f"sum(vllm:num_requests_waiting{{{m}}})", "waiting"),
            ],
            "short",
        ),
        (
            "KV cache usage",
            [(f"max by (model_name) (vllm:kv_cache_usage_perc{{{m}}})", "{{model_name}}")],
            "percentunit",
        ),
        (
            "Token throughput",
            [
                (f"sum(rate(vllm:prompt_tokens_total{{{m}}}[5m]))", "prompt tokens/s"),
                (f"sum(rate(vllm:generation_tokens_total{{{m}}}[5m]))", "generation tokens/s"),
            ],
            "short",
        ),
        ("Time to first token", quantiles("vllm:time_to_first_token_seconds"), "s"),
        ("End-to-end request latency", quantiles("vllm:e2e_request_latency_seconds"), "s"),
        ("Inter-token latency p95", [(itl, "p95")], "s"),
        (
            "Finished requests by reason",
            [(f"sum by (finished_reason) (rate(vllm:request_success_total{{{m}}}[5m]))", "{{finished_reason}}")],
            "reqps",
        ),
        ("Preemptions", [(f"sum(rate(vllm:num_preemptions_total{{{m}}}[5m]))", "preemptions/s")], "short"),
    ]
    variables = [
        _query_var("model_name", "Model", "label_values(vllm:num_requests_running, model_name)", include_all=True)
    ]
    return _dashboard(
        dashboard_uid(profile.metadata.name, "infer"),
        f"RL inference: vLLM ({profile.metadata.name})",
        ["vllm", "inference"],
        variables,
        [row(0, "vLLM", 0), *_grid(vllm_panels, 1)],
    )
