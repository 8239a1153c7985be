"""The GKE workload component: built by real kustomize onto a base of every kind, validated by kubernetes-validate."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gke_helpers import write_bundle
from helpers import all_profiles, module, tool, write_tree
from rlobs import gke_workload
from rlobs.bundle import build
from rlobs.catalog import load_catalog
from rlobs.model import Profile
from rlobs.profile import parse_profile

KINDS = ("Deployment", "StatefulSet", "Job", "JobSet", "RayJob", "RayCluster", "RayService")
K8S_VERSION = "1.34"


def _profile(kind: str, instrumentation: bool = False) -> Profile:
    text = all_profiles()["gke-managed-otel"].replace("kind: Deployment", f"kind: {kind}")
    if kind == "JobSet":
        text = text.replace("  container: trainer", "  container: trainer\n  replicatedJobs: [driver]")
    if instrumentation:
        text = text.replace("instrumentationResource: false", "instrumentationResource: true")
    return parse_profile(text, f"{kind}.yaml")


def _container(name: str, image: str, env: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"name": name, "image": image, **({"env": env} if env else {})}


def _pod(containers: list[dict[str, Any]], labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"labels": labels or {"app": "rl"}}, "spec": {"containers": containers}}


def _base(p: Profile) -> dict[str, Any]:
    """The user's workload as it might look: the RL container with env of its own, plus a sidecar."""
    w = p.workload
    rl = _container(w.container, "rl:1", [{"name": "HF_HOME", "value": "/cache"}])
    pod = _pod([rl, _container("sidecar", "sidecar:1")])
    meta = {"name": w.name, "namespace": w.namespace}
    head = {"apiVersion": gke_workload.API_VERSIONS[w.kind], "kind": w.kind, "metadata": meta}
    if w.kind in ("Deployment", "StatefulSet"):
        spec: dict[str, Any] = {"selector": {"matchLabels": {"app": "rl"}}, "template": pod}
        if w.kind == "StatefulSet":
            spec["serviceName"] = w.name
        return {**head, "spec": spec}
    if w.kind == "Job":
        pod["spec"]["restartPolicy"] = "Never"
        return {**head, "spec": {"template": pod}}
    if w.kind == "JobSet":
        other = _pod([_container(w.container, "rollout:1", [{"name": "ROLE", "value": "rollout"}])])
        jobs = [
            {"name": "driver", "replicas": 1, "template": {"spec": {"template": pod}}},
            {"name": "rollout", "replicas": 4, "template": {"spec": {"template": other}}},
        ]
        return {**head, "spec": {"replicatedJobs": jobs}}
    cluster = {
        "headGroupSpec": {"rayStartParams": {}, "template": pod},
        "workerGroupSpecs": [{"groupName": "gpu", "replicas": 2, "template": _pod([_container("ray-worker", "w:1")])}],
    }
    if w.kind == "RayJob":
        return {**head, "spec": {"entrypoint": "python train.py", "rayClusterSpec": cluster}}
    if w.kind == "RayService":
        return {**head, "spec": {"rayClusterConfig": cluster}}
    return {**head, "spec": cluster}


