"""The rendered Helm values against the real kube-prometheus-stack chart: nothing that can never clear on EKS."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.targets.eks.versions import CHARTS
from testing.eks import bundle
from testing.helm import render

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
