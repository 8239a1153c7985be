"""The one table of pinned versions: Helm charts, images and upstream revisions the EKS bundle deploys."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Chart:
    name: str  # chart name in the repository
    repo_url: str  # Helm repository
    version: str  # pinned chart version, never a range or HEAD
    release_name: str = ""  # Helm release name (names Services and the `release` label), when not the chart's name
    namespace: str = "monitoring"

    @property
    def release(self) -> str:
        return self.release_name or self.name


# The versions the AI/ML observability reference stack pins (awslabs/ai-ml-observability-reference-architecture
# chart/Chart.yaml @ 2467d9c9), so both stack modes run the same operators and CRDs. kube-prometheus-stack 76.3.0
# ships prometheus-operator v0.84.1 and the grafana 9.3.2 subchart (which has `admin.existingSecret`). Its release
# name makes the Services kube-prometheus-stack-grafana/-prometheus and the monitor selector label `release:
# kube-prometheus-stack`, exactly as the ai-on-eks ArgoCD Application does. The collector chart is
# open-telemetry/opentelemetry-helm-charts dd5665c0 (collector appVersion 0.158.0).
CHARTS: dict[str, Chart] = {
    c.name: c
    for c in (
        Chart("kube-prometheus-stack", "https://prometheus-community.github.io/helm-charts", "76.3.0"),
        Chart("opensearch-operator", "https://opensearch-project.github.io/opensearch-k8s-operator/", "2.7.0"),
        Chart("fluent-operator", "https://fluent.github.io/helm-charts", "3.2.0"),
        Chart(
            "opentelemetry-collector",
            "https://open-telemetry.github.io/opentelemetry-helm-charts",
            "0.170.0",
            "otel-collector",
        ),
    )
}

# OpenSearch and Dashboards: 2.19, the last 2.x minor (the line OpenSearch keeps patching beside 3.x), at 2.19.2,
# the newest release opensearch-operator 2.7.0 is tested with (the compatibility table of opensearch-k8s-operator
# README.md from v2.8.0 on: operator 2.7.0 supports 1.3.x to 2.19.2). The reference stack still runs 2.14.0, out of
# maintenance. OpenSearch 3.x needs operator 2.8 or later (whose chart the bundle does not pin yet).
OPENSEARCH_VERSION = "2.19.2"

# The image kube-prometheus-stack's admission-webhook Jobs run to create and patch the webhook certificate. The
# chart 76.3.0 default, registry.k8s.io/ingress-nginx/kube-webhook-certgen, is from the retired ingress-nginx
# project; from 82.x on the chart pins this maintained fork instead, with the same Job arguments (82.16.0 and 88.5.3
# values.yaml change only the image), at the tag 88.5.3 pins.
WEBHOOK_CERTGEN_IMAGE = {"registry": "ghcr.io", "repository": "jkroepke/kube-webhook-certgen", "tag": "1.8.7"}

# The Grafana OpenSearch datasource plugin, pinned: a bare plugin id makes Grafana install whatever release
# grafana.com serves at every pod start. 2.30.0 (github.com/grafana/opensearch-datasource/releases/tag/v2.30.0,
# 2025-09-15) has the PPL support the datasource uses and requires Grafana >=10.4.0 (src/plugin.json
# grafanaDependency); the grafana 9.3.2 subchart of kube-prometheus-stack 76.3.0 runs Grafana 12.
GRAFANA_OPENSEARCH_PLUGIN = "grafana-opensearch-datasource"
GRAFANA_OPENSEARCH_PLUGIN_VERSION = "2.30.0"

# The collector distribution with the opensearch exporter and basicauth extension (contrib); the tag follows the
# chart's appVersion when left empty, so pinning the chart pins the image.
OTEL_COLLECTOR_IMAGE = "otel/opentelemetry-collector-contrib"

# The Ray log sidecar of the reference stack's examples/inference (fluent/fluent-bit:3.2.2).
FLUENT_BIT_SIDECAR_IMAGE = "fluent/fluent-bit:3.2.2"

# The fluent-bit image fluent-operator 3.2.0 deploys for the node DaemonSet (chart default is 3.1.7; the reference
# stack's FluentBit CR runs 3.1.8, the patch release with the fixes fluent-operator 3.2.0 was tested with).
FLUENT_BIT_DAEMONSET_TAG = "3.1.8"

# opensearch-operator 2.7.0 defaults kube-rbac-proxy to gcr.io/kubebuilder/kube-rbac-proxy:v0.15.0, which was
# deleted from GCR (opensearch-k8s-operator#1372); the reference stack mirrors it here.
KUBE_RBAC_PROXY_IMAGE = "public.ecr.aws/aws-observability/mirror-kube-rbac-proxy"

# The reference stack that `enable_ai_ml_observability_stack` deploys tracks `targetRevision: HEAD` of this repo
# (infra/base/terraform/argocd-addons/ai-ml-observability.yaml); the README tells users to pin it to this commit.
AI_ML_OBSERVABILITY_REPO = "https://github.com/awslabs/ai-ml-observability-reference-architecture.git"
AI_ML_OBSERVABILITY_COMMIT = "2467d9c952d4f929b5d9743e608a4b67e809e5cc"
