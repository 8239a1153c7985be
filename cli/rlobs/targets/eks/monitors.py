"""The RL layer's scrape objects and rules: ServiceMonitors, PodMonitors and the PrometheusRule."""

from __future__ import annotations

from typing import Any

from rlobs.rl import naming
from rlobs.rl.facts import RlFacts, workload_job
from rlobs.rl.labels import bundle_labels
from rlobs.rl.promrules import rule_groups
from rlobs.targets.eks import alerting
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.eks.stack import MONITORING, RELEASE_LABEL, WORKLOAD_LABEL
from rlobs.targets.eks.versions import CHARTS

API = "monitoring.coreos.com/v1"
RAY_CLUSTER_LABEL = "ray.io/cluster"
# The name of the container port the Kustomize patch declares for the app's /metrics (<= 15 characters).
APP_METRICS_PORT_NAME = "rl-metrics"
# How often Prometheus scrapes every endpoint rlobs monitors (the collector's own telemetry at twice that); rlobs plan
# counts samples at this interval.
SCRAPE_INTERVAL = "15s"
# eks.prometheus.remoteWrite: aggregated: the per-run records' prefix (the remote write keeps only these) and how
# often they are evaluated, so each is one sample per interval on the remote side.
AGGREGATED = "run:"
REMOTE_WRITE_INTERVAL = "30s"


def _object(kind: str, name: str, profile: EksProfile, spec: dict[str, Any]) -> dict[str, Any]:
    labels = {**RELEASE_LABEL, **bundle_labels(profile.metadata.name)}
    meta = {"name": name, "namespace": MONITORING, "labels": labels}
    return {"apiVersion": API, "kind": kind, "metadata": meta, "spec": spec}


def _endpoint(port: str, **extra: Any) -> dict[str, Any]:
    return {"port": port, "path": "/metrics", "interval": SCRAPE_INTERVAL, **extra}


def _select(labels: dict[str, str], namespace: str) -> dict[str, Any]:
    return {"selector": {"matchLabels": labels}, "namespaceSelector": {"matchNames": [namespace]}}


# What each file monitors() renders is, for the bundle README.
DESCRIPTIONS = {
    "ray-head-servicemonitor.yaml": "ServiceMonitor: Ray head (metrics, autoscaler, dashboard, Serve ports).",
    "ray-workers-podmonitor.yaml": "PodMonitor: Ray workers.",
    "dcgm-exporter-servicemonitor.yaml": "ServiceMonitor: NVIDIA DCGM exporter (GPU metrics).",
    "otel-collector-servicemonitor.yaml": "ServiceMonitor: the OpenTelemetry Collector's Prometheus exporter.",
    "rl-app-podmonitor.yaml": "PodMonitor: the RL app's own `/metrics`.",
    "rollout-engine-podmonitor.yaml": "PodMonitor: the rollout engine's own `/metrics` (workload.rollout.port).",
    "rl-prometheusrule.yaml": "PrometheusRule: the RL alerts.",
    "alertmanagerconfig.yaml": "AlertmanagerConfig: the profile's receivers for the RL alerts (ai-on-eks mode).",
}


def monitors(profile: EksProfile, facts: RlFacts) -> dict[str, dict[str, Any]]:
    """file name (under rl-layer/) -> object."""
    eks = profile.eks
    out: dict[str, dict[str, Any]] = {}
    if eks.mode == "rlobs":
        # In ai-on-eks mode the reference chart already ships ray-head-monitor and ray-workers-monitor
        # (chart/templates/endpoints/); rendering them again would scrape every Ray pod twice.
        out["ray-head-servicemonitor.yaml"] = ray_head(profile)
        out["ray-workers-podmonitor.yaml"] = ray_workers(profile)
    if eks.dcgm_exporter:
        out["dcgm-exporter-servicemonitor.yaml"] = dcgm(profile)
    if eks.metrics_pipeline == "otel-collector":
        out["otel-collector-servicemonitor.yaml"] = collector(profile)
    else:
        out["rl-app-podmonitor.yaml"] = app(profile)
    if profile.workload.rollout.port is not None:
        out["rollout-engine-podmonitor.yaml"] = rollout_engine(profile)
    out["rl-prometheusrule.yaml"] = rules(profile, facts)
    if eks.mode == "ai-on-eks" and eks.alertmanager_receivers:
        out[alerting.CONFIG_FILE] = alerting.alertmanager_config_cr(profile)
    return out


def ray_head(profile: EksProfile) -> dict[str, Any]:
    """KubeRay head Services: Ray metrics (8080), autoscaler (44217), dashboard (44227), Ray Serve (8000, where a Ray
    Serve app mounts vLLM's /metrics, as the reference stack's examples/inference do). Ports per kuberay#963/#1493."""
    spec = {
        "jobLabel": "ray-head",
        **_select({"ray.io/node-type": "head"}, profile.workload.namespace),
        "targetLabels": [RAY_CLUSTER_LABEL],
        "endpoints": [_endpoint(port) for port in ("metrics", "as-metrics", "dash-metrics", "serve")],
    }
    return _object("ServiceMonitor", "ray-head", profile, spec)


