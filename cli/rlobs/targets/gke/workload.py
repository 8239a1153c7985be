"""The workload wiring for GKE Managed OpenTelemetry: container env, the Kustomize component, the Instrumentation CR."""

from __future__ import annotations

from typing import Any

from rlobs.rl import app, workloads
from rlobs.rl.catalog import Catalog
from rlobs.rl.identity import export_interval_env
from rlobs.rl.labels import bundle_metadata
from rlobs.targets.gke.profile import GkeProfile

# The managed collector's Service (shared gke-managed-otel.md §1.4: namespace gke-managed-otel, Service
# opentelemetry-collector, OTLP gRPC on 4317, plaintext: no TLS listener).
COLLECTOR_NAME = "opentelemetry-collector"
COLLECTOR_NAMESPACE = "gke-managed-otel"
OTLP_GRPC_PORT = 4317
# An explicit http:// scheme: a schemeless gRPC endpoint makes the Python exporter open a TLS channel against the
# plaintext collector (opentelemetry-python exporter/otlp/proto/grpc/exporter.py; issues #1747, #2350).
ENDPOINT = f"http://$(OTEL_COLLECTOR_NAME).$(OTEL_COLLECTOR_NAMESPACE).svc.cluster.local:{OTLP_GRPC_PORT}"
RESOLVED_ENDPOINT = f"http://{COLLECTOR_NAME}.{COLLECTOR_NAMESPACE}.svc.cluster.local:{OTLP_GRPC_PORT}"

# The Instrumentation CRD of Managed OpenTelemetry (not the OpenTelemetry operator's): telemetry.googleapis.com.
INSTRUMENTATION_API = "telemetry.googleapis.com/v1alpha1"

INSTRUMENTATION_FILE = "instrumentation.yaml"


def container_env(profile: GkeProfile, catalog: Catalog, container: str | None = None) -> list[dict[str, Any]]:
    """Env for `container` (default workload.container), each $(VAR) above its use: Kubernetes expands in order."""
    gke, workload = profile.gke, profile.workload
    attributes = ",".join(
        [
            f"service.namespace={workload.namespace}",
            "service.instance.id=$(POD_NAME)",
            "k8s.pod.name=$(POD_NAME)",
            f"k8s.namespace.name={workload.namespace}",
            f"k8s.container.name={container or workload.container}",
            f"k8s.cluster.name={gke.cluster}",
        ]
    )
    env: list[dict[str, Any]] = []
    if gke.collector_endpoint is None:
        endpoint = ENDPOINT
        env += [
            {"name": "OTEL_COLLECTOR_NAME", "value": COLLECTOR_NAME},
            {"name": "OTEL_COLLECTOR_NAMESPACE", "value": COLLECTOR_NAMESPACE},
        ]
    else:
        endpoint = gke.collector_endpoint
    env += [
        {"name": "OTEL_EXPORTER_OTLP_PROTOCOL", "value": "grpc"},
        {"name": "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "value": endpoint},
        {"name": "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "value": endpoint},
    ]
    if gke.logs:
        env += [
            {"name": "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "value": endpoint},
            {"name": "OTEL_LOGS_EXPORTER", "value": "otlp"},
        ]
    env += [
        {"name": "OTEL_METRICS_EXPORTER", "value": "otlp"},
        {"name": "OTEL_TRACES_EXPORTER", "value": "otlp"},
        # Only takes effect when the code does not set service.name itself: Resource.create({SERVICE_NAME: ...})
        # in code silently wins over this (opentelemetry-sdk resources/__init__.py).
        {"name": "OTEL_SERVICE_NAME", "value": workload.otel_service_name},
        {"name": "OTEL_RESOURCE_ATTRIBUTES", "value": attributes},
        export_interval_env(workload),
    ]
    return app.container_env(profile, catalog, env)


def patch(profile: GkeProfile, catalog: Catalog) -> dict[str, Any]:
    """A strategic-merge patch that adds the env to the RL container, shaped for the workload's kind."""
    identity = profile.gke.workload_identity
    # Workload Identity maps IAM roles to this KSA; the pods must run as it to get them.
    account = {} if identity is None else {"serviceAccountName": identity.kubernetes_service_account}

    def fragment(container: str) -> dict[str, Any]:
        env = container_env(profile, catalog, container)
        return {"spec": {**account, "containers": [{"name": container, "env": env}]}}

    return workloads.patch(profile.workload, fragment)


def kustomization(profile: GkeProfile) -> dict[str, Any]:
    resources = [INSTRUMENTATION_FILE] if profile.gke.instrumentation_resource else []
    return workloads.component(profile.workload, [workloads.ENV_PATCH_FILE], resources)


def instrumentation(profile: GkeProfile) -> dict[str, Any]:
    return {
        "apiVersion": INSTRUMENTATION_API,
        "kind": "Instrumentation",
        "metadata": bundle_metadata(profile.metadata.name, profile.workload.namespace, profile.metadata.name),
        # {} selects all pods of the namespace (shared gke-managed-otel.md §1.5).
        "spec": {"selector": {}},
    }
