"""Names of the EKS observability stack per mode, and its non-chart objects (OpenSearch cluster, log output)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlobs.rl.labels import bundle_labels, bundle_metadata
from rlobs.targets.eks.profile import EksProfile, EksSpec
from rlobs.targets.eks.versions import CHARTS, OPENSEARCH_VERSION

MONITORING = "monitoring"
ARGOCD = "argocd"
# kube-prometheus-stack selects monitors and rules by its release label (prometheus/prometheus.yaml with
# *SelectorNilUsesHelmValues: true); every rendered monitor carries it (prometheus-operator#3636).
RELEASE_LABEL = {"release": CHARTS["kube-prometheus-stack"].release}
GRAFANA_DASHBOARD_LABEL = {"grafana_dashboard": "1"}
# The fluent-operator chart's ClusterFluentBitConfig selects inputs, filters and outputs by this label.
FLUENTBIT_LABEL = {"fluentbit.fluent.io/enabled": "true"}
# Put on the RL workload's pods by the Kustomize patch, so the PodMonitor can find them whatever their labels.
WORKLOAD_LABEL = "rlobs.io/workload"
# Prometheus's Service in both modes: kube-prometheus-stack's, named after its release (versions.CHARTS).
PROMETHEUS_SERVICE = f"{CHARTS['kube-prometheus-stack'].release}-prometheus"
PROMETHEUS_PORT = 9090
OTLP_GRPC_PORT = 4317
PROM_EXPORTER_PORT = 8889  # the collector's prometheus exporter (8888 is its own telemetry)
OPENSEARCH_PORT = 9200


@dataclass(frozen=True, slots=True)
class Stack:
    opensearch_service: str
    opensearch_secret: str  # the admin user (keys username / password), namespace monitoring only
    log_writer_secret: str  # the Ray log sidecar's write-only user, in the workload's namespace

    @property
    def opensearch_url(self) -> str:
        return f"https://{self.opensearch_service}.{MONITORING}.svc:{OPENSEARCH_PORT}"

    @property
    def collector_host(self) -> str:
        return f"{CHARTS['opentelemetry-collector'].release}.{MONITORING}.svc.cluster.local"


def stack(eks: EksSpec) -> Stack:
    if eks.mode == "ai-on-eks":
        # The reference chart's names (chart/templates/opensearch/*.yaml @ 2467d9c9): serviceName my-cluster and
        # the Secret admin-credentials-secret it creates from opensearch.credentials.
        return Stack("my-cluster", "admin-credentials-secret", eks.opensearch.log_writer_secret)
    return Stack("opensearch", eks.opensearch.credentials_secret, eks.opensearch.log_writer_secret)


def opensearch_cluster(profile: EksProfile) -> dict[str, Any]:
    """The OpenSearchCluster (opensearch-operator 2.7.0 CRD) with Dashboards; credentials from existing Secrets."""
    eks = profile.eks
    os = eks.opensearch
    return {
        "apiVersion": "opensearch.opster.io/v1",
        "kind": "OpenSearchCluster",
        "metadata": bundle_metadata("opensearch", MONITORING, profile.metadata.name),
        "spec": {
            "general": {
                "serviceName": stack(eks).opensearch_service,
                "version": OPENSEARCH_VERSION,
                "httpPort": OPENSEARCH_PORT,
                "vendor": "opensearch",
                "setVMMaxMapCount": True,
            },
            "security": {
                # Both Secrets are created by the user (README); without securityConfigSecret the image's demo
                # users (admin/admin) would be active.
                "config": {
                    "adminCredentialsSecret": {"name": os.credentials_secret},
                    "securityConfigSecret": {"name": os.security_config_secret},
                },
                "tls": {"transport": {"generate": True, "perNode": True}, "http": {"generate": True}},
            },
            "dashboards": {
                "enable": True,
                "version": OPENSEARCH_VERSION,
                "replicas": 1,
                "opensearchCredentialsSecret": {"name": os.credentials_secret},
                "resources": {
                    "requests": {"cpu": "200m", "memory": "512Mi"},
                    "limits": {"cpu": "1", "memory": "1Gi"},
                },
            },
            "nodePools": [
                {
                    "component": "nodes",
                    "replicas": os.replicas,
                    "diskSize": os.storage_size,
                    "roles": ["cluster_manager", "data"],
                    "persistence": {
                        "pvc": {"storageClass": eks.prometheus.storage_class, "accessModes": ["ReadWriteOnce"]}
                    },
                    "resources": {
                        "requests": {"cpu": "500m", "memory": "2Gi"},
                        "limits": {"cpu": "2", "memory": "4Gi"},
                    },
                }
            ],
        },
    }


def log_output(profile: EksProfile) -> dict[str, Any]:
    """A ClusterOutput (fluent-operator 3.2.0 CRD) shipping node container logs to OpenSearch over TLS."""
    st = stack(profile.eks)
    labels = {**FLUENTBIT_LABEL, "fluentbit.fluent.io/component": "logging", **bundle_labels(profile.metadata.name)}
    return {
        "apiVersion": "fluentbit.fluent.io/v1alpha2",
        "kind": "ClusterOutput",
        # The labels the fluent-operator chart's own outputs carry (templates/fluentbit-output-opensearch.yaml).
        "metadata": {"name": "opensearch", "labels": labels},
        "spec": {
            # Tags of the chart's tail (kube.*) and systemd (service.*) inputs.
            "matchRegex": r"(?:kube|service)\.(.*)",
            "opensearch": {
                "host": f"{st.opensearch_service}.{MONITORING}.svc",
                "port": OPENSEARCH_PORT,
                "httpUser": _secret_value(st.opensearch_secret, "username"),
                "httpPassword": _secret_value(st.opensearch_secret, "password"),
                # The index the reference dashboards query (PPL `source = fluent-bit`).
                "index": "fluent-bit",
                "suppressTypeName": True,
                "replaceDots": True,
                "generateID": True,
                "traceError": True,
                "bufferSize": "20MB",
                # The operator's generated certificates are self-signed: encrypt, but do not verify the chain
                # (as the reference stack does; fluent-operator#1013).
                "tls": {"verify": False},
            },
        },
    }


def _secret_value(name: str, key: str) -> dict[str, Any]:
    return {"valueFrom": {"secretKeyRef": {"name": name, "key": key}}}
