"""Cross-file wiring of the EKS bundle: every place that names a Service, port or release agrees with the object
that defines it (a typo here deploys fine and then ships nothing)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from testing.eks import EKS_PROFILES, bundle, objects, of_kind


def _values(name: str, chart: str) -> dict[str, Any]:
    found: dict[str, Any] = objects(name, f"values/{chart}.yaml")[f"values/{chart}.yaml"]
    return found


def _opensearch_hosts(name: str) -> set[str]:
    """Every OpenSearch host the bundle sends to or reads from."""
    files = bundle(name)
    hosts = set()
    collector = _values(name, "opentelemetry-collector")["config"]["exporters"]["opensearch/traces"]
    hosts.add(re.sub(r"^https://|:\d+$", "", collector["http"]["endpoint"]))
    if "values/kube-prometheus-stack.yaml" in files:
        (ds,) = _values(name, "kube-prometheus-stack")["grafana"]["additionalDataSources"]
        hosts.add(re.sub(r"^https://|:\d+$", "", ds["url"]))
    if "stack/fluentbit-output.yaml" in files:
        hosts.add(yaml.safe_load(files["stack/fluentbit-output.yaml"])["spec"]["opensearch"]["host"])
    if "workload/fluentbit-config.yaml" in files:
        conf = yaml.safe_load(files["workload/fluentbit-config.yaml"])["data"]["fluent-bit.conf"]
        host = re.search(r"^\s*Host\s+(\S+)", conf, flags=re.M)
        assert host is not None
        hosts.add(host[1])
    return hosts


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_every_opensearch_client_uses_the_clusters_service(name: str) -> None:
    files = bundle(name)
    if "stack/opensearch-cluster.yaml" in files:
        service = yaml.safe_load(files["stack/opensearch-cluster.yaml"])["spec"]["general"]["serviceName"]
    else:
        service = "my-cluster"  # the reference chart's OpenSearchCluster (ai-on-eks mode)
    assert _opensearch_hosts(name) == {f"{service}.monitoring.svc"}


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_workload_env_reaches_the_collector_service(name: str) -> None:
    values = _values(name, "opentelemetry-collector")
    app = objects(name, "argocd/apps/otel-collector.yaml")["argocd/apps/otel-collector.yaml"]
    release = app["spec"]["sources"][0]["helm"]["releaseName"]
    service = values["fullnameOverride"]
    namespace = app["spec"]["destination"]["namespace"]
    patch = bundle(name)["workload/otel-env-patch.yaml"]
    assert f"http://{service}.{namespace}.svc.cluster.local:4317" in patch
    otlp_port = 4317
    assert values["config"]["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"].endswith(f":{otlp_port}")
    monitors = of_kind(name, "ServiceMonitor")
    sm = monitors.get("rl-layer/otel-collector-servicemonitor.yaml")
    if sm is not None:
        assert sm["spec"]["selector"]["matchLabels"]["app.kubernetes.io/instance"] == release
        assert sm["spec"]["namespaceSelector"] == {"matchNames": [namespace]}
        scraped = {e["port"] for e in sm["spec"]["endpoints"]}
        assert scraped <= {p for p, v in values["ports"].items() if v.get("enabled")}
        exporter = values["config"]["exporters"]["prometheus"]["endpoint"]
        assert exporter.endswith(f":{values['ports']['prom-exporter']['containerPort']}")


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_secrets_used_by_pods_in_the_workload_namespace_are_created_there(name: str) -> None:
    readme = bundle(name)["README.md"]
    patch_file = bundle(name).get("workload/ray-logs-patch.yaml")
    if patch_file is None:
        return
    patch = yaml.safe_load(patch_file)
    namespace = patch["metadata"]["namespace"]
    refs = set(re.findall(r"secretKeyRef:\n\s+name: (\S+)", patch_file))
    assert refs
    for secret in refs:
        assert f"kubectl -n {namespace} create secret generic {secret}" in readme
