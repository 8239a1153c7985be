"""The GKE workload component: built by real kustomize onto a base of every kind, validated by kubernetes-validate."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.profile.model import ProfileBase as Profile
from rlobs.rl import workloads
from rlobs.rl.catalog import load_catalog
from rlobs.targets import parse_profile
from rlobs.targets.gke import workload
from testing.bundles import build
from testing.gke import write_bundle
from testing.helpers import all_profiles, gke_profile, module
from testing.workloads import (
    KINDS,
    assert_user_parts_kept,
    bundle_component,
    container,
    kustomize,
    kustomize_run,
    sample,
    targeted,
)

K8S_VERSION = "1.34"


def _profile(kind: str, instrumentation: bool = False) -> Profile:
    text = all_profiles()["gke-managed-otel"].replace("kind: Deployment", f"kind: {kind}")
    if kind == "JobSet":
        text = text.replace("  container: trainer", "  container: trainer\n  replicatedJobs: [driver, rollout]")
    if instrumentation:
        text = text.replace("instrumentationResource: false", "instrumentationResource: true")
    return parse_profile(text, f"{kind}.yaml")


def _kustomize(tmp_path: Path, p: Profile) -> list[dict[str, Any]]:
    return kustomize(tmp_path, bundle_component({r.path: r.text for r in build(p)}), sample(p.workload))


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_component_merges_env_into_the_rl_container(tmp_path: Path, kind: str) -> None:
    p = _profile(kind)
    (built,) = _kustomize(tmp_path, p)
    # The user's containers, env, ports, mounts, volumes and other pod templates are kept as they are.
    assert_user_parts_kept(built, p.workload)
    expected = workload.container_env(p, load_catalog())
    for pod in targeted(built, p.workload):
        rl = container(pod, p.workload.container)
        assert all(e in rl["env"] for e in expected)
        assert pod["spec"]["serviceAccountName"] == "grpo-trainer"


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_built_workload_passes_kubernetes_validate(tmp_path: Path, kind: str) -> None:
    module("kubernetes_validate", "validates the patched workload against Kubernetes 1.34 schemas")
    import kubernetes_validate

    p = _profile(kind)
    (built,) = _kustomize(tmp_path, p)
    if kind in workloads.CRD_KINDS:
        # No schema for CRDs in kubernetes-validate: check each pod spec the patch touched, as a Pod.
        for pod in targeted(built, p.workload):
            as_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": pod["spec"]}
            kubernetes_validate.validate(as_pod, K8S_VERSION, strict=True)
    else:
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
def test_kustomize_rejects_a_broken_patch(tmp_path: Path) -> None:
    files = bundle_component({r.path: r.text for r in build(_profile("Deployment"))})
    files["otel-env-patch.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nspec: [\n"
    proc = kustomize_run(tmp_path, files, sample(_profile("Deployment").workload))
    assert proc.returncode != 0 and proc.stderr


@pytest.mark.slow
def test_instrumentation_resource_is_in_the_build(tmp_path: Path) -> None:
    docs = _kustomize(tmp_path, _profile("Deployment", instrumentation=True))
    (inst,) = [d for d in docs if d["kind"] == "Instrumentation"]
    assert inst == {
        "apiVersion": "telemetry.googleapis.com/v1alpha1",
        "kind": "Instrumentation",
        "metadata": {
            "name": "rl-gke",
            "namespace": "rl",
            "labels": {"app.kubernetes.io/part-of": "rlobs", "rlobs.io/bundle": "rl-gke"},
        },
        "spec": {"selector": {}},
    }


@pytest.mark.parametrize("kind", KINDS)
def test_env_references_are_defined_above_their_use(kind: str) -> None:
    env = workload.container_env(_profile(kind), load_catalog())
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
    env = _resolved(workload.container_env(p, load_catalog()), "grpo-jobset-driver-0-0-abcde")
    endpoint = "http://otel-collector.observability.svc.cluster.local:4317"  # its gmp-collector's collectorEndpoint
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
    for name, value in _resolved(workload.container_env(p, load_catalog()), "grpo-trainer-5d9c-xyz").items():
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
    assert "workload/openapi.json" in files
    files = {r.path for r in build(_profile("Deployment"))}
    assert "workload/openapi.json" not in files and "workload/instrumentation.yaml" not in files
    bundle = write_bundle("gke-autopilot-jobset", tmp_path)
    kustomization = yaml.safe_load((bundle / "workload/kustomization.yaml").read_text())
    assert kustomization["kind"] == "Component" and kustomization["resources"] == ["instrumentation.yaml"]


def test_managed_collector_endpoint_is_expanded_in_order() -> None:
    p = parse_profile(all_profiles()["gke-managed-otel"], "p.yaml")
    env = _resolved(workload.container_env(p, load_catalog()), "pod-0")
    endpoint = "http://opentelemetry-collector.gke-managed-otel.svc.cluster.local:4317"
    assert env["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"] == env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == endpoint


def test_gmp_collector_naming_exports_to_the_profiles_collector() -> None:
    from rlobs.targets.gke import workload

    p = gke_profile("gke-autopilot-jobset")
    assert p.gke.naming == "gmp-collector" and p.gke.collector_endpoint
    env = {e["name"]: e.get("value") for e in workload.container_env(p, load_catalog())}
    assert env["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"] == p.gke.collector_endpoint
    assert env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == p.gke.collector_endpoint
    assert "OTEL_COLLECTOR_NAME" not in env  # the managed collector is not where these go


def test_gmp_collector_naming_needs_a_collector_and_only_it_takes_one() -> None:
    from rlobs.errors import ProfileError
    from rlobs.targets import parse_profile

    text = all_profiles()["gke-autopilot-jobset"]
    without = text.replace("  collectorEndpoint: http://otel-collector.observability.svc.cluster.local:4317\n", "")
    with pytest.raises(ProfileError, match="naming is gmp-collector, so expected `collectorEndpoint:`"):
        parse_profile(without, "p.yaml")
    other = text.replace("naming: gmp-collector", "naming: telemetry-api")
    with pytest.raises(ProfileError, match="expected no collectorEndpoint with naming telemetry-api"):
        parse_profile(other, "p.yaml")
