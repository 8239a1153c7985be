"""The RL workload's wiring as a Kustomize Component: OTel/RL env, the scrape label, the Ray log sidecar."""

from __future__ import annotations

from typing import Any

from rlobs.catalog import Catalog
from rlobs.eks_monitors import APP_METRICS_PORT_NAME
from rlobs.eks_stack import MONITORING, OPENSEARCH_PORT, OTLP_GRPC_PORT, WORKLOAD_LABEL, stack
from rlobs.fields import duration_seconds
from rlobs.model import Profile
from rlobs.targets.common import rl_env
from rlobs.versions import FLUENT_BIT_SIDECAR_IMAGE

RAY_KINDS = ("RayJob", "RayCluster", "RayService")
LOG_CONFIGMAP = "fluentbit-config"  # the name the reference stack's Ray recipe uses
RAY_LOGS_INDEX = "ray-logs"
OPENAPI_FILE = "openapi.json"

_API = {
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "Job": "batch/v1",
    "JobSet": "jobset.x-k8s.io/v1alpha2",
    "RayJob": "ray.io/v1",
    "RayCluster": "ray.io/v1",
    "RayService": "ray.io/v1",
}

# Where the pod template that runs the RL loop sits. For Ray it is the head group: the driver of a RayJob and a
# RayService's Serve controller run there (https://docs.ray.io/en/latest/cluster/kubernetes/user-guides/).
_TEMPLATE = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "RayJob": ("spec", "rayClusterSpec", "headGroupSpec", "template"),
    "RayCluster": ("spec", "headGroupSpec", "template"),
    "RayService": ("spec", "rayClusterConfig", "headGroupSpec", "template"),
}

# JobSet nests the pod template in a list (replicatedJobs) whose entries Kustomize cannot match by a name rlobs
# knows, so its patch is a JSON 6902 patch on the first replicated job's first container.
_JOBSET_CONTAINER = "/spec/replicatedJobs/0/template/spec/template/spec/containers/0"


def api_version(kind: str) -> str:
    return _API[kind]


def env(profile: Profile, catalog: Catalog) -> list[dict[str, Any]]:
    """The container env: OTel SDK settings and the RL_* identity the instrumentation module reads."""
    w = profile.workload
    eks = profile.eks
    assert eks is not None
    endpoint = f"http://{stack(eks).collector_host}:{OTLP_GRPC_PORT}"  # http:// = plaintext gRPC (no TLS in-cluster)
    out: list[dict[str, Any]] = [
        # First: $(POD_NAME) below only expands variables defined earlier in the list.
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
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
            {"name": "OTEL_METRIC_EXPORT_INTERVAL", "value": str(duration_seconds(w.export_interval) * 1000)},
        ]
    else:
        # The app serves /metrics itself (opentelemetry-exporter-prometheus) and the PodMonitor scrapes it.
        out += [
            {"name": "OTEL_METRICS_EXPORTER", "value": "prometheus"},
            {"name": "OTEL_EXPORTER_PROMETHEUS_HOST", "value": "0.0.0.0"},
            {"name": "OTEL_EXPORTER_PROMETHEUS_PORT", "value": str(w.metrics_port)},
        ]
    # The run identity, under the names the instrumentation module reads (targets.common.identity_env).
    return out + rl_env(profile, catalog)


def _nest(path: tuple[str, ...], leaf: dict[str, Any]) -> dict[str, Any]:
    for key in reversed(path):
        leaf = {key: leaf}
    return leaf


def _head(profile: Profile) -> dict[str, Any]:
    w = profile.workload
    return {"apiVersion": _API[w.kind], "kind": w.kind, "metadata": {"name": w.name, "namespace": w.namespace}}


def env_patch(profile: Profile, catalog: Catalog) -> dict[str, Any] | list[dict[str, Any]]:
    """A strategic-merge patch (containers merge by name), or JSON 6902 operations for JobSet."""
    w = profile.workload
    eks = profile.eks
    assert eks is not None
    ports = [{"name": APP_METRICS_PORT_NAME, "containerPort": w.metrics_port, "protocol": "TCP"}]
    exporter = eks.metrics_pipeline == "prometheus-exporter"
    if w.kind == "JobSet":
        ops = [{"op": "add", "path": f"{_JOBSET_CONTAINER}/env/-", "value": e} for e in env(profile, catalog)]
        if exporter:
            ops.append({"op": "add", "path": f"{_JOBSET_CONTAINER}/ports/-", "value": ports[0]})
        return ops
    container: dict[str, Any] = {"name": w.container, "env": env(profile, catalog)}
    if exporter:
        container["ports"] = ports
    template = {"metadata": {"labels": {WORKLOAD_LABEL: w.name}}, "spec": {"containers": [container]}}
    return {**_head(profile), **_nest(_TEMPLATE[w.kind], template)}


