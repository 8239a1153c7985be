"""ServiceMonitors, PodMonitors and the PrometheusRule: valid CRs, selected by Prometheus, loaded by promtool."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from testing.crdschema import errors
from testing.eks import EKS_PROFILES, aggregated_bundle, objects, of_kind
from testing.eks import schema as crd
from testing.helpers import module, profile, tool

CRDS = {
    "ServiceMonitor": "prometheus-operator/crd-servicemonitors.v0.84.1.yaml",
    "PodMonitor": "prometheus-operator/crd-podmonitors.v0.84.1.yaml",
    "PrometheusRule": "prometheus-operator/crd-prometheusrules.v0.84.1.yaml",
}


def _monitoring(name: str) -> dict[str, Any]:
    return {p: o for kind in CRDS for p, o in of_kind(name, kind).items()}


@pytest.mark.parametrize("operator", ["v0.84.1", "v0.93.1"])
@pytest.mark.parametrize("name", EKS_PROFILES)
def test_monitors_and_rules_match_the_prometheus_operator_crds(name: str, operator: str) -> None:
    """Valid for the pinned operator (kube-prometheus-stack 76.3.0) and for the one of 88.5.3 (upgrade path)."""
    module("jsonschema", "validates CRs against the prometheus-operator CRDs")
    found = _monitoring(name)
    assert {o["kind"] for o in found.values()} >= {"ServiceMonitor", "PrometheusRule"}
    for path, obj in found.items():
        assert errors(crd(CRDS[obj["kind"]].replace("v0.84.1", operator)), obj) == [], path


def test_the_crd_check_rejects_broken_monitors() -> None:
    module("jsonschema", "validates CRs against the prometheus-operator CRDs")
    sm = copy.deepcopy(of_kind("eks-jark", "ServiceMonitor")["rl-layer/ray-head-servicemonitor.yaml"])
    sm["spec"]["endpoints"][0]["scrapeInterval"] = "15s"  # the field is `interval`
    assert any("scrapeInterval" in e for e in errors(crd(CRDS["ServiceMonitor"]), sm))
    pm = copy.deepcopy(of_kind("eks-jark", "PodMonitor")["rl-layer/ray-workers-podmonitor.yaml"])
    pm["spec"]["podMetricsEndpoints"][0]["relabelings"][0]["action"] = "rename"
    assert errors(crd(CRDS["PodMonitor"]), pm)


def _selected(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, "only matchLabels selectors are rendered"
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def test_every_monitor_and_rule_is_selected_by_the_rendered_prometheus() -> None:
    values = objects("eks-jark", "values/kube-prometheus-stack.yaml")["values/kube-prometheus-stack.yaml"]
    spec = values["prometheus"]["prometheusSpec"]
    selectors = {
        "ServiceMonitor": spec["serviceMonitorSelector"],
        "PodMonitor": spec["podMonitorSelector"],
        "PrometheusRule": spec["ruleSelector"],
    }
    for path, obj in _monitoring("eks-jark").items():
        assert _selected(selectors[obj["kind"]], obj["metadata"]["labels"]), path


def test_every_monitor_carries_the_release_label_the_reference_stack_selects() -> None:
    """ai-on-eks mode: the reference chart keeps *SelectorNilUsesHelmValues, i.e. `release: <release name>`."""
    for path, obj in _monitoring("eks-ai-on-eks").items():
        assert obj["metadata"]["labels"]["release"] == "kube-prometheus-stack", path
        assert obj["metadata"]["namespace"] == "monitoring"


def test_ray_head_monitor_scrapes_every_kuberay_metrics_port() -> None:
    sm = of_kind("eks-jark", "ServiceMonitor")["rl-layer/ray-head-servicemonitor.yaml"]
    assert [e["port"] for e in sm["spec"]["endpoints"]] == ["metrics", "as-metrics", "dash-metrics", "serve"]
    assert sm["spec"]["selector"] == {"matchLabels": {"ray.io/node-type": "head"}}
    assert sm["spec"]["targetLabels"] == ["ray.io/cluster"]


def test_pipeline_decides_between_collector_and_app_scrape() -> None:
    jark = of_kind("eks-jark", "ServiceMonitor")
    assert "rl-layer/otel-collector-servicemonitor.yaml" in jark
    ref = of_kind("eks-ai-on-eks", "PodMonitor")
    app = ref["rl-layer/rl-app-podmonitor.yaml"]
    w = profile("eks-ai-on-eks").workload
    assert app["spec"]["namespaceSelector"] == {"matchNames": [w.namespace]}
    assert app["spec"]["podMetricsEndpoints"][0]["port"] == "rl-metrics"
    # ai-on-eks mode: the reference chart ships the Ray monitors; rlobs does not duplicate them.
    assert not any("ray-" in p for p in _monitoring("eks-ai-on-eks"))


def _rule_groups(name: str) -> list[dict[str, Any]]:
    rules = of_kind(name, "PrometheusRule")
    assert len(rules) == 1
    groups: list[dict[str, Any]] = next(iter(rules.values()))["spec"]["groups"]
    return groups


def _promtool_check(groups: list[dict[str, Any]], tmp: Path) -> subprocess.CompletedProcess[str]:
    path = tmp / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": groups}), encoding="utf-8")
    promtool = tool("promtool", "checks the PrometheusRule groups")
    return subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", EKS_PROFILES)
def test_promtool_accepts_the_rule_groups(name: str, tmp_path: Path) -> None:
    proc = _promtool_check(_rule_groups(name), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_promtool_rejects_a_broken_rule(tmp_path: Path) -> None:
    groups = copy.deepcopy(_rule_groups("eks-jark"))
    groups[0]["rules"].append({"alert": "Broken", "expr": "sum(rate(x[5m])", "for": "5m"})
    proc = _promtool_check(groups, tmp_path)
    assert proc.returncode != 0


def test_ai_on_eks_receivers_become_an_alertmanagerconfig_for_the_rl_alerts_only() -> None:
    name = "eks-ai-on-eks"
    p = profile(name)
    (amc,) = of_kind(name, "AlertmanagerConfig").values()
    assert errors(crd("prometheus-operator/crd-alertmanagerconfigs.v0.84.1.yaml"), amc) == []
    # The operator confines it to alerts labelled with its namespace (OnNamespace): every RL alert carries it.
    assert amc["metadata"]["namespace"] == p.workload.namespace
    (rule_file,) = of_kind(name, "PrometheusRule").values()
    for rule in (r for r in rule_file["spec"]["groups"][0]["rules"] if "alert" in r):
        assert rule["labels"]["namespace"] == p.workload.namespace
        assert rule["labels"]["rlobs_bundle"] == p.metadata.name
    assert amc["spec"]["route"]["matchers"] == [{"name": "rlobs_bundle", "value": p.metadata.name, "matchType": "="}]
    receivers = {r["name"] for r in amc["spec"]["receivers"]}
    assert receivers == {"null", *(r.name for r in p.eks.alertmanager_receivers)}  # type: ignore[union-attr]
    bad = copy.deepcopy(amc)
    bad["spec"]["receivers"][1]["pagerdutyConfigs"][0]["routingKey"] = "inline-key"
    assert errors(crd("prometheus-operator/crd-alertmanagerconfigs.v0.84.1.yaml"), bad)


def test_a_cluster_receiver_is_refused_in_ai_on_eks_mode() -> None:
    from rlobs.errors import ProfileError
    from rlobs.targets import parse_profile
    from testing.helpers import all_profiles

    text = all_profiles()["eks-ai-on-eks"].replace(
        "      type: pagerduty\n", "      type: pagerduty\n      alerts: all\n"
    )
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    (line,) = info.value.lines()
    assert "eks.alertmanagerReceivers[0].alerts: expected rl with eks.mode: ai-on-eks" in line


def _per_run(name: str) -> dict[str, Any]:
    rules = yaml.safe_load(aggregated_bundle(name)["rl-layer/rl-prometheusrule.yaml"])
    (group,) = [g for g in rules["spec"]["groups"] if g["name"].endswith(".remote-write")]
    return dict(group)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["eks-jark", "eks-prometheus-exporter"])  # both pipelines' series names
def test_the_per_run_records_sum_each_runs_series_over_its_pods(name: str, tmp_path: Path) -> None:
    group = _per_run(name)
    assert _promtool_check([group], tmp_path).returncode == 0
    rule = yaml.safe_load(aggregated_bundle(name)["rl-layer/rl-prometheusrule.yaml"])
    assert errors(crd(CRDS["PrometheusRule"]), rule) == []
    (steps,) = [r for r in group["rules"] if r["record"].startswith("run:rl_train_steps_total")]
    selector = steps["expr"].split("(", 2)[2].rstrip(")")  # the series the record sums, with the bundle's job
    series, labels = selector.split("{", 1)
    run = 'rl_run_id="r1", rl_system="verl"'
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": [group]}), encoding="utf-8")
    tests = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "30s",
        "tests": [
            {
                "interval": "30s",
                "input_series": [
                    {"series": f"{series}{{{labels[:-1]}, pod='a', {run}}}", "values": "1 2 3"},
                    {"series": f"{series}{{{labels[:-1]}, pod='b', {run}}}", "values": "10 20 30"},
                ],
                "promql_expr_test": [
                    {
                        "expr": steps["record"],
                        "eval_time": "1m",
                        "exp_samples": [{"labels": f"{steps['record']}{{{labels[:-1]}, {run}}}", "value": 33}],
                    }
                ],
            }
        ],
    }
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")
    promtool = tool("promtool", "runs the per-run records")
    proc = subprocess.run([promtool, "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ai_on_eks_mode_reports_stack_settings_and_cluster_receivers_together() -> None:
    """Both of the mode's rules run on one profile: every problem at once, not the first rule's only."""
    from rlobs.errors import ProfileError
    from rlobs.targets import parse_profile
    from testing.helpers import all_profiles

    text = all_profiles()["eks-ai-on-eks"].replace(
        "      type: pagerduty\n", "      type: pagerduty\n      alerts: all\n"
    )
    text = text.replace("  mode: ai-on-eks\n", "  mode: ai-on-eks\n  prometheus: {retention: 30d}\n")
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    lines = info.value.lines()
    assert len(lines) == 2, lines
    assert any("eks.prometheus: expected no prometheus settings with eks.mode: ai-on-eks" in line for line in lines)
    assert any("eks.alertmanagerReceivers[0].alerts: expected rl with eks.mode: ai-on-eks" in line for line in lines)
