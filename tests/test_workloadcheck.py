"""`rlobs check-workload` on real manifests (a Deployment, a RayJob with worker groups, a JobSet, `helm template` of a
real chart, a kustomization), and the env routes without Kustomize (envFrom ConfigMap, Helm values) built for real."""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from rlobs.main import app
from rlobs.profile.model import ProfileBase
from rlobs.rl import workloads
from rlobs.targets import parse_profile
from testing.bundles import build
from testing.helm import render as helm_render
from testing.helpers import all_profiles, tool, write_tree
from testing.workloads import bundle_component, container, kustomize, pod, sample

COLLECTOR = "opentelemetry-collector-0.170.0"  # a real chart that takes the container env as a list (extraEnvs)


def _profile(blueprint: str, tmp: Path, **subs: str) -> tuple[Path, ProfileBase]:
    head, _, text = all_profiles()[blueprint].partition("\nworkload:\n")
    for key, value in subs.items():  # workload.<key>
        text = re.sub(rf"^  {key}: .*$", f"  {key}: {value}", text, count=1, flags=re.MULTILINE)
    text = f"{head}\nworkload:\n{text}"
    path = tmp / "profile.yaml"
    path.write_text(text, encoding="utf-8")
    return path, parse_profile(text, str(path))


def _check(source: Path, manifests: Any, tmp: Path, stdin: str | None = None) -> tuple[int, list[str]]:
    """Exit code and stdout lines; `manifests` (objects) are written as one multi-document file unless a path."""
    if isinstance(manifests, Path | str):
        where = str(manifests)
    else:
        where = str(tmp / "manifests.yaml")
        Path(where).write_text(yaml.safe_dump_all(manifests), encoding="utf-8")
    result = CliRunner().invoke(app, ["check-workload", str(source), "--workload", where], input=stdin)
    return result.exit_code, result.stdout.splitlines()


def _bundle(p: ProfileBase, tmp: Path) -> Path:
    """The rendered bundle folder of `p`."""
    out = tmp / "bundle"
    write_tree(out, {r.path: r.text for r in build(p)})
    return out


def test_a_matching_deployment_passes_and_each_mismatch_is_one_line(tmp_path: Path) -> None:
    source, p = _profile("gke-managed-otel", tmp_path)
    ours = sample(p.workload)
    code, lines = _check(source, [{"kind": "Service", "metadata": {"name": "x"}}, ours], tmp_path)
    assert code == 0, lines
    assert lines == [
        "found    Deployment rl/grpo-trainer",
        "found    Deployment rl/grpo-trainer pod template, container trainer",
    ]
    renamed = copy.deepcopy(ours)
    renamed["metadata"]["name"] = "grpo-train"
    code, lines = _check(source, [renamed], tmp_path)
    assert code == 1
    assert lines == [
        "missing  Deployment rl/grpo-trainer: no Deployment named grpo-trainer in the manifests (Deployments found: "
        "grpo-train); the patch would not apply"
    ]
    code, lines = _check(source, [{**ours, "metadata": {"name": "grpo-trainer", "namespace": "ml"}}], tmp_path)
    assert code == 1
    assert lines == [
        "missing  Deployment rl/grpo-trainer: found in namespace ml, but the bundle is wired for namespace rl"
    ]
    other = copy.deepcopy(ours)
    other["spec"]["template"]["spec"]["containers"][1]["name"] = "main"
    code, lines = _check(source, [other], tmp_path)
    assert code == 1
    assert lines[1].startswith("missing  Deployment rl/grpo-trainer pod template, container trainer: not in it ")
    assert "(containers: proxy, main)" in lines[1] and "no image" in lines[1]
    code, lines = _check(source, [{"kind": "Job", "metadata": {"name": "grpo-trainer"}}], tmp_path)
    assert code == 1 and lines[0].endswith("(no Deployment in them); the patch would not apply")
    # No namespace in the manifests (kubectl apply -n decides): found, with a reminder.
    unset = {**ours, "metadata": {"name": "grpo-trainer"}}
    code, lines = _check(source, [unset], tmp_path)
    assert code == 0 and "(no namespace in the manifests: deploy it into that one)" in lines[0]


