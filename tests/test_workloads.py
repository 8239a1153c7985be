"""The workload kinds: patch shape per kind, the merge-key schema, the Component, and real kustomize merging by name."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.errors import ProfileError
from rlobs.rl import workloads
from rlobs.targets import parse_profile
from testing.bundles import build
from testing.helpers import all_profiles, tool, write_tree
from testing.workloads import (
    KINDS,
    OTHER_JOB,
    PROXY,
    assert_user_parts_kept,
    bundle_component,
    container,
    kustomize,
    kustomize_run,
    pod,
    sample,
    targeted,
    without_worker_groups,
    workload,
)

FRAGMENT: dict[str, Any] = {
    "metadata": {"labels": {"rlobs.io/workload": "grpo-trainer"}},
    "spec": {
        "containers": [
            {
                "name": "trainer",
                "env": [{"name": "OTEL_SERVICE_NAME", "value": "grpo-trainer"}],
                "ports": [{"name": "rl-metrics", "containerPort": 9464, "protocol": "TCP"}],
                "volumeMounts": [{"name": "logs", "mountPath": "/tmp/ray"}],
            },
            {"name": "fluentbit", "image": "fluent/fluent-bit:4.0"},
        ],
        "volumes": [{"name": "logs", "emptyDir": {}}],
    },
}


def fragment(name: str) -> dict[str, Any]:
    """FRAGMENT for the RL container `name` (a fresh copy each call)."""
    out = json.loads(json.dumps(FRAGMENT))
    out["spec"]["containers"][0]["name"] = name
    return out


def _at(obj: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "JobSet"])
def test_patch_puts_the_fragment_at_the_kinds_pod_template(kind: str) -> None:
    patch = workloads.patch(workload(kind), fragment)
    assert patch["apiVersion"] == workloads.API_VERSIONS[kind] and patch["kind"] == kind
    assert patch["metadata"] == {"name": "grpo-trainer", "namespace": "rl"}
    assert _at(patch, workloads.POD_TEMPLATE[kind]) == FRAGMENT
    if kind in workloads.RAY_KINDS:
        assert workloads.POD_TEMPLATE[kind][-2:] == ("headGroupSpec", "template")


def test_jobset_patch_has_one_entry_per_named_replicated_job() -> None:
    patch = workloads.patch(workload("JobSet", jobs=("driver", {"name": "rollout", "container": "vllm"})), fragment)
    assert patch["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
    jobs = _at(patch, workloads.REPLICATED_JOBS)
    assert [j["name"] for j in jobs] == ["driver", "rollout"]
    # Each job's patch names its own RL container (the short form's is workload.container).
    assert _at(jobs[0], workloads.JOB_POD_TEMPLATE) == FRAGMENT
    assert _at(jobs[1], workloads.JOB_POD_TEMPLATE) == fragment("vllm")
    # Copies, not one shared dict: a later edit of one job's template must not leak into the other.
    assert _at(jobs[0], workloads.JOB_POD_TEMPLATE) is not _at(jobs[1], workloads.JOB_POD_TEMPLATE)


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "Job"])
def test_built_in_kinds_need_no_schema(kind: str) -> None:
    assert workloads.openapi(kind) is None
    assert "openapi" not in workloads.component(workload(kind), [workloads.ENV_PATCH_FILE], [])


@pytest.mark.parametrize("kind", sorted(workloads.CRD_KINDS))
def test_schema_points_the_crds_pod_template_at_the_built_in_pod_template_spec(kind: str) -> None:
    schema = workloads.openapi(kind)
    assert schema is not None
    json.dumps(schema)  # serialisable as the bundle's JSON file
    (name, definition), *rest = schema["definitions"].items()
    assert not rest
    group, _, version = workloads.API_VERSIONS[kind].partition("/")
    assert definition["x-kubernetes-group-version-kind"] == [{"group": group, "kind": kind, "version": version}]
    assert name == {"JobSet": "io.x-k8s.jobset.v1alpha2.JobSet"}.get(kind, f"io.ray.v1.{kind}")
    ref = {"$ref": "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"}
    node = definition
    if kind == "JobSet":
        jobs = node["properties"]["spec"]["properties"]["replicatedJobs"]
        assert jobs["x-kubernetes-patch-merge-key"] == "name" and jobs["x-kubernetes-patch-strategy"] == "merge"
        node, path = jobs["items"], workloads.JOB_POD_TEMPLATE
    else:
        path = workloads.POD_TEMPLATE[kind]
    for key in path:
        node = node["properties"][key]
    assert node == ref


def test_component_lists_the_schema_resources_and_patches_in_order() -> None:
    w = workload("RayJob", container="ray-head")
    assert workloads.component(w, ["a.yaml", "b.yaml"], ["cm.yaml"]) == {
        "apiVersion": "kustomize.config.k8s.io/v1alpha1",
        "kind": "Component",
        "openapi": {"path": "openapi.json"},
        "resources": ["cm.yaml"],
        "patches": [
            {"path": "a.yaml", "target": {"kind": "RayJob", "name": "grpo-trainer"}},
            {"path": "b.yaml", "target": {"kind": "RayJob", "name": "grpo-trainer"}},
        ],
    }


def _component(kind: str, schema: dict[str, Any] | None = None) -> tuple[dict[str, str], Any]:
    w = workload(kind)
    files = {
        "kustomization.yaml": yaml.safe_dump(workloads.component(w, ["patch.yaml"], [])),
        "patch.yaml": yaml.safe_dump(workloads.patch(w, fragment)),
    }
    schema = schema or workloads.openapi(kind)
    if schema is not None:
        files[workloads.OPENAPI_FILE] = json.dumps(schema)
    return files, w


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_kustomize_merges_every_list_by_name(kind: str, tmp_path: Path) -> None:
    files, w = _component(kind)
    (built,) = kustomize(tmp_path, files, sample(w))
    assert_user_parts_kept(built, w)
    for template in targeted(built, w):
        rl = container(template, "trainer")
        assert {"name": "OTEL_SERVICE_NAME", "value": "grpo-trainer"} in rl["env"]
        assert {"name": "rl-metrics", "containerPort": 9464, "protocol": "TCP"} in rl["ports"]
        assert {"name": "logs", "mountPath": "/tmp/ray"} in rl["volumeMounts"]
        assert {"name": "logs", "emptyDir": {}} in template["spec"]["volumes"]
        assert container(template, "fluentbit") == {"name": "fluentbit", "image": "fluent/fluent-bit:4.0"}
        assert template["metadata"]["labels"]["rlobs.io/workload"] == "grpo-trainer"
    if kind == "JobSet":
        assert [j["name"] for j in built["spec"]["replicatedJobs"]] == ["driver", "rollout", OTHER_JOB]


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(workloads.CRD_KINDS))
@pytest.mark.parametrize("schema", ["none", "unknown-ref"])
def test_kustomize_without_the_merge_keys_replaces_crd_lists(kind: str, schema: str, tmp_path: Path) -> None:
    """Why the Component ships openapi.json, and that kustomize really resolves the built-in PodTemplateSpec: with
    no schema, or one pointing at a definition kustomize does not know, the patch replaces the lists."""
    files, w = _component(kind)
    if schema == "none":
        kustomization = yaml.safe_load(files.pop("kustomization.yaml"))
        del kustomization["openapi"], files[workloads.OPENAPI_FILE]
        files["kustomization.yaml"] = yaml.safe_dump(kustomization)
    else:
        files[workloads.OPENAPI_FILE] = files[workloads.OPENAPI_FILE].replace("PodTemplateSpec", "NoSuchSpec")
    (built,) = kustomize(tmp_path, files, sample(w))
    for template in targeted(built, w):
        assert PROXY not in template["spec"]["containers"]
    if kind == "JobSet" and schema == "none":
        assert [j["name"] for j in built["spec"]["replicatedJobs"]] == ["driver", "rollout"]  # OTHER_JOB is gone


@pytest.mark.slow
def test_built_in_kinds_beside_a_crd_still_merge(tmp_path: Path) -> None:
    """The custom schema adds to kustomize's built-in one: the user's own patch of a Deployment in the kustomization
    that includes the Component still merges containers and env by name."""
    kubectl = tool("kubectl", "builds the workload Component offline (kubectl kustomize)")
    files, w = _component("RayJob")
    deployment = workload("Deployment")
    write_tree(
        tmp_path,
        {
            **{f"component/{p}": t for p, t in files.items()},
            "base/workload.yaml": yaml.safe_dump(sample(w)),
            "base/deployment.yaml": yaml.safe_dump(sample(deployment)),
            "base/patch.yaml": yaml.safe_dump(workloads.patch(deployment, fragment)),
            "base/kustomization.yaml": yaml.safe_dump(
                {
                    "resources": ["workload.yaml", "deployment.yaml"],
                    "patches": [{"path": "patch.yaml"}],
                    "components": ["../component"],
                }
            ),
        },
    )
    proc = subprocess.run([kubectl, "kustomize", str(tmp_path / "base")], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    built = {d["kind"]: d for d in yaml.safe_load_all(proc.stdout)}
    assert_user_parts_kept(built["Deployment"], deployment)
    assert_user_parts_kept(built["RayJob"], w)


@pytest.mark.slow
def test_kustomize_rejects_a_broken_patch(tmp_path: Path) -> None:
    files, w = _component("JobSet")
    files["patch.yaml"] = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nspec: [\n"
    proc = kustomize_run(tmp_path, files, sample(w))
    assert proc.returncode != 0 and proc.stderr


def _errors(text: str) -> list[str]:
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    return info.value.lines()


@pytest.mark.parametrize("target", ["gke-managed-otel", "eks-jark"])
def test_replicated_jobs_are_required_for_a_jobset_and_only_there(target: str) -> None:
    text = without_worker_groups(all_profiles()[target])
    (kind,) = re.findall(r"^  kind: (\w+)", text, flags=re.MULTILINE)
    jobset = text.replace(f"  kind: {kind}", "  kind: JobSet")
    (line,) = _errors(jobset)
    assert "workload.kind: kind is JobSet, so expected `replicatedJobs:`" in line and line.endswith(", got none")
    parse_profile(jobset.replace("kind: JobSet", "kind: JobSet\n  replicatedJobs: [driver, rollout]"))
    (line,) = _errors(text.replace(f"kind: {kind}", f"kind: {kind}\n  replicatedJobs: [driver]"))
    assert f"workload.replicatedJobs: expected no replicatedJobs for a {kind}, got some" in line
    (line,) = _errors(jobset.replace("kind: JobSet", "kind: JobSet\n  replicatedJobs: [driver, driver]"))
    assert "workload.replicatedJobs: expected each replicatedJob once" in line
    (line,) = _errors(jobset.replace("kind: JobSet", "kind: JobSet\n  replicatedJobs: [Driver]"))
    assert "workload.replicatedJobs[0].name: expected a Kubernetes name" in line
    (line,) = _errors(jobset.replace("kind: JobSet", "kind: JobSet\n  replicatedJobs: [{name: a, container: B}]"))
    assert "workload.replicatedJobs[0].container: expected a Kubernetes name" in line
    (line,) = _errors(jobset.replace("kind: JobSet", "kind: JobSet\n  replicatedJobs: [{name: a, image: x}]"))
    assert "workload.replicatedJobs[0].image: unknown key" in line


@pytest.mark.slow
@pytest.mark.parametrize("target", ["gke-managed-otel", "eks-jark"])
def test_two_job_jobset_gets_each_jobs_own_container_and_no_imageless_one(target: str, tmp_path: Path) -> None:
    """A JobSet whose rollout job runs `vllm`, not `trainer`: the bundle's Component (the real rendered one, built by
    real kustomize) patches each job's own container and adds none without an image, which admission would reject."""
    text = without_worker_groups(all_profiles()[target])
    (kind,) = re.findall(r"^  kind: (\w+)", text, flags=re.MULTILINE)
    text = re.sub(r"^  container: [\w-]+", "  container: trainer", text, flags=re.MULTILINE)
    jobs = "[{name: trainer, container: trainer}, {name: rollout, container: vllm}]"
    p = parse_profile(text.replace(f"  kind: {kind}", f"  kind: JobSet\n  replicatedJobs: {jobs}"), "p.yaml")
    (built,) = kustomize(tmp_path, bundle_component({r.path: r.text for r in build(p)}), sample(p.workload))
    assert_user_parts_kept(built, p.workload)
    by_job = {j["name"]: j["template"]["spec"]["template"]["spec"] for j in built["spec"]["replicatedJobs"]}
    assert sorted(by_job) == sorted(["trainer", "rollout", OTHER_JOB])
    for job, spec in by_job.items():
        for c in [*spec["containers"], *spec.get("initContainers", [])]:
            assert c.get("image"), f"{job}: container {c['name']} has no image"
    assert "trainer" not in {c["name"] for c in by_job["rollout"]["containers"]}
    vllm = container({"spec": by_job["rollout"]}, "vllm")
    assert any(e["name"] == "OTEL_SERVICE_NAME" for e in vllm["env"])
    assert by_job[OTHER_JOB] == sample(p.workload)["spec"]["replicatedJobs"][-1]["template"]["spec"]["template"]["spec"]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["gke-managed-otel", "eks-jark"])
