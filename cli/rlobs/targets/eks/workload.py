"""The RL workload's wiring as a Kustomize Component: OTel/RL env, the scrape label, the Ray log sidecar."""

from __future__ import annotations

import copy
from typing import Any

from rlobs.bundle.filters import fluentbit_conf
from rlobs.rl import app, workloads
from rlobs.rl.catalog import Catalog
from rlobs.rl.identity import export_interval_env
from rlobs.rl.labels import bundle_metadata
from rlobs.targets.eks.monitors import APP_METRICS_PORT_NAME
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.eks.stack import MONITORING, OPENSEARCH_PORT, OTLP_GRPC_PORT, WORKLOAD_LABEL, stack
from rlobs.targets.eks.versions import FLUENT_BIT_SIDECAR_IMAGE

LOG_CONFIGMAP = "fluentbit-config"  # the name the reference stack's Ray recipe uses
RAY_LOGS_INDEX = "ray-logs"
LOGS_PATCH_FILE = "ray-logs-patch.yaml"
LOG_CONFIG_FILE = "fluentbit-config.yaml"
# KubeRay's head Service ports when the head container declares none (ray-operator utils/constant.go: name, port).
# Up to KubeRay 1.5.x a head that declares any port gets only the ones it declares (kuberay#400, fixed by PR #4512):
# adding rl-metrics alone would drop the dashboard, which RayJob submission and the head's monitor use. Kustomize
# merges ports by containerPort: a default port the head declares stays one entry, and one it declares without a
# protocol (as KubeRay's samples do) keeps its own name; one declared with protocol TCP takes KubeRay's name.
RAY_HEAD_PORTS = {"gcs-server": 6379, "dashboard": 8265, "client": 10001, "metrics": 8080}


def env(profile: EksProfile, catalog: Catalog) -> list[dict[str, Any]]:
    w = profile.workload
    eks = profile.eks
    endpoint = f"http://{stack(eks).collector_host}:{OTLP_GRPC_PORT}"  # http:// = plaintext gRPC (no TLS in-cluster)
    out: list[dict[str, Any]] = [
        {"name": "OTEL_SERVICE_NAME", "value": w.otel_service_name},
        {
            "name": "OTEL_RESOURCE_ATTRIBUTES",
            "value": f"service.namespace={w.namespace},service.instance.id=$(POD_NAME),"
            f"k8s.namespace.name={w.namespace},k8s.pod.name=$(POD_NAME)",
        },
        {"name": "OTEL_EXPORTER_OTLP_PROTOCOL", "value": "grpc"},
        {"name": "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "value": endpoint},
    ]
    if eks.metrics_pipeline == "otel-collector":
        out += [
            {"name": "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "value": endpoint},
            {"name": "OTEL_METRICS_EXPORTER", "value": "otlp"},
            export_interval_env(w),
        ]
    else:
        # The app serves /metrics itself (opentelemetry-exporter-prometheus) and the PodMonitor scrapes it.
        out += [
            {"name": "OTEL_METRICS_EXPORTER", "value": "prometheus"},
            {"name": "OTEL_EXPORTER_PROMETHEUS_HOST", "value": "0.0.0.0"},
            {"name": "OTEL_EXPORTER_PROMETHEUS_PORT", "value": str(w.metrics_port)},
        ]
    return app.container_env(profile, catalog, out)


def env_patch(profile: EksProfile, catalog: Catalog) -> dict[str, Any]:
    w = profile.workload

    def fragment(name: str) -> dict[str, Any]:
        container: dict[str, Any] = {"name": name, "env": env(profile, catalog)}
        if profile.eks.metrics_pipeline == "prometheus-exporter":
            ports = {APP_METRICS_PORT_NAME: w.metrics_port, **(RAY_HEAD_PORTS if w.kind in workloads.RAY_KINDS else {})}
            container["ports"] = [{"name": n, "containerPort": p, "protocol": "TCP"} for n, p in ports.items()]
        return {"metadata": {"labels": {WORKLOAD_LABEL: w.name}}, "spec": {"containers": [container]}}

    return workloads.patch(w, fragment)


def logs_patch(profile: EksProfile) -> dict[str, Any]:
    """The reference stack's Ray log recipe: a FluentBit sidecar tailing /tmp/ray on a shared emptyDir."""
    # A write-only user of the Ray log index, never the admin: every pod in the workload's namespace can read it.
    secret = stack(profile.eks).log_writer_secret
    sidecar = {
        "name": "fluentbit",
        "image": FLUENT_BIT_SIDECAR_IMAGE,
        "env": [
            {"name": "POD_LABELS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['ray.io/cluster']"}}},
            {"name": "OPENSEARCH_USERNAME", "valueFrom": {"secretKeyRef": {"name": secret, "key": "username"}}},
            {"name": "OPENSEARCH_PASSWORD", "valueFrom": {"secretKeyRef": {"name": secret, "key": "password"}}},
        ],
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"cpu": "100m", "memory": "128Mi"},
        },
        "volumeMounts": [
            {"name": "ray-logs", "mountPath": "/tmp/ray"},
            {"name": "fluentbit-config", "mountPath": "/fluent-bit/etc/fluent-bit.conf", "subPath": "fluent-bit.conf"},
        ],
    }

    def fragment(name: str) -> dict[str, Any]:
        spec = {
            "containers": [
                {"name": name, "volumeMounts": [{"name": "ray-logs", "mountPath": "/tmp/ray"}]},
                copy.deepcopy(sidecar),
            ],
            "volumes": [
                {"name": "ray-logs", "emptyDir": {}},
                {"name": "fluentbit-config", "configMap": {"name": LOG_CONFIGMAP}},
            ],
        }
        return {"spec": spec}

    return workloads.patch(profile.workload, fragment)


