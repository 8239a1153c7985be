"""EKS with the JARK stack: plan the bundle (Terraform tfvars, Argo CD apps, Helm values, RL layer, workload)."""

from __future__ import annotations

from typing import Any

from rlobs.bundle.filters import to_json
from rlobs.bundle.spec import FileSpec, Plan
from rlobs.profile.model import Profile
from rlobs.rl import app, naming, workloads
from rlobs.rl.catalog import Catalog
from rlobs.rl.grafana import rl_dashboard
from rlobs.rl.naming import Pipeline
from rlobs.targets.eks import argocd, dashboards, monitors, security, stack, tfvars, values, workload
from rlobs.targets.eks.stack import GRAFANA_DASHBOARD_LABEL, MONITORING, RELEASE_LABEL
from rlobs.targets.eks.versions import (
    AI_ML_OBSERVABILITY_COMMIT,
    AI_ML_OBSERVABILITY_REPO,
    CHARTS,
    GRAFANA_OPENSEARCH_PLUGIN_VERSION,
)


def pipeline(profile: Profile) -> Pipeline:
    """How the RL metrics reach Prometheus, as rlobs.naming names it."""
    return naming.pipeline_for(profile)


def _dashboard_configmap(profile: Profile, name: str, dashboard: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": MONITORING,
            "labels": {**GRAFANA_DASHBOARD_LABEL, "app.kubernetes.io/part-of": "rlobs"},
        },
        "data": {f"{name}.json": to_json(dashboard)},
    }


def dashboard_files(profile: Profile, catalog: Catalog, pipe: Pipeline) -> dict[str, dict[str, Any]]:
    """file name (under rl-layer/) -> dashboard ConfigMap, picked up by the Grafana sidecar."""
    name = profile.metadata.name
    boards = {
        f"rlobs-{name}-rl": rl_dashboard(profile, catalog, pipe),
        f"rlobs-{name}-training": dashboards.training_dashboard(profile),
        f"rlobs-{name}-inference": dashboards.inference_dashboard(profile),
    }
    return {
        f"dashboard-{cm[len(f'rlobs-{name}-') :]}.yaml": _dashboard_configmap(profile, cm, d)
        for cm, d in boards.items()
    }


def plan(profile: Profile, catalog: Catalog) -> Plan:
    eks = profile.eks
    assert eks is not None
    pipe = pipeline(profile)
    variables = tfvars.tfvars(profile)
    files: list[FileSpec] = [
        FileSpec(
            "terraform/blueprint.tfvars",
            "text",
            template="eks/blueprint.tfvars.j2",
            context={"profile": profile, "variables": variables, "argocd_note": tfvars.ARGOCD_NOTE},
        ),
        FileSpec(
            "argocd/root-app.yaml",
            "yaml",
            data=argocd.root(profile),
            header="Apply once: kubectl apply -f argocd/root-app.yaml (Argo CD then syncs argocd/apps/).",
        ),
    ]
    files += [FileSpec(f"argocd/apps/{n}", "yaml", data=app) for n, app in sorted(argocd.applications(profile).items())]
    files += [
        FileSpec(
            f"values/{chart}.yaml",
            "yaml",
            data=vals,
            header=f"Helm values for {chart} {CHARTS[chart].version} (argocd/apps/ reads them via $values).",
        )
        for chart, vals in values.values(profile).items()
    ]
    if eks.mode == "rlobs":
        files += [
            FileSpec("stack/opensearch-cluster.yaml", "yaml", data=stack.opensearch_cluster(profile)),
            FileSpec("stack/fluentbit-output.yaml", "yaml", data=stack.log_output(eks)),
        ]
    layer = {**monitors.monitors(profile, catalog, pipe), **dashboard_files(profile, catalog, pipe)}
    files += [FileSpec(f"rl-layer/{n}", "yaml", data=obj) for n, obj in sorted(layer.items())]
    files += _workload_files(profile, catalog)
    files += app.app_files(profile, catalog, pipe)
    files.append(
        FileSpec(
            "README.md",
            "md",
            template="eks/README.md.j2",
            context={
                "profile": profile,
                "eks": eks,
                "charts": CHARTS,
                "release_label": RELEASE_LABEL,
                "stack": stack.stack(eks),
                "files": [(path, _describe(path)) for path in sorted([*(f.path for f in files), "README.md"])],
                "ray_logs": workload.ray_logs(profile),
                "ray_logs_index": workload.RAY_LOGS_INDEX,
                "security_config": security.security_config(workload.ray_logs(profile)),
                "log_writer_user": security.LOG_WRITER_USER,
                "log_writer_role": {
                    k: v for k, v in security.security_config(True)["roles.yml"].items() if k != "_meta"
                },
                "admin_hash_var": security.ADMIN_HASH_VAR,
                "log_writer_hash_var": security.LOG_WRITER_HASH_VAR,
                "grafana_plugin_version": GRAFANA_OPENSEARCH_PLUGIN_VERSION,
                "ref_repo": AI_ML_OBSERVABILITY_REPO,
                "ref_commit": AI_ML_OBSERVABILITY_COMMIT,
                "argocd_note": tfvars.ARGOCD_NOTE,
            },
        )
    )
    return Plan(profile.metadata.name, tuple(files))


