"""Grafana dashboards of the EKS bundle beyond the RL golden signals: Ray + GPU training, rollout-engine serving."""

from __future__ import annotations

from typing import Any

from rlobs.rl.engines import load_engines
from rlobs.rl.grafana import (
    DATASOURCE,
    PANEL_HEIGHT,
    SCHEMA_VERSION,
    WIDTH,
    BoardLinks,
    cluster_variable,
    dashboard_uid,
    row,
    timeseries,
)
from rlobs.rl.panels import rows_height, two_per_row
from rlobs.targets.eks.profile import EksProfile

NO_LINKS = BoardLinks((), (), ())


def _grid(panels: list[tuple[str, list[tuple[str, str]], str]], y: int, links: BoardLinks) -> list[dict[str, Any]]:
    """Two panels per row from y on (ids are numbered by _dashboard), each with the tracker's data links."""
    data = [dict(link) for link in links.data]
    return [
        timeseries(0, t, u, q, two_per_row(i, y, WIDTH // 2, PANEL_HEIGHT), links=data)
        for i, (t, q, u) in enumerate(panels)
    ]


def _query_var(name: str, label: str, query: str) -> dict[str, Any]:
    return {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": query, "refId": name},
        "definition": query,
        "refresh": 2,
        "includeAll": True,
        "multi": True,
        "sort": 1,
        "current": {},
    }


def _dashboard(
    uid: str, title: str, tags: list[str], variable: tuple[str, str, str], panels: list[Any], links: BoardLinks
) -> dict[str, Any]:
    for i, p in enumerate(panels, start=1):
        p["id"] = i
    extra = {"links": [dict(link) for link in links.dashboard]} if links.dashboard else {}
    return {
        "uid": uid,
        "title": title,
        "tags": ["rlobs", *tags],
        "schemaVersion": SCHEMA_VERSION,
        "editable": True,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "timezone": "browser",
        "templating": {"list": [cluster_variable(), _query_var(*variable), *(dict(v) for v in links.variables)]},
        "panels": panels,
        **extra,
    }


# The Ray cluster panels: title, aggregation, the label it splits by, KubeRay metric, unit.
_RAY = (
    ("Ray node CPU utilisation", "avg", "ray_io_cluster", "ray_node_cpu_utilization", "percent"),
    ("Ray node memory used", "sum", "ray_io_cluster", "ray_node_mem_used", "bytes"),
    ("Ray GPU utilisation", "avg", "ray_io_cluster", "ray_node_gpus_utilization", "percent"),
    ("Ray GPU memory used", "sum", "ray_io_cluster", "ray_node_gram_used", "decmbytes"),
    ("Ray tasks by state", "sum", "State", "ray_tasks", "short"),
    ("Ray actors by state", "sum", "State", "ray_actors", "short"),
    ("Object store memory", "sum", "Location", "ray_object_store_memory", "bytes"),
    ("Active nodes (autoscaler)", "sum", "NodeType", "ray_cluster_active_nodes", "short"),
)


def training_dashboard(profile: EksProfile, links: BoardLinks = NO_LINKS) -> dict[str, Any]:
    """Ray cluster (KubeRay metrics, `ray_io_cluster` from the monitors) and DCGM GPU panels."""
    ns = profile.workload.namespace
    ray = 'ray_io_cluster=~"$ray_cluster"'
    gpu = f'namespace="{ns}"'
    ray_panels = [
        (t, [(f"{agg} by ({by}) ({metric}{{{ray}}})", f"{{{{{by}}}}}")], unit) for t, agg, by, metric, unit in _RAY
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
    panels: list[Any] = [row(0, "Ray cluster", 0), *_grid(ray_panels, 1, links)]
    y = 1 + rows_height(len(ray_panels), PANEL_HEIGHT)
    panels += [row(0, f"GPUs (DCGM) of pods in namespace {ns}", y), *_grid(gpu_panels, y + 1, links)]
    return _dashboard(
        dashboard_uid(profile.metadata.name, "train"),
        f"RL training: Ray and GPUs ({profile.metadata.name})",
        ["ray", "gpu", "dcgm"],
        ("ray_cluster", "Ray cluster", "label_values(ray_node_cpu_utilization, ray_io_cluster)"),
        panels,
        links,
    )


# The inference panels, by engine role (data/engines.yaml): title, unit and the targets as (role, query template,
# legend). In templates {n} is the role's metric name, {m} the model filter, {model} the model label, {reason} the
# label splitting finished requests by reason.
_RATE = "sum(rate({n}{{{m}}}[5m]))"
_QUANTILES = tuple(
    (q, f"histogram_quantile({q}, sum by (le) (rate({{n}}_bucket{{{{{{m}}}}}}[5m])))") for q in (0.5, 0.95, 0.99)
)
_BY_REASON = "sum by ({reason}) (rate({n}{{{m}}}[5m]))"
_INFERENCE_PANELS: tuple[tuple[str, str, tuple[tuple[str, str, str], ...]], ...] = (
    (
        "Requests running / waiting",
        "short",
        (("requests_running", "sum({n}{{{m}}})", "running"), ("requests_waiting", "sum({n}{{{m}}})", "waiting")),
    ),
    ("KV cache usage", "percentunit", (("kv_cache_usage", "max by ({model}) ({n}{{{m}}})", "{{{{{model}}}}}"),)),
    (
        "Token throughput",
        "short",
        (("prompt_tokens", _RATE, "prompt tokens/s"), ("generation_tokens", _RATE, "generation tokens/s")),
    ),
    ("Time to first token", "s", tuple(("time_to_first_token", e, f"p{int(q * 100)}") for q, e in _QUANTILES)),
    ("End-to-end request latency", "s", tuple(("e2e_request_latency", e, f"p{int(q * 100)}") for q, e in _QUANTILES)),
    ("Inter-token latency p95", "s", (("inter_token_latency", _QUANTILES[1][1], "p95"),)),
    (
        "Finished requests by reason",
        "reqps",
        (("finished_requests", _BY_REASON, "{{{{{reason}}}}}"), ("aborted_requests", _RATE, "aborted")),
    ),
    ("Preemptions", "short", (("preemptions", _RATE, "preemptions/s"),)),
)
# vLLM 0.11 renamed time_per_output_token_seconds to inter_token_latency_seconds: the query on the new name falls
# back to the old one with `or`, so one dashboard serves both sides of the rename.
_FALLBACK = {"inter_token_latency": "inter_token_latency_before_0_11"}


def inference_dashboard(profile: EksProfile, links: BoardLinks = NO_LINKS) -> dict[str, Any]:
    rollout = profile.workload.rollout
    data = load_engines()
    engine = data.engine(rollout.engine)
    model = engine.model_label
    fmt = {"m": f'{model}=~"$model_name"', "model": model}

    def target(role: str, template: str, legend: str) -> tuple[str, str] | None:
        metric = engine.role(role)
        if metric is None:
            return None
        if "{reason}" in template and metric.reason_label is None:
            # No reason label on this engine's counter: the plain rate.
            template, legend = _RATE, "finished"
        args = {**fmt, "reason": metric.reason_label or ""}
        expr = template.format(n=data.name(metric, rollout.metrics), **args)
        fallback = engine.role(_FALLBACK.get(role, ""))
        if fallback is not None:
            expr += " or " + template.format(n=data.name(fallback, rollout.metrics), **args)
        return expr, legend.format(**args)

    finished = engine.role("finished_requests")
    panels = []
    for title, unit, targets in _INFERENCE_PANELS:
        drawn = [t for t in (target(*spec) for spec in targets) if t is not None]
        if "by reason" in title and finished is not None and finished.reason_label is None:
            title = "Finished / aborted requests"
        if drawn:
            panels.append((title, drawn, unit))
    running = engine.role("requests_running")
    if running is None:
        raise ValueError(f"data/engines.yaml: {engine.key} has no requests_running metric for the model variable")
    via = "" if rollout.metrics == "engine" else " via Ray"
    return _dashboard(
        dashboard_uid(profile.metadata.name, "infer"),
        f"RL inference: {engine.title}{via} ({profile.metadata.name})",
        [engine.key, "inference"],
        ("model_name", "Model", f"label_values({data.name(running, rollout.metrics)}, {model})"),
        [row(0, f"{engine.title}{via}", 0), *_grid(panels, 1, links)],
        links,
    )