def logs_patch(profile: Profile) -> dict[str, Any]:
    """The reference stack's Ray log recipe: a FluentBit sidecar tailing /tmp/ray on a shared emptyDir."""
    w = profile.workload
    eks = profile.eks
    assert eks is not None
    secret = stack(eks).opensearch_secret
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
    spec = {
        "containers": [
            {"name": w.container, "volumeMounts": [{"name": "ray-logs", "mountPath": "/tmp/ray"}]},
            sidecar,
        ],
        "volumes": [
            {"name": "ray-logs", "emptyDir": {}},
            {"name": "fluentbit-config", "configMap": {"name": LOG_CONFIGMAP}},
        ],
    }
    return {**_head(profile), **_nest(_TEMPLATE[w.kind], {"spec": spec})}


def fluentbit_config(profile: Profile) -> dict[str, Any]:
    """The sidecar's fluent-bit.conf: Ray session logs -> OpenSearch over TLS, credentials from env."""
    eks = profile.eks
    assert eks is not None
    host = f"{stack(eks).opensearch_service}.{MONITORING}.svc"
    conf = "\n".join(
        [
            "[SERVICE]",
            "    Flush        5",
            "    Log_Level    info",
            "",
            "[INPUT]",
            "    Name              tail",
            "    Path              /tmp/ray/session_latest/logs/*",
            "    Tag               ray",
            "    Path_Key          file",
            "    Refresh_Interval  5",
            "",
            "[FILTER]",
            "    Name   modify",
            "    Match  ray",
            "    Add    POD_LABELS ${POD_LABELS}",
            "",
            "[OUTPUT]",
            "    Name                opensearch",
            "    Match               ray",
            f"    Host                {host}",
            f"    Port                {OPENSEARCH_PORT}",
            "    HTTP_User           ${OPENSEARCH_USERNAME}",
            "    HTTP_Passwd         ${OPENSEARCH_PASSWORD}",
            f"    Index               {RAY_LOGS_INDEX}",
            "    Suppress_Type_Name  On",
            "    Replace_Dots        On",
            "    Trace_Error         On",
            "    tls                 On",
            # opensearch-operator generates a self-signed CA; the connection is encrypted but not verified.
            "    tls.verify          Off",
            "",
        ]
    )
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": LOG_CONFIGMAP, "namespace": profile.workload.namespace},
        "data": {"fluent-bit.conf": conf},
    }


def ray_logs(profile: Profile) -> bool:
    eks = profile.eks
    assert eks is not None
    return eks.ray_logs and profile.workload.kind in RAY_KINDS


def openapi(profile: Profile) -> dict[str, Any] | None:
    """Merge keys for the Ray kinds, so the strategic-merge patches merge containers by name instead of replacing
    the list (Kustomize knows only built-in types' merge keys; kustomize examples/customOpenAPIschema.md). The pod
    template refers to the built-in PodTemplateSpec, which carries the merge keys of containers, env and volumes."""
    w = profile.workload
    if w.kind not in RAY_KINDS:
        return None
    node: dict[str, Any] = {"$ref": "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"}
    for key in reversed(_TEMPLATE[w.kind][1:]):
        node = {"type": "object", "properties": {key: node}}
    group, version = _API[w.kind].split("/")
    definition = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": node,
        },
        "x-kubernetes-group-version-kind": [{"group": group, "kind": w.kind, "version": version}],
    }
    return {
        "swagger": "2.0",
        "info": {"title": f"rlobs merge keys for {w.kind}", "version": version},
        "paths": {},
        "definitions": {f"io.ray.{version}.{w.kind}": definition},
    }


def component(profile: Profile) -> dict[str, Any]:
    """kustomization.yaml of the Component the user adds to their workload's kustomization."""
    w = profile.workload
    target = {"kind": w.kind, "name": w.name}
    patches = [{"path": "otel-env-patch.yaml", "target": target}]
    resources = []
    if ray_logs(profile):
        patches.append({"path": "ray-logs-patch.yaml", "target": target})
        resources.append("fluentbit-config.yaml")
    out: dict[str, Any] = {"apiVersion": "kustomize.config.k8s.io/v1alpha1", "kind": "Component"}
    if openapi(profile) is not None:
        out["openapi"] = {"path": OPENAPI_FILE}
    if resources:
        out["resources"] = resources
    out["patches"] = patches
    return out