def fluentbit_config(profile: EksProfile) -> dict[str, Any]:
    host = f"{stack(profile.eks).opensearch_service}.{MONITORING}.svc"
    conf = fluentbit_conf(
        [
            ("SERVICE", [("Flush", "5"), ("Log_Level", "info")]),
            (
                "INPUT",
                [
                    ("Name", "tail"),
                    ("Path", "/tmp/ray/session_latest/logs/*"),
                    ("Tag", "ray"),
                    ("Path_Key", "file"),
                    ("Refresh_Interval", "5"),
                ],
            ),
            ("FILTER", [("Name", "modify"), ("Match", "ray"), ("Add", "POD_LABELS ${POD_LABELS}")]),
            (
                "OUTPUT",
                [
                    ("Name", "opensearch"),
                    ("Match", "ray"),
                    ("Host", host),
                    ("Port", str(OPENSEARCH_PORT)),
                    # Fluent Bit expands ${VAR} from the environment: the credentials come from the Secret via env.
                    ("HTTP_User", "${OPENSEARCH_USERNAME}"),
                    ("HTTP_Passwd", "${OPENSEARCH_PASSWORD}"),
                    ("Index", RAY_LOGS_INDEX),
                    ("Suppress_Type_Name", "On"),
                    ("Replace_Dots", "On"),
                    ("Trace_Error", "On"),
                    ("tls", "On"),
                    # opensearch-operator generates a self-signed CA; the connection is encrypted but not verified
                    # (the README's Security notes say how to verify it).
                    ("tls.verify", "Off"),
                ],
            ),
        ]
    )
    metadata = bundle_metadata(LOG_CONFIGMAP, profile.workload.namespace, profile.metadata.name)
    return workloads.configmap(metadata, {"fluent-bit.conf": conf})


def ray_logs(profile: EksProfile) -> bool:
    return profile.eks.ray_logs and profile.workload.kind in workloads.RAY_KINDS


def component(profile: EksProfile, *, with_logs: bool) -> dict[str, Any]:
    patches, resources = [workloads.ENV_PATCH_FILE], []
    if with_logs:
        patches.append(LOGS_PATCH_FILE)
        resources.append(LOG_CONFIG_FILE)
    return workloads.component(profile.workload, patches, resources)