def _head_pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    kind, spec = obj["kind"], obj["spec"]
    if kind == "JobSet":
        return dict(spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"])
    if kind in ("RayJob", "RayService"):
        spec = spec["rayClusterSpec" if kind == "RayJob" else "rayClusterConfig"]
    if kind.startswith("Ray"):
        return dict(spec["headGroupSpec"]["template"]["spec"])
    return dict(spec["template"]["spec"])


def _kustomize(tmp_path: Path, p: Profile) -> list[dict[str, Any]]:
    kubectl = tool("kubectl", "builds the workload component with kustomize")
    bundle = tmp_path / "bundle"
    for r in build(p):
        if r.path.startswith("workload/"):
            write_tree(bundle, {r.path: r.text})
    write_tree(
        tmp_path,
        {
            "base/workload.yaml": yaml.safe_dump(_base(p)),
            "base/kustomization.yaml": "resources: [workload.yaml]\n",
            "overlay/kustomization.yaml": "resources: [../base]\ncomponents: [../bundle/workload]\n",
        },
    )
    proc = subprocess.run([kubectl, "kustomize", str(tmp_path / "overlay")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_component_merges_env_into_the_rl_container(tmp_path: Path, kind: str) -> None:
    p = _profile(kind)
    (built,) = _kustomize(tmp_path, p)
    pod = _head_pod_spec(built)
    rl, sidecar = pod["containers"]
    assert rl["name"] == p.workload.container and rl["image"] == "rl:1"
    names = [e["name"] for e in rl["env"]]
    # The patch adds its env and keeps the container's own; the sidecar and the rest of the object are untouched.
    assert "HF_HOME" in names and set(names) >= {e["name"] for e in gke_workload.container_env(p, load_catalog())}
    assert sidecar == {"name": "sidecar", "image": "sidecar:1"}
    assert pod["serviceAccountName"] == "grpo-trainer"
    base = _base(p)
    if kind == "JobSet":
        assert built["spec"]["replicatedJobs"][1] == base["spec"]["replicatedJobs"][1]
    if kind.startswith("Ray"):
        cluster = built["spec"].get("rayClusterSpec") or built["spec"].get("rayClusterConfig") or built["spec"]
        assert (
            cluster["workerGroupSpecs"]
            == (base["spec"].get("rayClusterSpec") or base["spec"].get("rayClusterConfig") or base["spec"])[
                "workerGroupSpecs"
            ]
        )


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_built_workload_passes_kubernetes_validate(tmp_path: Path, kind: str) -> None:
    module("kubernetes_validate", "validates the patched workload against Kubernetes 1.34 schemas")
    import kubernetes_validate

    (built,) = _kustomize(tmp_path, _profile(kind))
    if kind in gke_workload.CRD_KINDS:
        # No schema for CRDs in kubernetes-validate: check the pod spec the patch touched, as a Pod.
        built = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": _head_pod_spec(built)}
    kubernetes_validate.validate(built, K8S_VERSION, strict=True)


@pytest.mark.slow
def test_kubernetes_validate_rejects_a_broken_env() -> None:
    module("kubernetes_validate", "validates the patched workload against Kubernetes 1.34 schemas")
    import kubernetes_validate

    env = [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"path": "metadata.name"}}}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}]}}
    pod["spec"]["containers"][0]["env"] = env
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


@pytest.mark.slow
def test_kustomize_without_the_schema_would_clobber_crd_lists(tmp_path: Path) -> None:
    """Why the component ships openapi-schema.json: without merge keys, kustomize replaces CRD lists."""
    p = _profile("JobSet")
    (built,) = _kustomize(tmp_path, p)
    assert len(built["spec"]["replicatedJobs"]) == 2
    (tmp_path / "bundle/workload/kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: otel-env-patch.yaml\n"
    )
    kubectl = tool("kubectl", "builds the workload component with kustomize")
    out = subprocess.run([kubectl, "kustomize", str(tmp_path / "overlay")], capture_output=True, text=True, check=True)
    (clobbered,) = yaml.safe_load_all(out.stdout)
    assert len(clobbered["spec"]["replicatedJobs"]) == 1


@pytest.mark.slow
def test_kustomize_rejects_a_broken_patch(tmp_path: Path) -> None:
    kubectl = tool("kubectl", "builds the workload component with kustomize")
    _kustomize(tmp_path, _profile("Deployment"))
    (tmp_path / "bundle/workload/otel-env-patch.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nspec: [\n")
    proc = subprocess.run([kubectl, "kustomize", str(tmp_path / "overlay")], capture_output=True, text=True)
    assert proc.returncode != 0 and proc.stderr


@pytest.mark.slow
def test_instrumentation_resource_is_in_the_build(tmp_path: Path) -> None:
    docs = _kustomize(tmp_path, _profile("Deployment", instrumentation=True))
    (inst,) = [d for d in docs if d["kind"] == "Instrumentation"]
    assert inst == {
        "apiVersion": "telemetry.googleapis.com/v1alpha1",
        "kind": "Instrumentation",
        "metadata": {"name": "rl-gke", "namespace": "rl"},
        "spec": {"selector": {}},
    }


