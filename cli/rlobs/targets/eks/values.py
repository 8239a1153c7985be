"""Helm values of each chart the EKS bundle deploys, as data (written to values/<chart>.yaml)."""

from __future__ import annotations

from typing import Any

from rlobs.rl.grafana import grafana_uid
from rlobs.targets.eks import alerting
from rlobs.targets.eks.helmvalues import EKS_UNSCRAPABLE, deep_merge
from rlobs.targets.eks.monitors import AGGREGATED
from rlobs.targets.eks.profile import EksProfile, EksSpec, Resources
from rlobs.targets.eks.stack import (
    GRAFANA_DASHBOARD_LABEL,
    OTLP_GRPC_PORT,
    PROM_EXPORTER_PORT,
    RELEASE_LABEL,
    stack,
)
from rlobs.targets.eks.versions import (
    FLUENT_BIT_DAEMONSET_TAG,
    GRAFANA_OPENSEARCH_PLUGIN,
    GRAFANA_OPENSEARCH_PLUGIN_VERSION,
    KUBE_RBAC_PROXY_IMAGE,
    OPENSEARCH_VERSION,
    OTEL_COLLECTOR_IMAGE,
    WEBHOOK_CERTGEN_IMAGE,
)


def values(profile: EksProfile) -> dict[str, dict[str, Any]]:
    eks = profile.eks
    out: dict[str, dict[str, Any]] = {"opentelemetry-collector": otel_collector(eks)}
    if eks.mode == "rlobs":
        out["kube-prometheus-stack"] = kube_prometheus_stack(profile)
        out["opensearch-operator"] = opensearch_operator()
        out["fluent-operator"] = fluent_operator()
    merged = {chart: deep_merge(out[chart], eks.helm_values.get(chart, {})) for chart in sorted(out)}
    if eks.prometheus.remote_write == "aggregated":
        # Only the per-run records leave the cluster (monitors.per_run); after any relabelling the user wrote.
        keep = {"sourceLabels": ["__name__"], "regex": f"{AGGREGATED}.+", "action": "keep"}
        spec = merged["kube-prometheus-stack"]["prometheus"]["prometheusSpec"]
        spec["remoteWrite"] = [
            {**entry, "writeRelabelConfigs": [*entry.get("writeRelabelConfigs", []), keep]}
            for entry in spec["remoteWrite"]
        ]
    return merged


def kube_prometheus_stack(profile: EksProfile) -> dict[str, Any]:
    eks = profile.eks
    prom = eks.prometheus
    selector = {"matchLabels": dict(RELEASE_LABEL)}
    return {
        "crds": {"enabled": True},
        # EKS runs the control plane outside the cluster: the controller manager, scheduler and etcd have no pods to
        # scrape, and EKS's kube-proxy binds its metrics to 127.0.0.1. Left on, the chart's KubeControllerManagerDown,
        # KubeSchedulerDown, KubeProxyDown and etcd rules fire for ever (prometheus-community/helm-charts#4106,
        # aws/containers-roadmap#1298). Disabling them removes their Services, monitors and rules.
        **{component: {"enabled": False} for component in EKS_UNSCRAPABLE},
        "alertmanager": {
            "alertmanagerSpec": {"secrets": sorted({r.secret_ref.name for r in eks.alertmanager_receivers})},
            "config": alerting.alertmanager_config(
                profile.metadata.name, eks.alertmanager_receivers, slos=profile.slos is not None
            ),
        },
        "grafana": _grafana(eks),
        "prometheusOperator": {"admissionWebhooks": {"patch": {"image": dict(WEBHOOK_CERTGEN_IMAGE)}}},
        "prometheus": {
            "prometheusSpec": {
                "retention": prom.retention,
                "resources": {"requests": _resources(prom.requests), "limits": _resources(prom.limits)},
                # An open map in the chart (passed to the Prometheus CR as is).
                "storageSpec": {
                    "volumeClaimTemplate": {
                        "spec": {
                            "storageClassName": prom.storage_class,
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": prom.storage_size}},
                        }
                    }
                },
                # Every series this Prometheus sends elsewhere (alerts, remote write, federation) says which cluster
                # it came from; a fleet's central Grafana tells clusters apart by datasource instead (each query goes
                # to one cluster's Prometheus, where external labels are not on the series).
                "externalLabels": {"cluster": eks.cluster.name},
                # Spelled out (the chart's default with *SelectorNilUsesHelmValues: true is the same): every
                # ServiceMonitor, PodMonitor and PrometheusRule rlobs renders carries this label.
                "serviceMonitorSelector": selector,
                "podMonitorSelector": selector,
                "ruleSelector": selector,
            }
        },
    }


