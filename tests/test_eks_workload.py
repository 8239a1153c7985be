"""The workload Component: `kubectl kustomize` applies it to a sample of every workload kind, and the result is
what the RL app and the Ray log recipe need (validated with kubernetes-validate: the object, or a CRD's pod specs)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.profile.model import ProfileBase as Profile
from rlobs.rl import workloads
from rlobs.targets import parse_profile
from rlobs.targets.eks.stack import stack
from testing.bundles import build
from testing.eks import EKS_PROFILES, bundle, objects
from testing.helpers import all_profiles, module, profile
from testing.workloads import (
    KINDS,
    assert_user_parts_kept,
    bundle_component,
    container,
    kustomize,
    pod_templates,
    sample,
    targeted,
    without_worker_groups,
)

K8S_VERSION = "1.34"


def _profile(kind: str, pipeline: str = "otel-collector") -> Profile:
    """The eks-jark profile with another workload kind (and a container named `trainer` for non-Ray kinds)."""
    text = without_worker_groups(all_profiles()["eks-jark"]).replace("kind: RayJob", f"kind: {kind}")
    text = text.replace("metricsPipeline: otel-collector", f"metricsPipeline: {pipeline}")
    if kind not in workloads.RAY_KINDS:
        text = text.replace("container: ray-head", "container: trainer")
    if kind == "JobSet":
        text = text.replace("  container: trainer", "  container: trainer\n  replicatedJobs: [driver, rollout]")
    return parse_profile(text, f"eks-jark-{kind}.yaml")


def _variant(kind: str, pipeline: str = "otel-collector") -> tuple[Profile, dict[str, str]]:
    prof = _profile(kind, pipeline)
    return prof, {r.path: r.text for r in build(prof)}


def _kustomize(files: dict[str, str], base: dict[str, Any], tmp: Path) -> list[dict[str, Any]]:
    return kustomize(tmp, bundle_component(files), base)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("pipeline", ["otel-collector", "prometheus-exporter"])
def test_component_wires_every_workload_kind(kind: str, pipeline: str, tmp_path: Path) -> None:
    prof, files = _variant(kind, pipeline)
    w = prof.workload
    out = _kustomize(files, sample(w), tmp_path)
    workload = next(d for d in out if d["kind"] == kind)
    # The user's containers, env, ports, mounts, volumes and other pod templates are kept as they are.
    assert_user_parts_kept(workload, w)
    expected = [e["name"] for e in objects_env(files)]
    for template in targeted(workload, w):
        rl = container(template, w.container)
        names = [e["name"] for e in rl["env"]]
        assert [n for n in names if n != "EXISTING"] == expected  # in order: $(POD_NAME) needs POD_NAME first
        assert template["metadata"]["labels"] == {"app": "grpo", "rlobs.io/workload": "grpo-trainer"}
        metrics_port = {"name": "rl-metrics", "containerPort": 9464, "protocol": "TCP"}
        assert (metrics_port in rl["ports"]) == (pipeline == "prometheus-exporter")
        if pipeline == "prometheus-exporter":
            # The app's PodMonitor selects exactly the patched pods, on the port the patch declares.
            monitor = yaml.safe_load(files["rl-layer/rl-app-podmonitor.yaml"])["spec"]
            assert monitor["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()
            assert {e["port"] for e in monitor["podMetricsEndpoints"]} == {metrics_port["name"]}
        if kind in workloads.RAY_KINDS:
            sidecar = container(template, "fluentbit")
            assert {m["mountPath"] for m in sidecar["volumeMounts"]} == {"/tmp/ray", "/fluent-bit/etc/fluent-bit.conf"}
            assert {"name": "ray-logs", "mountPath": "/tmp/ray"} in rl["volumeMounts"]
            # The Ray logs patch adds its volumes beside the user's own (kept: assert_user_parts_kept).
            assert {v["name"] for v in template["spec"]["volumes"]} == {"data", "ray-logs", "fluentbit-config"}
        else:
            assert {c["name"] for c in template["spec"]["containers"]} == {w.container, "proxy"}
    if kind in workloads.RAY_KINDS:
        assert any(d["kind"] == "ConfigMap" and d["metadata"]["name"] == "fluentbit-config" for d in out)
    module("kubernetes_validate", "validates the patched workload against the Kubernetes schema")
    import kubernetes_validate

    if kind in workloads.CRD_KINDS:
        # No schema for CRDs in kubernetes-validate: check each pod spec the patches touched, as a Pod.
        for template in targeted(workload, w):
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": template["spec"]}
            kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
    else:
        kubernetes_validate.validate(workload, K8S_VERSION, strict=True)


def objects_env(files: dict[str, str]) -> list[dict[str, Any]]:
    """The env list the rendered patch adds to the RL container."""
    patch = yaml.safe_load(files["workload/otel-env-patch.yaml"])
    (rl,) = pod_templates(patch)[0]["spec"]["containers"]
    return list(rl["env"])


@pytest.mark.slow
def test_prometheus_exporter_pipeline_declares_the_scraped_port(tmp_path: Path) -> None:
    prof, files = _variant("Deployment", "prometheus-exporter")
    (out,) = _kustomize(files, sample(prof.workload), tmp_path)
    (template,) = targeted(out, prof.workload)
    rl = container(template, prof.workload.container)
    assert {"name": "rl-metrics", "containerPort": 9464, "protocol": "TCP"} in rl["ports"]
    assert {"name": "gcs", "containerPort": 6379} in rl["ports"]
    env = {e["name"]: e.get("value") for e in rl["env"]}
    assert env["OTEL_METRICS_EXPORTER"] == "prometheus" and env["OTEL_EXPORTER_PROMETHEUS_PORT"] == "9464"
    assert "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" not in env


@pytest.mark.slow
def test_kubernetes_validate_rejects_a_broken_patch_result(tmp_path: Path) -> None:
    module("kubernetes_validate", "validates the patched workload against the Kubernetes schema")
    import kubernetes_validate

    prof, files = _variant("Deployment")
    (out,) = _kustomize(files, sample(prof.workload), tmp_path)
    broken = copy.deepcopy(out)
    (template,) = targeted(broken, prof.workload)
    container(template, prof.workload.container)["env"][1]["valueFrom"] = {"fieldRef": {"path": "metadata.name"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_env_points_at_the_collector_with_an_explicit_scheme_and_carries_the_run_identity() -> None:
    patch = objects("eks-jark", "workload/")["workload/otel-env-patch.yaml"]
    env = {e["name"]: e.get("value") for e in objects_env(bundle("eks-jark"))}
    assert patch["kind"] == "RayJob"
    for key in ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        assert env[key] == "http://otel-collector.monitoring.svc.cluster.local:4317"
    assert env["OTEL_SERVICE_NAME"] == "grpo-trainer"
    assert env["RL_SYSTEM"] == "verl" and env["RL_ALGORITHM"] == "grpo"
    assert "RL_RUN_ID" not in env  # the profile names no run id: never the workload's name for every run
    assert env["RL_MODEL"] == "Qwen2.5-7B-Instruct" and env["RL_ENVIRONMENT"] == "gsm8k"
    assert env["RL_SYSTEM_VERSION"] == "0.5.0"
    assert "service.instance.id=$(POD_NAME)" in env["OTEL_RESOURCE_ATTRIBUTES"]
    names = list(env)
    assert names.index("POD_NAME") < names.index("OTEL_RESOURCE_ATTRIBUTES")  # $(POD_NAME) expands only then


def test_ray_log_config_tails_ray_logs_and_ships_to_opensearch_over_tls() -> None:
    module("kubernetes_validate", "validates the ConfigMap against the Kubernetes schema")
    import kubernetes_validate

    cm = objects("eks-jark", "workload/")["workload/fluentbit-config.yaml"]
    kubernetes_validate.validate(cm, K8S_VERSION, strict=True)
    conf = cm["data"]["fluent-bit.conf"]
    assert "Path              /tmp/ray/session_latest/logs/*" in conf
    assert "Name                opensearch" in conf and "tls                 On" in conf
    assert "${OPENSEARCH_PASSWORD}" in conf and "Name stdout" not in conf
    sidecar = objects("eks-jark", "workload/")["workload/ray-logs-patch.yaml"]
    (template,) = pod_templates(sidecar)
    env = container(template, "fluentbit")["env"]
    assert env[0] == {
        "name": "POD_LABELS",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['ray.io/cluster']"}},
    }


@pytest.mark.parametrize("name", [n for n in EKS_PROFILES if "workload/ray-logs-patch.yaml" in bundle(n)])
def test_ray_log_sidecar_writes_as_the_log_writer_not_the_admin(name: str) -> None:
    eks = profile(name).eks
    assert eks is not None
    refs = set()
    for obj in objects(name, "workload/").values():
        refs |= {m["name"] for m in _find(obj, "secretKeyRef")}
    # The workload's namespace holds only the write-only log user, never the stack's admin Secret.
    assert refs == {eks.opensearch.log_writer_secret}
    assert stack(eks).opensearch_secret not in refs


def _find(node: Any, key: str) -> list[Any]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == key] + [x for v in node.values() for x in _find(v, key)]
    if isinstance(node, list):
        return [x for v in node for x in _find(v, key)]
    return []


def test_non_ray_workloads_get_no_ray_log_sidecar() -> None:
    _, files = _variant("Deployment")
    assert "workload/ray-logs-patch.yaml" not in files
    assert "fluentbit-config.yaml" not in files["workload/kustomization.yaml"]


@pytest.mark.slow
def test_jobset_containers_without_env_or_ports_get_them(tmp_path: Path) -> None:
    """The patch merges by name into every named replicated job, whatever the container already has (the RL
    container need not be first nor carry an env or ports list)."""
    prof, files = _variant("JobSet", "prometheus-exporter")
    base = sample(prof.workload)
    for template in targeted(base, prof.workload):
        rl = container(template, prof.workload.container)
        del rl["env"], rl["ports"]
    (out,) = _kustomize(files, base, tmp_path)
    expected = objects_env(files)
    for template in targeted(out, prof.workload):
        rl = container(template, prof.workload.container)
        assert rl["env"] == expected
        assert rl["ports"] == [{"name": "rl-metrics", "containerPort": 9464, "protocol": "TCP"}]


def _head_ports(ports: list[dict[str, Any]] | None, tmp_path: Path) -> list[dict[str, Any]]:
    """The Ray head container's ports after the prometheus-exporter patch, on a RayJob whose head has `ports`."""
    prof, files = _variant("RayJob", "prometheus-exporter")
    base = sample(prof.workload)
    (template,) = targeted(base, prof.workload)
    head = container(template, prof.workload.container)
    if ports is None:
        del head["ports"]
    else:
        head["ports"] = ports
    out = _kustomize(files, base, tmp_path)
    (template,) = targeted(next(d for d in out if d["kind"] == "RayJob"), prof.workload)
    return list(container(template, prof.workload.container)["ports"])