@pytest.mark.parametrize("kind", KINDS)
def test_env_references_are_defined_above_their_use(kind: str) -> None:
    env = gke_workload.container_env(_profile(kind), load_catalog())
    defined: set[str] = set()
    for e in env:
        for ref in re.findall(r"\$\((\w+)\)", e.get("value", "")):
            assert ref in defined, f"{e['name']} uses $({ref}) before it is defined"
        defined.add(e["name"])
    assert len(defined) == len(env), "each env name once"


def _resolved(env: list[dict[str, Any]], pod_name: str) -> dict[str, str]:
    """The env as the kubelet expands it (downward API POD_NAME, then $(VAR) in order)."""
    out: dict[str, str] = {}
    for e in env:
        value = pod_name if "valueFrom" in e else e["value"]
        out[e["name"]] = re.sub(r"\$\((\w+)\)", lambda m: out[m.group(1)], value)
    return out


def test_env_values() -> None:
    p = parse_profile(all_profiles()["gke-autopilot-jobset"], "p.yaml")
    env = _resolved(gke_workload.container_env(p, load_catalog()), "grpo-jobset-driver-0-0-abcde")
    endpoint = "http://opentelemetry-collector.gke-managed-otel.svc.cluster.local:4317"
    assert env["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"] == env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == endpoint
    assert env["OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"] == endpoint  # logs: true
    assert env["OTEL_SERVICE_NAME"] == "grpo-trainer"
    assert env["OTEL_METRIC_EXPORT_INTERVAL"] == "15000"
    assert "service.instance.id=grpo-jobset-driver-0-0-abcde" in env["OTEL_RESOURCE_ATTRIBUTES"].split(",")
    assert {k: v for k, v in env.items() if k.startswith("RL_")} == {
        "RL_RUN_ID": "grpo-qwen-0042",
        "RL_SYSTEM": "nemo-rl",
        "RL_ALGORITHM": "grpo",
        "RL_ENVIRONMENT": "math",
        "RL_MODEL": "Qwen2.5-1.5B",
    }


@pytest.mark.slow
def test_real_sdk_reads_the_env_as_intended(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real OpenTelemetry SDK: plaintext gRPC to the collector, service name and instance id from the env."""
    module("opentelemetry.exporter.otlp.proto.grpc", "checks the exporter's endpoint handling")
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource

    p = parse_profile(all_profiles()["gke-managed-otel"], "p.yaml")
    for name, value in _resolved(gke_workload.container_env(p, load_catalog()), "grpo-trainer-5d9c-xyz").items():
        monkeypatch.setenv(name, value)
    for exporter in (OTLPMetricExporter(), OTLPSpanExporter()):
        assert exporter._endpoint == "opentelemetry-collector.gke-managed-otel.svc.cluster.local:4317"
        assert exporter._insecure is True
    attrs = Resource.create({}).attributes
    assert attrs["service.name"] == "grpo-trainer" and attrs["service.instance.id"] == "grpo-trainer-5d9c-xyz"
    # The trap the explicit scheme avoids: without it the exporter would use TLS against the plaintext collector.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "opentelemetry-collector.gke-managed-otel:4317")
    assert OTLPMetricExporter()._insecure is False


def test_bundle_layout_per_kind(tmp_path: Path) -> None:
    files = {r.path for r in build(_profile("RayService"))}
    assert "workload/openapi-schema.json" in files
    files = {r.path for r in build(_profile("Deployment"))}
    assert "workload/openapi-schema.json" not in files and "workload/instrumentation.yaml" not in files
    bundle = write_bundle("gke-autopilot-jobset", tmp_path)
    kustomization = yaml.safe_load((bundle / "workload/kustomization.yaml").read_text())
    assert kustomization["kind"] == "Component" and kustomization["resources"] == ["instrumentation.yaml"]