def ray_workers(profile: EksProfile) -> dict[str, Any]:
    """Ray worker pods (no Service exists for them), with the reference stack's relabelings."""
    spec = {
        "jobLabel": "ray-workers",
        **_select({"ray.io/node-type": "worker"}, profile.workload.namespace),
        "podMetricsEndpoints": [
            _endpoint(
                "metrics",
                relabelings=[
                    {"action": "replace", "sourceLabels": [f"__meta_kubernetes_pod_{source}"], "targetLabel": target}
                    for source, target in (("label_ray_io_cluster", "ray_io_cluster"), ("host_ip", "node_instance"))
                ],
            )
        ],
    }
    return _object("PodMonitor", "ray-workers", profile, spec)


def dcgm(profile: EksProfile) -> dict[str, Any]:
    """The dcgm-exporter that ai-on-eks installs in `monitoring` (chart dcgm-exporter 4.8.1, port `metrics` 9400)."""
    spec = {
        "jobLabel": "app.kubernetes.io/name",
        **_select({"app.kubernetes.io/name": "dcgm-exporter"}, MONITORING),
        # honorLabels keeps the exporter's namespace/pod/container labels (the GPU's consumer) instead of
        # renaming them exported_*; per-pod GPU panels depend on them (dcgm-exporter#342).
        "endpoints": [_endpoint("metrics", honorLabels=True)],
    }
    return _object("ServiceMonitor", "dcgm-exporter", profile, spec)


def collector(profile: EksProfile) -> dict[str, Any]:
    release = CHARTS["opentelemetry-collector"].release
    labels = {
        "app.kubernetes.io/name": "opentelemetry-collector",
        "app.kubernetes.io/instance": release,
        "component": "standalone-collector",
    }
    spec = {
        **_select(labels, MONITORING),
        "endpoints": [
            # honorLabels: the exporter's job/instance labels (service.name / service.instance.id of the RL
            # app) win over the collector's own target labels.
            _endpoint("prom-exporter", honorLabels=True),
            _endpoint("metrics", interval="30s"),
        ],
    }
    return _object("ServiceMonitor", "otel-collector", profile, spec)


def app(profile: EksProfile) -> dict[str, Any]:
    w = profile.workload
    # The workload patch labels the RL pods of every kind (a JobSet's named replicatedJobs only) with WORKLOAD_LABEL.
    spec = {
        **_select({WORKLOAD_LABEL: w.name}, w.namespace),
        # The job label the collector path gets from the app's resource (service.namespace/service.name), so the RL
        # alerts select the workload by one label on both pipelines.
        "podMetricsEndpoints": [
            _endpoint(
                APP_METRICS_PORT_NAME,
                relabelings=[{"action": "replace", "targetLabel": "job", "replacement": workload_job(profile)}],
            )
        ],
    }
    return _object("PodMonitor", f"{w.name}-app", profile, spec)


def rollout_engine(profile: EksProfile) -> dict[str, Any]:
    """By port number: the framework starts the engine in the pod (verl, SkyRL, NeMo-RL), so no container port names
    it. `portNumber` is in the PodMonitor CRD of the pinned prometheus-operator (v0.84.1)."""
    w = profile.workload
    rollout = w.rollout
    spec = {
        "jobLabel": WORKLOAD_LABEL,
        **_select({WORKLOAD_LABEL: w.name}, w.namespace),
        "podMetricsEndpoints": [{"portNumber": rollout.port, "path": "/metrics", "interval": SCRAPE_INTERVAL}],
    }
    return _object("PodMonitor", f"{w.name}-{rollout.engine}", profile, spec)


def rules(profile: EksProfile, facts: RlFacts) -> dict[str, Any]:
    groups = rule_groups(facts)
    if profile.eks.prometheus.remote_write == "aggregated":
        groups.append(per_run(profile, facts))
    return _object("PrometheusRule", f"rlobs-{profile.metadata.name}", profile, {"groups": groups})


def per_run(profile: EksProfile, facts: RlFacts) -> dict[str, Any]:
    """remoteWrite: aggregated: each RL series summed per run, the only series the remote write keeps (values.py)."""
    pipeline, records = facts.pipeline, []
    # Labelled with the bundle's scope as its other records are: two bundles' records never collide.
    scope = {"labels": {naming.label(k, pipeline): v for k, v in facts.scope.items()}} if facts.scope else {}
    for m in facts.catalog.metrics:
        parts: tuple[naming.Part, ...] = ("bucket", "sum", "count") if m.kind == "histogram" else ("",)
        for part in parts:
            by = [naming.label(a, pipeline) for a in m.attributes] + (["le"] if part == "bucket" else [])
            name = naming.series(m, pipeline, part)
            expr = f"sum by ({', '.join(by)}) ({naming.selector(m, pipeline, part, facts.scope)})"
            records.append({"record": f"{AGGREGATED}{name}:sum", "expr": expr, **scope})
    return {"name": f"rlobs-{profile.metadata.name}.remote-write", "interval": REMOTE_WRITE_INTERVAL, "rules": records}
