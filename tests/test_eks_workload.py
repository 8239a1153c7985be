"""The workload Component: `kubectl kustomize` applies it to a sample of every workload kind, and the result is
what the RL app and the Ray log recipe need (validated with kubernetes-validate where the kind is core)."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from eks_helpers import bundle, objects
from helpers import all_profiles, module, tool, write_tree
from rlobs.bundle import build
from rlobs.profile import parse_profile

KINDS = ("Deployment", "StatefulSet", "Job", "JobSet", "RayJob", "RayCluster", "RayService")
RAY_KINDS = ("RayJob", "RayCluster", "RayService")
K8S_VERSION = "1.34"


def _variant(kind: str, pipeline: str = "otel-collector") -> tuple[str, dict[str, str]]:
    """The eks-jark profile with another workload kind (and a container named `trainer` for non-Ray kinds)."""
    text = all_profiles()["eks-jark"].replace("kind: RayJob", f"kind: {kind}")
    text = text.replace("metricsPipeline: otel-collector", f"metricsPipeline: {pipeline}")
    if kind not in RAY_KINDS:
        text = text.replace("container: ray-head", "container: trainer")
    if kind == "JobSet":
        text = text.replace("  container: trainer", "  container: trainer\n  replicatedJobs: [trainers]")
    prof = parse_profile(text, f"eks-jark-{kind}.yaml")
    return ("ray-head" if kind in RAY_KINDS else "trainer"), {r.path: r.text for r in build(prof)}


def _pod(container: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "grpo"}},
        "spec": {
            "containers": [
                {"name": "proxy", "image": "envoyproxy/envoy:v1.31.0"},
                {
                    "name": container,
                    "image": "rayproject/ray:2.49.0-gpu",
                    "env": [{"name": "EXISTING", "value": "kept"}],
                    "ports": [{"name": "gcs", "containerPort": 6379}],
                },
            ],
        },
    }


def _sample(kind: str, container: str) -> dict[str, Any]:
    """A minimal object of `kind` named like the profile's workload, as the user's base would hold it."""
    meta = {"name": "grpo-trainer", "namespace": "rl"}
    pod = _pod(container)
    head = {"rayStartParams": {}, "template": pod}
    workers = [{"groupName": "gpu", "replicas": 2, "rayStartParams": {}, "template": copy.deepcopy(_pod("ray-worker"))}]
    cluster = {"headGroupSpec": head, "workerGroupSpecs": workers}
    specs: dict[str, tuple[str, dict[str, Any]]] = {
        "Deployment": ("apps/v1", {"selector": {"matchLabels": {"app": "grpo"}}, "template": pod}),
        "StatefulSet": (
            "apps/v1",
            {"serviceName": "grpo", "selector": {"matchLabels": {"app": "grpo"}}, "template": pod},
        ),
        "Job": ("batch/v1", {"template": {**pod, "spec": {**pod["spec"], "restartPolicy": "Never"}}}),
        "JobSet": (
            "jobset.x-k8s.io/v1alpha2",
            {"replicatedJobs": [{"name": "trainers", "template": {"spec": {"template": pod}}}]},
        ),
        "RayJob": ("ray.io/v1", {"entrypoint": "python train.py", "rayClusterSpec": cluster}),
        "RayCluster": ("ray.io/v1", cluster),
        "RayService": ("ray.io/v1", {"serveConfigV2": "applications: []", "rayClusterConfig": cluster}),
    }
    api, spec = specs[kind]
    if kind == "JobSet":
        # JSON 6902 patches address containers by index: the RL container first.
        spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"].reverse()
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec}


def _kustomize_run(files: dict[str, str], base: dict[str, Any], tmp: Path) -> subprocess.CompletedProcess[str]:
    kubectl = tool("kubectl", "builds the Kustomize Component offline (kubectl kustomize)")
    tree = {f"bundle/{p}": t for p, t in files.items() if p.startswith("workload/")}
    tree["base/workload.yaml"] = yaml.safe_dump(base)
    tree["base/kustomization.yaml"] = yaml.safe_dump(
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": ["workload.yaml"],
            "components": ["../bundle/workload"],
        }
    )
    write_tree(tmp, tree)
    return subprocess.run([kubectl, "kustomize", str(tmp / "base")], capture_output=True, text=True, check=False)


def _kustomize(files: dict[str, str], base: dict[str, Any], tmp: Path) -> list[dict[str, Any]]:
    proc = _kustomize_run(files, base, tmp)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def _template(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj["spec"]
    found: dict[str, Any] = {
        "Deployment": lambda: spec["template"],
        "StatefulSet": lambda: spec["template"],
        "Job": lambda: spec["template"],
        "JobSet": lambda: spec["replicatedJobs"][0]["template"]["spec"]["template"],
        "RayJob": lambda: spec["rayClusterSpec"]["headGroupSpec"]["template"],
        "RayCluster": lambda: spec["headGroupSpec"]["template"],
        "RayService": lambda: spec["rayClusterConfig"]["headGroupSpec"]["template"],
    }[obj["kind"]]()
    return found


def _container(template: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in template["spec"]["containers"] if c["name"] == name)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_component_wires_every_workload_kind(kind: str, tmp_path: Path) -> None:
    container, files = _variant(kind)
    out = _kustomize(files, _sample(kind, container), tmp_path)
    workload = next(d for d in out if d["kind"] == kind)
    template = _template(workload)
    rl = _container(template, container)
    names = [e["name"] for e in rl["env"]]
    assert "EXISTING" in names, "the container's own env is kept"
    expected = [e["name"] for e in objects_env(files)]
    assert [n for n in names if n != "EXISTING"] == expected  # in order: $(POD_NAME) needs POD_NAME first
    # The other containers are untouched.
    assert _container(template, "proxy") == {"name": "proxy", "image": "envoyproxy/envoy:v1.31.0"}
    if kind != "JobSet":
        assert template["metadata"]["labels"] == {"app": "grpo", "rlobs.io/workload": "grpo-trainer"}
    if kind in RAY_KINDS:
        sidecar = _container(template, "fluentbit")
        assert {m["mountPath"] for m in sidecar["volumeMounts"]} == {"/tmp/ray", "/fluent-bit/etc/fluent-bit.conf"}
        assert {"name": "ray-logs", "mountPath": "/tmp/ray"} in rl["volumeMounts"]
        assert {v["name"] for v in template["spec"]["volumes"]} == {"ray-logs", "fluentbit-config"}
        workers = workload["spec"].get("rayClusterSpec", workload["spec"].get("rayClusterConfig", workload["spec"]))
        assert len(workers["workerGroupSpecs"][0]["template"]["spec"]["containers"]) == 2  # untouched
        assert any(d["kind"] == "ConfigMap" and d["metadata"]["name"] == "fluentbit-config" for d in out)
    if kind in ("Deployment", "StatefulSet", "Job"):
        module("kubernetes_validate", "validates the patched workload against the Kubernetes schema")
        import kubernetes_validate

        kubernetes_validate.validate(workload, K8S_VERSION, strict=True)


def objects_env(files: dict[str, str]) -> list[dict[str, Any]]:
    """The env list the rendered patch adds (strategic merge patch or JSON 6902 operations)."""
    patch = yaml.safe_load(files["workload/otel-env-patch.yaml"])
    if isinstance(patch, list):
        return [op["value"] for op in patch if op["path"].endswith("/env/-")]
    return list(_container(_template(patch), next(iter(_template(patch)["spec"]["containers"]))["name"])["env"])


@pytest.mark.slow
def test_prometheus_exporter_pipeline_declares_the_scraped_port(tmp_path: Path) -> None:
    container, files = _variant("Deployment", "prometheus-exporter")
    out = _kustomize(files, _sample("Deployment", container), tmp_path)
    rl = _container(_template(out[0]), container)
    assert {"name": "rl-metrics", "containerPort": 9464, "protocol": "TCP"} in rl["ports"]
    assert {"name": "gcs", "containerPort": 6379} in rl["ports"]
    env = {e["name"]: e.get("value") for e in rl["env"]}
    assert env["OTEL_METRICS_EXPORTER"] == "prometheus" and env["OTEL_EXPORTER_PROMETHEUS_PORT"] == "9464"
    assert "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" not in env


@pytest.mark.slow
def test_kubernetes_validate_rejects_a_broken_patch_result(tmp_path: Path) -> None:
    module("kubernetes_validate", "validates the patched workload against the Kubernetes schema")
    import kubernetes_validate

    container, files = _variant("Deployment")
    out = _kustomize(files, _sample("Deployment", container), tmp_path)
    broken = copy.deepcopy(out[0])
    _container(_template(broken), container)["env"][1]["valueFrom"] = {"fieldRef": {"path": "metadata.name"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_env_points_at_the_collector_with_an_explicit_scheme_and_carries_the_run_identity() -> None:
    patch = objects("eks-jark", "workload/")["workload/otel-env-patch.yaml"]
    env = {e["name"]: e.get("value") for e in objects_env(bundle("eks-jark"))}
    assert patch["kind"] == "RayJob"
    for key in ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        assert env[key] == "http://otel-collector.monitoring.svc.cluster.local:4317"
    assert env["OTEL_SERVICE_NAME"] == "grpo-trainer"
    assert env["RL_SYSTEM"] == "verl" and env["RL_ALGORITHM"] == "grpo" and env["RL_RUN_ID"] == "grpo-trainer"
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
    env = _container(_template(sidecar), "fluentbit")["env"]
    assert env[0] == {
        "name": "POD_LABELS",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['ray.io/cluster']"}},
    }


def test_non_ray_workloads_get_no_ray_log_sidecar() -> None:
    _, files = _variant("Deployment")
    assert "workload/ray-logs-patch.yaml" not in files
    assert "fluentbit-config.yaml" not in files["workload/kustomization.yaml"]


@pytest.mark.slow
def test_kustomize_fails_loudly_when_a_jobset_container_has_no_env_list(tmp_path: Path) -> None:
    """The documented JobSet limitation: the JSON 6902 patch appends to an existing env list, else the build fails."""
    container, files = _variant("JobSet")
    base = _sample("JobSet", container)
    del base["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    proc = _kustomize_run(files, base, tmp_path)
    assert proc.returncode != 0 and "env" in proc.stderr