_DESCRIPTIONS = {
    "terraform/blueprint.tfvars": "The ai-on-eks `infra/jark-stack` variables: cluster, KubeRay, DCGM, add-ons.",
    "argocd/root-app.yaml": "The app-of-apps root; the only object you apply by hand.",
    "argocd/apps/": "One Argo CD Application per component, pinned chart versions, sync waves.",
    "values/": "Helm values of each chart (read by the Applications through `$values`).",
    "stack/opensearch-cluster.yaml": "OpenSearch + Dashboards (opensearch-operator CR), credentials from Secrets.",
    "stack/fluentbit-output.yaml": "FluentBit ClusterOutput: node container logs to OpenSearch over TLS.",
    "rl-layer/dashboard-rl.yaml": "Grafana dashboard ConfigMap: the RL golden signals.",
    "rl-layer/dashboard-training.yaml": "Grafana dashboard ConfigMap: Ray and GPU (DCGM) training.",
    "rl-layer/dashboard-inference.yaml": "Grafana dashboard ConfigMap: vLLM inference on Ray Serve.",
    "rl-layer/rl-prometheusrule.yaml": "PrometheusRule: the RL alerts.",
    "rl-layer/ray-head-servicemonitor.yaml": "ServiceMonitor: Ray head (metrics, autoscaler, dashboard, Serve ports).",
    "rl-layer/ray-workers-podmonitor.yaml": "PodMonitor: Ray workers.",
    "rl-layer/dcgm-exporter-servicemonitor.yaml": "ServiceMonitor: NVIDIA DCGM exporter (GPU metrics).",
    "rl-layer/otel-collector-servicemonitor.yaml": "ServiceMonitor: the OpenTelemetry Collector's Prometheus exporter.",
    "rl-layer/rl-app-podmonitor.yaml": "PodMonitor: the RL app's own `/metrics`.",
    "workload/kustomization.yaml": "Kustomize Component for your workload's kustomization.",
    "workload/otel-env-patch.yaml": "OTel SDK env, RL_* identity env and the scrape label for the RL container.",
    "workload/openapi.json": "Merge keys of the CRD's lists, so Kustomize merges containers, env, volumes by name.",
    "workload/ray-logs-patch.yaml": "FluentBit sidecar + shared /tmp/ray volume on the Ray head.",
    "workload/fluentbit-config.yaml": "The sidecar's config: Ray session logs to OpenSearch.",
    "README.md": "This file.",
    **app.DESCRIPTIONS,
}


def _describe(path: str) -> str:
    found = [k for k in _DESCRIPTIONS if path == k or (k.endswith(("/", "-")) and path.startswith(k))]
    return _DESCRIPTIONS[max(found, key=len)] if found else "part of the RL instrumentation"


def _workload_files(profile: Profile, catalog: Catalog) -> list[FileSpec]:
    w = profile.workload
    files = [
        FileSpec(
            "workload/kustomization.yaml",
            "yaml",
            data=workload.component(profile),
            header=f"A Kustomize Component: add it under `components:` of the kustomization that builds {w.kind} "
            f"{w.name}.",
        ),
        FileSpec(f"workload/{workloads.ENV_PATCH_FILE}", "yaml", data=workload.env_patch(profile, catalog)),
    ]
    schema = workloads.openapi(w.kind)
    if schema is not None:
        files.append(FileSpec(f"workload/{workloads.OPENAPI_FILE}", "json", data=schema))
    if workload.ray_logs(profile):
        files += [
            FileSpec(f"workload/{workload.LOGS_PATCH_FILE}", "yaml", data=workload.logs_patch(profile)),
            FileSpec(f"workload/{workload.LOG_CONFIG_FILE}", "yaml", data=workload.fluentbit_config(profile)),
        ]
    return files