def test_verl_rayjob_gets_the_env_on_the_head_and_every_named_worker_group(target: str, tmp_path: Path) -> None:
    """verl's TaskRunner actor (it trains and writes the metrics file) may run on any pod of the RayJob: the bundle's
    real Component, built by real kustomize, puts the env and the adapter switch on the head and on each named worker
    group's own container, leaves a group it does not name as it is, and adds no image-less container."""
    text = all_profiles()[target]
    (kind,) = re.findall(r"^  kind: (\w+)", text, flags=re.MULTILINE)
    text = re.sub(r"^  (container|workerGroups): .*\n(    - .*\n)*", "", text, flags=re.MULTILINE)
    groups = "[{name: gpu, container: ray-worker}, {name: rollout, container: vllm}]"
    p = parse_profile(
        text.replace(f"  kind: {kind}", f"  kind: RayJob\n  container: trainer\n  workerGroups: {groups}")
    )
    base = sample(p.workload)
    spec = base["spec"]["rayClusterSpec"]
    spec["workerGroupSpecs"] += [
        {"groupName": "rollout", "replicas": 1, "rayStartParams": {}, "template": pod("vllm")},
        {"groupName": "cpu", "replicas": 1, "rayStartParams": {}, "template": pod("ray-worker")},
    ]
    built = next(
        d
        for d in kustomize(tmp_path, bundle_component({r.path: r.text for r in build(p)}), base)
        if d["kind"] == "RayJob"
    )
    cluster = built["spec"]["rayClusterSpec"]
    by_group = {g["groupName"]: g["template"] for g in cluster["workerGroupSpecs"]}
    assert list(by_group) == ["gpu", "rollout", "cpu"]
    for template, name in [(cluster["headGroupSpec"]["template"], "trainer"), (by_group["gpu"], "ray-worker")]:
        env = {e["name"]: e.get("value") for e in container(template, name)["env"]}
        assert env["RLOBS_ADAPTER"] == "verl" and env["VERL_FILE_LOGGER_PATH"] and env["EXISTING"] == "kept"
        assert "OTEL_SERVICE_NAME" in env
    assert "RLOBS_ADAPTER" in {e["name"] for e in container(by_group["rollout"], "vllm")["env"]}
    for template in [cluster["headGroupSpec"]["template"], *by_group.values()]:
        assert all(c.get("image") for c in template["spec"]["containers"])
    assert by_group["cpu"] == pod("ray-worker")