@pytest.mark.slow
def test_a_ray_head_without_ports_keeps_kuberays_default_service_ports(tmp_path: Path) -> None:
    # KubeRay builds the head Service from the head's ports once it declares any: rl-metrics alone would drop these.
    ports = {p["name"]: p["containerPort"] for p in _head_ports(None, tmp_path)}
    assert ports == {"rl-metrics": 9464, "gcs-server": 6379, "dashboard": 8265, "client": 10001, "metrics": 8080}


@pytest.mark.slow
def test_a_ray_head_that_declares_its_own_ports_keeps_them_and_gets_only_the_missing_defaults(tmp_path: Path) -> None:
    own = [{"name": "gcs", "containerPort": 6379}, {"name": "dash", "containerPort": 8265}]
    own += [{"name": "as-metrics", "containerPort": 44217}]
    ports = _head_ports(own, tmp_path)
    assert all(p in ports for p in own)  # the head's own entries, names and all
    assert sorted(p["containerPort"] for p in ports) == [6379, 8080, 8265, 9464, 10001, 44217]  # each port once
    assert {p["name"] for p in ports} == {"gcs", "dash", "as-metrics", "client", "metrics", "rl-metrics"}
    module("kubernetes_validate", "validates the patched head pod against the Kubernetes schema")
    import kubernetes_validate

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}
    pod["spec"] = {"containers": [{"name": "ray-head", "image": "rayproject/ray", "ports": ports}]}
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