def _rayjob(p: ProfileBase, groups: list[tuple[str, str]]) -> dict[str, Any]:
    obj = sample(p.workload)
    obj["spec"]["rayClusterSpec"]["workerGroupSpecs"] = [
        {"groupName": g, "replicas": 1, "rayStartParams": {}, "template": pod(c)} for g, c in groups
    ]
    return obj


def test_a_verl_rayjob_needs_every_worker_group_wired(tmp_path: Path) -> None:
    """From the rendered bundle folder: the head and each named worker group are checked; a worker group the patch
    leaves out is missing too, since verl's TaskRunner may train on any pod."""
    _, p = _profile("eks-jark", tmp_path)
    bundle = _bundle(p, tmp_path)
    code, lines = _check(bundle, [_rayjob(p, [("gpu-workers", "ray-worker")])], tmp_path)
    assert code == 0, lines
    assert lines[1:] == [
        "found    RayJob rl/grpo-trainer head group, container ray-head",
        "found    RayJob rl/grpo-trainer worker group gpu-workers, container ray-worker",
    ]
    code, lines = _check(bundle, [_rayjob(p, [("gpu-workers", "ray-worker"), ("cpu", "ray-worker")])], tmp_path)
    assert code == 1
    assert lines[-1] == (
        "missing  RayJob rl/grpo-trainer worker group cpu: gets no env, and verl may train there (add it to "
        "workload.workerGroups)"
    )
    code, lines = _check(bundle, [_rayjob(p, [("gpu", "ray-worker")])], tmp_path)
    assert code == 1
    assert (
        "missing  RayJob rl/grpo-trainer worker group gpu-workers: no such group in it (its groups: worker group gpu)"
        in lines
    )


def test_a_jobset_is_checked_per_replicated_job(tmp_path: Path) -> None:
    source, p = _profile("gke-autopilot-jobset", tmp_path)
    ours = sample(p.workload)
    code, lines = _check(source, [ours], tmp_path)
    assert code == 0, lines
    assert lines[1:] == [
        "found    JobSet rl-train/grpo-jobset job driver, container trainer",
        "found    JobSet rl-train/grpo-jobset job rollout, container vllm",
    ]
    ours["spec"]["replicatedJobs"][1]["template"]["spec"]["template"] = pod("sglang")
    code, lines = _check(source, [ours], tmp_path)
    assert code == 1
    assert lines[2].startswith("missing  JobSet rl-train/grpo-jobset job rollout, container vllm: not in it")


@pytest.mark.slow
def test_helm_template_output_on_stdin_and_the_helm_values_route(tmp_path: Path) -> None:
    """A real chart's `helm template` output, piped in: the chart's Deployment and container are found when the profile
    names them, missing when not; and the bundle's Helm values list, under the chart's key, reaches the container."""
    source, p = _profile("gke-managed-otel", tmp_path, name="trainer-opentelemetry-collector")
    files = {r.path: r.text for r in build(p)}
    values = yaml.safe_load(files[f"workload/{workloads.HELM_VALUES_FILE}"])
    chart_values = {
        "mode": "deployment",
        "image": {"repository": "otel/opentelemetry-collector-k8s"},
        "extraEnvs": values[workloads.HELM_ENV_KEY],  # this chart's key for it
    }
    docs = helm_render(COLLECTOR, "trainer", chart_values, tmp_path / "helm", namespace="rl")
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    env = container(deployment["spec"]["template"], "opentelemetry-collector")["env"]
    assert all(e in env for e in values[workloads.HELM_ENV_KEY])
    text = yaml.safe_dump_all(docs)
    code, lines = _check(source, "-", tmp_path, stdin=text)
    assert code == 1
    assert "container trainer: not in it (containers: opentelemetry-collector)" in lines[-1]
    source, _ = _profile(
        "gke-managed-otel", tmp_path, name="trainer-opentelemetry-collector", container="opentelemetry-collector"
    )
    code, lines = _check(source, "-", tmp_path, stdin=text)
    assert code == 0, lines


