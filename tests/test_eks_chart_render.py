"""The rendered Helm values against the real kube-prometheus-stack chart: nothing that can never clear on EKS."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.errors import ProfileError
from rlobs.rl.catalog import load_catalog
from rlobs.targets import parse_profile
from rlobs.targets.eks.versions import CHARTS, KUBE_RBAC_PROXY_IMAGE, OPENSEARCH_VERSION, WEBHOOK_CERTGEN_IMAGE
from testing.crdschema import crd_schema, errors
from testing.eks import AMP_URL, aggregated_bundle, bundle, objects
from testing.helm import render
from testing.helpers import all_profiles, module, shared

pytestmark = pytest.mark.slow

KPS = CHARTS["kube-prometheus-stack"]
# The jobs an EKS cluster's Prometheus really scrapes with these values: the API server and kubelets (EKS exposes
# both), the subcharts' kube-state-metrics and node-exporter, and the stack's own components.
EKS_JOBS = {
    "apiserver",
    "kubelet",
    "kube-state-metrics",
    "node-exporter",
    *(f"{KPS.release}-{c}" for c in ("alertmanager", "operator", "prometheus")),
}
CONTROL_PLANE = ("kube-controller-manager", "kube-scheduler", "kube-etcd", "kube-proxy")


def _values() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(bundle("eks-jark")["values/kube-prometheus-stack.yaml"])
    return data


def _render(values: dict[str, Any], tmp: Path) -> list[Any]:
    return render(f"kube-prometheus-stack-{KPS.version}", KPS.release, values, tmp)


def never_clearing(docs: list[Any]) -> list[str]:
    """Alert rules whose job EKS cannot scrape, and control-plane Services/monitors that would scrape nothing."""
    found = []
    for d in docs:
        name = d["metadata"]["name"]
        if d["kind"] in ("Service", "ServiceMonitor") and any(name.endswith(c) for c in CONTROL_PLANE):
            found.append(f"{d['kind']} {name}")
        if d["kind"] != "PrometheusRule":
            continue
        for group in d["spec"]["groups"]:
            for rule in group["rules"]:
                jobs = set(re.findall(r'job=~?"([^"]+)"', rule.get("expr", "")))
                if "alert" in rule and jobs - EKS_JOBS:
                    found.append(f"{rule['alert']} ({', '.join(sorted(jobs - EKS_JOBS))})")
    return sorted(set(found))


def test_no_rule_or_monitor_that_can_never_clear_on_eks(tmp_path: Path) -> None:
    docs = _render(_values(), tmp_path)
    assert any(d["kind"] == "PrometheusRule" for d in docs)  # the chart's default rules are there
    assert never_clearing(docs) == []


@pytest.mark.parametrize("component", ["kubeScheduler", "kubeControllerManager", "kubeEtcd", "kubeProxy"])
def test_re_enabling_a_control_plane_scrape_is_caught(component: str, tmp_path: Path) -> None:
    values = copy.deepcopy(_values())
    values[component] = {"enabled": True}
    assert never_clearing(_render(values, tmp_path)) != []


def _kind(docs: list[Any], kind: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind]
    return found


def test_helm_values_overrides_change_the_rendered_objects(tmp_path: Path) -> None:
    tuned = yaml.safe_load(bundle("eks-helm-values")["values/kube-prometheus-stack.yaml"])
    base = _kind(_render(_values(), tmp_path / "base"), "Prometheus")["spec"]
    docs = _render(tuned, tmp_path / "tuned")
    spec = _kind(docs, "Prometheus")["spec"]
    assert "nodeSelector" not in base
    assert spec["nodeSelector"] == {"karpenter.sh/nodepool": "monitoring"}
    assert spec["tolerations"] == [{"key": "monitoring", "operator": "Exists", "effect": "NoSchedule"}]
    assert spec["additionalScrapeConfigs"]["key"] == "additional-scrape-configs.yaml"
    scrape = [d for d in docs if d["kind"] == "Secret" and d["metadata"]["name"].endswith("prometheus-scrape-confg")]
    assert scrape, "the chart renders additionalScrapeConfigs into its Secret"
    # What rlobs owns is unchanged: the RL monitors and rules are still selected.
    for key in ("ruleSelector", "serviceMonitorSelector", "podMonitorSelector"):
        assert spec[key] == base[key] == {"matchLabels": {"release": KPS.release}}, key
    (operator,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-operator")]
    assert operator["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"memory": "512Mi"}


def test_a_refused_key_cannot_reach_the_chart(tmp_path: Path) -> None:
    # Set directly in values, the selector override would drop every RL rule from Prometheus ...
    values = copy.deepcopy(_values())
    values["prometheus"]["prometheusSpec"]["ruleSelector"] = {"matchLabels": {"team": "ml"}}
    assert _kind(_render(values, tmp_path), "Prometheus")["spec"]["ruleSelector"] == {"matchLabels": {"team": "ml"}}
    # ... so the profile refuses it and nothing is rendered.
    text = all_profiles()["eks-helm-values"].replace(
        "        prometheusSpec:\n", "        prometheusSpec:\n          ruleSelector: {matchLabels: {team: ml}}\n"
    )
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    (problem,) = info.value.problems
    assert problem.path == "eks.helmValues.kube-prometheus-stack.prometheus.prometheusSpec.ruleSelector"


def test_collector_overrides_change_its_deployment(tmp_path: Path) -> None:
    chart = CHARTS["opentelemetry-collector"]
    tuned = yaml.safe_load(bundle("eks-helm-values")["values/opentelemetry-collector.yaml"])
    docs = render(f"{chart.name}-{chart.version}", chart.release, tuned, tmp_path)
    deployment = _kind(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 2
    assert pod["nodeSelector"] == {"karpenter.sh/nodepool": "monitoring"}
    assert pod["containers"][0]["resources"]["limits"] == {"memory": "2Gi"}
    env = {e["name"] for e in pod["containers"][0]["env"]}
    assert {"OPENSEARCH_USERNAME", "OPENSEARCH_PASSWORD"} <= env  # rlobs' own values survive the merge


def _selected(docs: list[Any]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """(the Prometheus CR's serviceMonitorSelector labels, ServiceMonitor name -> its labels)."""
    wanted = _kind(docs, "Prometheus")["spec"]["serviceMonitorSelector"]["matchLabels"]
    monitors = {d["metadata"]["name"]: d["metadata"].get("labels", {}) for d in docs if d["kind"] == "ServiceMonitor"}
    return wanted, monitors


def test_every_servicemonitor_of_the_chart_grafanas_included_is_selected(tmp_path: Path) -> None:
    docs = _render(_values(), tmp_path / "ours")
    wanted, monitors = _selected(docs)
    assert f"{KPS.release}-grafana" in monitors  # the real grafana subchart renders its monitor
    unselected = [name for name, labels in monitors.items() if not wanted.items() <= labels.items()]
    assert unselected == []
    # Without rlobs' label the chart's own Grafana monitor is not selected: Grafana was never scraped.
    values = copy.deepcopy(_values())
    del values["grafana"]["serviceMonitor"]
    wanted, monitors = _selected(_render(values, tmp_path / "chart-default"))
    assert not wanted.items() <= monitors[f"{KPS.release}-grafana"].items()


def test_the_webhook_certificate_jobs_run_the_maintained_certgen(tmp_path: Path) -> None:
    docs = _render(_values(), tmp_path)
    jobs = [d for d in docs if d["kind"] == "Job"]
    assert {j["metadata"]["name"] for j in jobs} == {
        f"{KPS.release}-admission-create",
        f"{KPS.release}-admission-patch",
    }
    images = {c["image"] for j in jobs for c in j["spec"]["template"]["spec"]["containers"]}
    image = WEBHOOK_CERTGEN_IMAGE
    assert images == {f"{image['registry']}/{image['repository']}:{image['tag']}"}
    assert not any("ingress-nginx" in i for i in images)


def test_the_opensearch_cluster_matches_the_crd_the_pinned_operator_chart_installs(tmp_path: Path) -> None:
    module("jsonschema", "validates the OpenSearchCluster against the chart's CRD")
    chart = CHARTS["opensearch-operator"]
    values = yaml.safe_load(bundle("eks-jark")["values/opensearch-operator.yaml"])
    docs = render(f"{chart.name}-{chart.version}", chart.release, values, tmp_path)
    (crd,) = [
        d for d in docs if d["kind"] == "CustomResourceDefinition" and d["spec"]["names"]["kind"] == "OpenSearchCluster"
    ]
    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump(crd), encoding="utf-8")
    cluster = objects("eks-jark", "stack/")["stack/opensearch-cluster.yaml"]
    assert cluster["apiVersion"] == f"{crd['spec']['group']}/v1"
    assert errors(crd_schema(path), cluster) == []
    spec = cluster["spec"]
    assert spec["general"]["version"] == spec["dashboards"]["version"] == OPENSEARCH_VERSION
    (manager,) = [d for d in docs if d["kind"] == "Deployment"]
    images = {c["image"] for c in manager["spec"]["template"]["spec"]["containers"]}
    assert any(i.startswith(f"{KUBE_RBAC_PROXY_IMAGE}:") for i in images), images