def test_worker_groups_only_for_ray_kinds() -> None:
    text = all_profiles()["gke-managed-otel"]
    (kind,) = re.findall(r"^  kind: (\w+)", text, flags=re.MULTILINE)
    assert kind not in workloads.RAY_KINDS
    (line,) = _errors(text.replace(f"kind: {kind}", f"kind: {kind}\n  workerGroups: [gpu]"))
    assert f"workload.workerGroups: expected no workerGroups for a {kind}, got some" in line
    rayjob = text.replace(f"kind: {kind}", "kind: RayJob\n  workerGroups: [gpu, gpu]")
    (line,) = _errors(rayjob)
    assert "workload.workerGroups: expected each worker group once" in line


def test_verl_on_ray_with_no_worker_groups_is_warned(tmp_path: Path) -> None:
    from rlobs.targets import load_warnings

    text = without_worker_groups(all_profiles()["eks-jark"])
    (tmp_path / "p.yaml").write_text(text, encoding="utf-8")
    (found,) = [w for w in load_warnings(tmp_path / "p.yaml") if w.path == "workload.kind"]
    assert "expected workerGroups naming the worker groups of this verl Ray workload, got none" in found.message
    (tmp_path / "p.yaml").write_text(all_profiles()["eks-jark"], encoding="utf-8")
    assert not [w for w in load_warnings(tmp_path / "p.yaml") if w.path == "workload.kind"]