@pytest.mark.slow
def test_a_kustomization_is_built_and_the_envfrom_route_reaches_the_container(tmp_path: Path) -> None:
    """The ConfigMap route, built by real kustomize: envFrom the bundle's ConfigMap plus the entries it lists give the
    container every variable the Kustomize patch gives, with the same values; check-workload reads the kustomization."""
    source, p = _profile("eks-jark", tmp_path)
    files = bundle_component({r.path: r.text for r in build(p)})
    header = "\n".join(line[2:] for line in files[workloads.ENV_CONFIGMAP_FILE].splitlines() if line.startswith("# "))
    fragment = yaml.safe_load(header[header.index("envFrom:") :])
    user = _rayjob(p, [("gpu-workers", "ray-worker")])
    head = container(user["spec"]["rayClusterSpec"]["headGroupSpec"]["template"], "ray-head")
    head["envFrom"] = fragment["envFrom"]
    head["env"] = head["env"] + fragment["env"]
    write_tree(
        tmp_path / "app",
        {
            "rayjob.yaml": yaml.safe_dump(user),
            "env.yaml": files[workloads.ENV_CONFIGMAP_FILE],
            "kustomization.yaml": yaml.safe_dump({"resources": ["rayjob.yaml", "env.yaml"]}),
        },
    )
    patched = next(d for d in kustomize(tmp_path / "k", files, sample(p.workload)) if d["kind"] == "RayJob")
    via_patch = container(patched["spec"]["rayClusterSpec"]["headGroupSpec"]["template"], "ray-head")["env"]
    code, lines = _check(source, tmp_path / "app", tmp_path)
    assert (code, lines[:2]) == (
        0,
        ["found    RayJob rl/grpo-trainer", "found    RayJob rl/grpo-trainer head group, container ray-head"],
    )
    kubectl = tool("kubectl", "builds the kustomization (kubectl kustomize)")
    proc = subprocess.run([kubectl, "kustomize", str(tmp_path / "app")], capture_output=True, text=True, check=True)
    by_kind = {d["kind"]: d for d in yaml.safe_load_all(proc.stdout)}
    got = container(by_kind["RayJob"]["spec"]["rayClusterSpec"]["headGroupSpec"]["template"], "ray-head")
    assert got["envFrom"] == [{"configMapRef": {"name": by_kind["ConfigMap"]["metadata"]["name"]}}]
    data = by_kind["ConfigMap"]["data"]
    assert {*data, *(e["name"] for e in got["env"])} == {e["name"] for e in via_patch}
    for entry in via_patch:
        if entry["name"] in data:
            assert data[entry["name"]] == entry["value"] or "$(" in entry["value"], entry
        else:
            assert entry in got["env"]


def test_bad_manifests_are_one_line_and_exit_2(tmp_path: Path) -> None:
    source, _ = _profile("gke-managed-otel", tmp_path)
    (tmp_path / "bad.yaml").write_text("kind: [\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["check-workload", str(source), "--workload", str(tmp_path / "bad.yaml")])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'bad.yaml'}:2: expected YAML manifests: did not find expected node content"
    ]
    result = CliRunner().invoke(app, ["check-workload", str(source), "--workload", str(tmp_path / "none.yaml")])
    assert result.exit_code == 2 and "no such file" in result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(app, ["check-workload", str(empty), "--workload", str(tmp_path / "bad.yaml")])
    assert result.exit_code == 2 and "no such file" in result.stderr


def test_a_folder_of_yaml_files_is_read_as_one_set_of_manifests(tmp_path: Path) -> None:
    source, p = _profile("gke-managed-otel", tmp_path)
    write_tree(
        tmp_path / "manifests",
        {
            "svc.yml": "kind: Service\nmetadata: {name: x}\n",
            "apps/trainer.yaml": yaml.safe_dump(sample(p.workload)),
            "README.md": "kind: [\n",  # not YAML by its name: never read
        },
    )
    code, lines = _check(source, tmp_path / "manifests", tmp_path)
    assert code == 0 and lines[0] == "found    Deployment rl/grpo-trainer", lines
    (tmp_path / "none").mkdir()
    result = CliRunner().invoke(app, ["check-workload", str(source), "--workload", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert result.stderr == f"error: {tmp_path / 'none'}: expected a folder of 1 to 2000 YAML files, got 0\n"


def test_a_kustomization_without_kubectl_says_it_is_needed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, _ = _profile("gke-managed-otel", tmp_path)
    write_tree(tmp_path / "app", {"kustomization.yaml": "resources: [deployment.yaml]\n"})
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    result = CliRunner().invoke(app, ["check-workload", str(source), "--workload", str(tmp_path / "app")])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: {tmp_path / 'app'} is a kustomization: `kubectl kustomize` builds it, and kubectl is not on PATH"
    )