def _resources(r: Resources) -> dict[str, str]:
    # Keys named here, not dumped from the model: a field added to Resources must not reach the chart unseen.
    return {"cpu": r.cpu, "memory": r.memory}


def remote_uid(name: str) -> str:
    return grafana_uid(f"prometheus-{name}")


def _env_name(name: str, what: str) -> str:
    return f"RLOBS_PROMETHEUS_{name.upper().replace('-', '_')}_{what}"


def remote_datasources(eks: EksSpec) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(Grafana datasources, env from Secrets) for eks.grafana.remotePrometheus: credentials only as ${VAR}."""
    sources: list[dict[str, Any]] = []
    env: dict[str, Any] = {}
    for remote in eks.grafana.remote_prometheus:
        source: dict[str, Any] = {
            "name": f"Prometheus ({remote.name})",
            "uid": remote_uid(remote.name),
            "type": "prometheus",
            "access": "proxy",
            "url": remote.url,
            "editable": False,
        }
        if remote.bearer_token_secret is not None:
            var = _env_name(remote.name, "TOKEN")
            source["jsonData"] = {"httpHeaderName1": "Authorization"}
            source["secureJsonData"] = {"httpHeaderValue1": f"Bearer ${{{var}}}"}
            ref = remote.bearer_token_secret
            env[var] = {"secretKeyRef": {"name": ref.name, "key": ref.key}}
        elif remote.basic_auth is not None:
            var = _env_name(remote.name, "PASSWORD")
            source |= {"basicAuth": True, "basicAuthUser": remote.basic_auth.username}
            source["secureJsonData"] = {"basicAuthPassword": f"${{{var}}}"}
            ref = remote.basic_auth.password_secret
            env[var] = {"secretKeyRef": {"name": ref.name, "key": ref.key}}
        sources.append(source)
    return sources, env


def _grafana(eks: EksSpec) -> dict[str, Any]:
    st = stack(eks)
    secret = st.opensearch_secret
    remote, remote_env = remote_datasources(eks)
    return {
        # grafana chart 9.3.2 `admin.existingSecret`: the admin user/password come from this Secret, so the
        # chart's default password is never used (helm-charts#4558).
        "admin": {"existingSecret": eks.grafana.admin_secret, "userKey": "admin-user", "passwordKey": "admin-password"},
        # The chart joins `plugins` into GF_INSTALL_PLUGINS (templates/configmap.yaml, _pod.tpl); "<id> <version>"
        # pins the release: Grafana 12 reads that form into plugins.preinstall_sync with the version
        # (pkg/setting/setting_plugins.go), older images pass it to `grafana cli plugins install <id> <version>`.
        "plugins": [f"{GRAFANA_OPENSEARCH_PLUGIN} {GRAFANA_OPENSEARCH_PLUGIN_VERSION}"],
        # Grafana expands ${VAR} in provisioning files, so the datasource ConfigMap holds only the variable names
        # (https://grafana.com/docs/grafana/latest/administration/provisioning/#using-environment-variables).
        "envValueFrom": {
            "OPENSEARCH_USERNAME": {"secretKeyRef": {"name": secret, "key": "username"}},
            "OPENSEARCH_PASSWORD": {"secretKeyRef": {"name": secret, "key": "password"}},
            **remote_env,
        },
        "sidecar": {
            "dashboards": {
                "enabled": True,
                "label": next(iter(GRAFANA_DASHBOARD_LABEL)),
                "labelValue": GRAFANA_DASHBOARD_LABEL["grafana_dashboard"],
                "searchNamespace": "ALL",
            },
            # The default Prometheus datasource (uid prometheus) that every rlobs dashboard uses.
            "datasources": {"enabled": True, "defaultDatasourceEnabled": True, "uid": "prometheus"},
        },
        # The chart enables Grafana's ServiceMonitor without the label the Prometheus serviceMonitorSelector
        # matches, so Grafana itself would never be scraped.
        "serviceMonitor": {"labels": dict(RELEASE_LABEL)},
        "additionalDataSources": [
            {
                "name": "OpenSearch",
                "uid": "opensearch",
                "type": GRAFANA_OPENSEARCH_PLUGIN,
                "access": "proxy",
                "url": st.opensearch_url,
                "basicAuth": True,
                "basicAuthUser": "${OPENSEARCH_USERNAME}",
                "jsonData": {
                    "flavor": "opensearch",
                    "version": OPENSEARCH_VERSION,
                    "database": "fluent-bit",
                    "timeField": "@timestamp",
                    "logMessageField": "log",
                    "logLevelField": "level",
                    "pplEnabled": True,
                    # Self-signed certificates generated by opensearch-operator.
                    "tlsSkipVerify": True,
                },
                "secureJsonData": {"basicAuthPassword": "${OPENSEARCH_PASSWORD}"},
            },
            *remote,
        ],
    }


def opensearch_operator() -> dict[str, Any]:
    return {
        "fullnameOverride": "opensearch-operator",
        "kubeRbacProxy": {"image": {"repository": KUBE_RBAC_PROXY_IMAGE}},
    }


def fluent_operator() -> dict[str, Any]:
    return {
        # EKS nodes run containerd; the chart default (docker) would parse CRI log lines wrongly.
        "containerRuntime": "containerd",
        "fluentbit": {
            "enable": True,
            "image": {"tag": FLUENT_BIT_DAEMONSET_TAG},
            "input": {"tail": {"enable": True}, "systemd": {"enable": False}},
            "filter": {
                "kubernetes": {"enable": True, "labels": True},
                "containerd": {"enable": True},
                "systemd": {"enable": False},
            },
            # The OpenSearch ClusterOutput is rendered in stack/ (its credentials come from a Secret).
            "output": {"stdout": {"enable": False}},
        },
    }


def otel_collector(eks: EksSpec) -> dict[str, Any]:
    st = stack(eks)
    secret = st.opensearch_secret
    return {
        "mode": "deployment",
        "fullnameOverride": "otel-collector",
        "image": {"repository": OTEL_COLLECTOR_IMAGE},
        "replicaCount": 1,
        "ports": {
            **{port: {"enabled": False} for port in ("jaeger-compact", "jaeger-thrift", "jaeger-grpc", "zipkin")},
            "metrics": {"enabled": True},
            "prom-exporter": {
                "enabled": True,
                "containerPort": PROM_EXPORTER_PORT,
                "servicePort": PROM_EXPORTER_PORT,
                "protocol": "TCP",
            },
        },
        "extraEnvs": [
            {"name": "OPENSEARCH_USERNAME", "valueFrom": {"secretKeyRef": {"name": secret, "key": "username"}}},
            {"name": "OPENSEARCH_PASSWORD", "valueFrom": {"secretKeyRef": {"name": secret, "key": "password"}}},
        ],
        "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "config": {
            # null removes the chart's default receivers (Helm deletes keys set to null).
            "receivers": {
                "jaeger": None,
                "zipkin": None,
                "prometheus": None,
                "otlp": {"protocols": {"grpc": {"endpoint": f"${{env:MY_POD_IP}}:{OTLP_GRPC_PORT}"}}},
            },
            "extensions": {
                "basicauth/opensearch": {
                    "client_auth": {"username": "${env:OPENSEARCH_USERNAME}", "password": "${env:OPENSEARCH_PASSWORD}"}
                }
            },
            "exporters": {
                # Names as the OTel Prometheus exporter writes them: unit suffixes and _total (the otel-collector
                # pipeline of rlobs.naming).
                "prometheus": {"endpoint": f"${{env:MY_POD_IP}}:{PROM_EXPORTER_PORT}", "metric_expiration": "10m"},
                # contrib opensearchexporter: spans to ss4o_traces-default-namespace.
                "opensearch/traces": {
                    "http": {
                        "endpoint": st.opensearch_url,
                        "auth": {"authenticator": "basicauth/opensearch"},
                        "tls": {"insecure_skip_verify": True},
                    }
                },
            },
            "service": {
                "extensions": ["health_check", "basicauth/opensearch"],
                "pipelines": {
                    "logs": None,
                    "metrics": {
                        "receivers": ["otlp"],
                        "processors": ["memory_limiter", "batch"],
                        "exporters": ["prometheus"],
                    },
                    "traces": {
                        "receivers": ["otlp"],
                        "processors": ["memory_limiter", "batch"],
                        "exporters": ["opensearch/traces"],
                    },
                },
            },
        },
    }
