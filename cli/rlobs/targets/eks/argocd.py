"""Argo CD Applications of the EKS bundle: the app-of-apps root, the pinned stack charts and the RL layer."""

from __future__ import annotations

from typing import Any

from rlobs.rl.labels import bundle_metadata
from rlobs.targets.eks.profile import EksProfile, GitOps
from rlobs.targets.eks.stack import ARGOCD, MONITORING
from rlobs.targets.eks.versions import CHARTS

FINALIZER = "resources-finalizer.argocd.argoproj.io"  # cascading delete (terraform destroy hangs without it)
IN_CLUSTER = "https://kubernetes.default.svc"

# Sync waves: charts that bring CRDs first, then the custom resources of those CRDs, then the collector, then
# the RL layer's monitors/rules/dashboards. The root app waits on each wave only when Argo CD assesses
# Application health (README: argocd-cm resource.customizations.health.argoproj.io_Application).
WAVE_CRDS = -2
WAVE_STACK_CONFIG = -1
WAVE_COLLECTOR = 0
WAVE_RL_LAYER = 1

_RETRY = {"limit": 10, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "5m"}}

# kube-prometheus-stack's admission webhooks get caBundle from the patch job and failurePolicy defaulted by the
# API server, so they show OutOfSync forever (prometheus-community/helm-charts#2516, #4914).
_WEBHOOK_DIFFS = [
    {
        "group": "admissionregistration.k8s.io",
        "kind": kind,
        "jqPathExpressions": [".webhooks[]?.clientConfig.caBundle", ".webhooks[]?.failurePolicy"],
    }
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
]


def _app(
    profile: EksProfile,
    name: str,
    wave: int,
    namespace: str,
    sources: list[dict[str, Any]],
    sync_options: list[str],
    ignore_differences: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"project": "default", "destination": {"server": IN_CLUSTER, "namespace": namespace}}
    spec |= {"source": sources[0]} if len(sources) == 1 else {"sources": sources}
    if ignore_differences:
        spec["ignoreDifferences"] = ignore_differences
        sync_options = [*sync_options, "RespectIgnoreDifferences=true"]
    spec["syncPolicy"] = {
        "automated": {"prune": True, "selfHeal": True},
        "syncOptions": sync_options,
        "retry": _RETRY,
    }
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {
            **bundle_metadata(name, ARGOCD, profile.metadata.name),
            "annotations": {"argocd.argoproj.io/sync-wave": str(wave)},
            "finalizers": [FINALIZER],
        },
        "spec": spec,
    }


def _git(gitops: GitOps, sub: str) -> dict[str, Any]:
    return {
        "repoURL": gitops.repo_url,
        "targetRevision": gitops.target_revision,
        "path": f"{gitops.path}/{sub}",
        "directory": {"recurse": False},
    }


def chart_app(profile: EksProfile, chart_key: str, wave: int, *, large_crds: bool) -> dict[str, Any]:
    gitops = profile.eks.gitops
    chart = CHARTS[chart_key]
    sources: list[dict[str, Any]] = [
        {
            "repoURL": chart.repo_url,
            "chart": chart.name,
            "targetRevision": chart.version,
            "helm": {
                # releaseName works with multi-source Applications (argo-cd#16498).
                "releaseName": chart.release,
                "valueFiles": [f"$values/{gitops.path}/values/{chart_key}.yaml"],
            },
        },
        {"repoURL": gitops.repo_url, "targetRevision": gitops.target_revision, "ref": "values"},
    ]
    options = ["CreateNamespace=true"]
    if large_crds:
        # The chart's CRDs exceed the 262144-byte last-applied annotation of client-side apply (argo-cd#8128).
        options.append("ServerSideApply=true")
    diffs = _WEBHOOK_DIFFS if chart_key == "kube-prometheus-stack" else None
    return _app(profile, chart.release, wave, chart.namespace, sources, options, diffs)


def _layer_app(profile: EksProfile, component: str, folder: str, wave: int) -> dict[str, Any]:
    """Server-side apply: dashboard ConfigMaps outgrow client-side apply's annotation. No dry run of a missing kind:
    its CRD (OpenSearchCluster, ClusterOutput, the ai-on-eks monitor CRDs) may not be established yet."""
    name = f"rlobs-{profile.metadata.name}-{component}"
    options = ["CreateNamespace=true", "ServerSideApply=true", "SkipDryRunOnMissingResource=true"]
    return _app(profile, name, wave, MONITORING, [_git(profile.eks.gitops, folder)], options)


def applications(profile: EksProfile) -> dict[str, dict[str, Any]]:
    """file name (under argocd/apps/) -> child Application."""
    apps: dict[str, dict[str, Any]] = {}
    if profile.eks.mode == "rlobs":
        for chart in ("kube-prometheus-stack", "opensearch-operator", "fluent-operator"):
            apps[f"{chart}.yaml"] = chart_app(profile, chart, WAVE_CRDS, large_crds=True)
        apps["stack-config.yaml"] = _layer_app(profile, "stack-config", "stack", WAVE_STACK_CONFIG)
    apps["otel-collector.yaml"] = chart_app(profile, "opentelemetry-collector", WAVE_COLLECTOR, large_crds=False)
    apps["rl-layer.yaml"] = _layer_app(profile, "rl-layer", "rl-layer", WAVE_RL_LAYER)
    return apps


def root(profile: EksProfile) -> dict[str, Any]:
    source = _git(profile.eks.gitops, "argocd/apps")
    app = _app(profile, f"rlobs-{profile.metadata.name}", 0, ARGOCD, [source], ["PruneLast=true"])
    del app["metadata"]["annotations"]
    return app