def test_an_aggregated_remote_write_keeps_only_the_per_run_records(tmp_path: Path) -> None:
    values = yaml.safe_load(aggregated_bundle("eks-jark")["values/kube-prometheus-stack.yaml"])
    prometheus = _kind(_render(values, tmp_path), "Prometheus")
    # The chart's own CRD accepts it: writeRelabelConfigs is the operator's RemoteWriteSpec field.
    crd = shared(f"upstream/helm-charts/kube-prometheus-stack-{KPS.version}/charts/crds/crds/crd-prometheuses.yaml")
    assert errors(crd_schema(crd), prometheus) == []
    (remote,) = prometheus["spec"]["remoteWrite"]
    assert remote["url"] == AMP_URL
    user, keep = remote["writeRelabelConfigs"]  # the profile's own relabelling first, then the keep
    assert user == {"regex": "tmp_.*", "action": "labeldrop"}
    assert keep["sourceLabels"] == ["__name__"] and keep["action"] == "keep"
    rules = yaml.safe_load(aggregated_bundle("eks-jark")["rl-layer/rl-prometheusrule.yaml"])
    records = [r["record"] for g in rules["spec"]["groups"] for r in g["rules"] if "record" in r]
    kept = [r for r in records if re.fullmatch(keep["regex"], r)]  # Prometheus anchors relabel regexes
    # one record per series of each RL metric: a histogram's _bucket, _sum and _count
    assert len(kept) == sum(3 if m.kind == "histogram" else 1 for m in load_catalog().metrics)
    # Neither the RL series as scraped, the alerts' own records nor a third-party series leaves the cluster.
    for name in ("rl_train_steps_total", "rlobs:rl_run_state", "DCGM_FI_DEV_GPU_UTIL", "node_cpu_seconds_total"):
        assert not re.fullmatch(keep["regex"], name), name
