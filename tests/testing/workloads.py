"""Helpers of the workload Component tests: a user's workload of every kind, `kubectl kustomize`, what must survive."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from rlobs.profile.model import Workload
from rlobs.rl import workloads
from testing.helpers import tool, write_tree

KINDS = ("Deployment", "StatefulSet", "Job", "JobSet", "RayJob", "RayCluster", "RayService")
PROXY = {"name": "proxy", "image": "envoyproxy/envoy:v1.31.0"}
# A replicated job the profile does not name: the patch must leave it exactly as it is.
OTHER_JOB = "evaluator"


def workload(kind: str, container: str = "trainer", jobs: tuple[Any, ...] = ("driver", "rollout")) -> Workload:
    """A workload of `kind`; a JobSet's `jobs` are names or `{name, container}` entries, as in a profile."""
    data: dict[str, Any] = {
        "name": "grpo-trainer",
        "namespace": "rl",
        "kind": kind,
        "container": container,
        "run": {"system": "verl", "algorithm": "grpo", "environment": "gsm8k", "model": "qwen"},
    }
    if kind == "JobSet":
        data["replicatedJobs"] = jobs
    return Workload.model_validate(data)


def pod(container: str) -> dict[str, Any]:
    """A pod template as users write them: a sidecar first (so patching by index would hit the wrong container),
    then the RL container with env, ports and volumeMounts of its own, and a volume."""
    return {
        "metadata": {"labels": {"app": "grpo"}},
        "spec": {
            "containers": [
                dict(PROXY),
                {
                    "name": container,
                    "image": "rayproject/ray:2.49.0-gpu",
                    "env": [{"name": "EXISTING", "value": "kept"}],
                    "ports": [{"name": "gcs", "containerPort": 6379}],
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                },
            ],
            "volumes": [{"name": "data", "emptyDir": {}}],
        },
    }


def sample(w: Workload) -> dict[str, Any]:
    """The user's object of w.kind, named like the profile's workload, with parts the patch must not touch."""
    head = {"apiVersion": workloads.API_VERSIONS[w.kind], "kind": w.kind}
    meta = {"name": w.name, "namespace": w.namespace}
    template = pod(w.container)
    spec: dict[str, Any]
    if w.kind == "JobSet":
        # Each named job with its own RL container, and one job the profile does not name.
        jobs = [*w.jobs, (OTHER_JOB, w.container)]
        spec = {
            "replicatedJobs": [{"name": n, "replicas": 1, "template": {"spec": {"template": pod(c)}}} for n, c in jobs]
        }
        return {**head, "metadata": meta, "spec": spec}
    if w.kind in ("Deployment", "StatefulSet"):
        spec = {"selector": {"matchLabels": {"app": "grpo"}}, "template": template}
        if w.kind == "StatefulSet":
            spec["serviceName"] = w.name
    elif w.kind == "Job":
        template["spec"]["restartPolicy"] = "Never"
        spec = {"template": template}
    else:
        workers = [{"groupName": "gpu", "replicas": 2, "rayStartParams": {}, "template": pod("ray-worker")}]
        cluster = {"headGroupSpec": {"rayStartParams": {}, "template": template}, "workerGroupSpecs": workers}
        spec = {
            "RayJob": {"entrypoint": "python train.py", "rayClusterSpec": cluster},
            "RayCluster": cluster,
            "RayService": {"serveConfigV2": "applications: []", "rayClusterConfig": cluster},
        }[w.kind]
    return {**head, "metadata": meta, "spec": spec}


def targeted(obj: dict[str, Any], w: Workload) -> list[dict[str, Any]]:
    """The pod templates of `obj` the patch is meant for (a JobSet's named replicated jobs, in profile order)."""
    if w.kind == "JobSet":
        jobs = {j["name"]: j for j in obj["spec"]["replicatedJobs"]}
        return [jobs[n]["template"]["spec"]["template"] for n, _ in w.jobs]
    return pod_templates(obj)


def pod_templates(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod templates at the place rlobs patches in an object (or a patch) of any kind; a JobSet's in list order."""
    if obj["kind"] == "JobSet":
        return [j["template"]["spec"]["template"] for j in obj["spec"]["replicatedJobs"]]
    node = obj
    for key in workloads.POD_TEMPLATE[obj["kind"]]:
        node = node[key]
    return [node]


def untargeted(obj: dict[str, Any], w: Workload) -> Any:
    """The parts of `obj` that hold other pod templates, which the patch must leave as they are."""
    if w.kind == "JobSet":
        return [j for j in obj["spec"]["replicatedJobs"] if j["name"] not in dict(w.jobs)]
    if w.kind in workloads.RAY_KINDS:
        spec = obj["spec"]
        return spec.get("rayClusterSpec", spec.get("rayClusterConfig", spec))["workerGroupSpecs"]
    return None


def rl_containers(w: Workload) -> list[str]:
    """The RL container of each pod template `targeted` returns, in the same order."""
    return [c for _, c in w.jobs] if w.kind == "JobSet" else [w.container]


def container(template: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in template["spec"]["containers"] if c["name"] == name)
    return found


def kustomize_run(tmp: Path, component: Mapping[str, str], base: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """`kubectl kustomize` of a kustomization holding `base` that includes the Component made of `component` files."""
    kubectl = tool("kubectl", "builds the workload Component offline (kubectl kustomize)")
    tree = {f"component/{p}": t for p, t in component.items()}
    tree["base/workload.yaml"] = yaml.safe_dump(base)
    tree["base/kustomization.yaml"] = yaml.safe_dump(
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": ["workload.yaml"],
            "components": ["../component"],
        }
    )
    write_tree(tmp, tree)
    return subprocess.run([kubectl, "kustomize", str(tmp / "base")], capture_output=True, text=True, check=False)


def kustomize(tmp: Path, component: Mapping[str, str], base: dict[str, Any]) -> list[dict[str, Any]]:
    proc = kustomize_run(tmp, component, base)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def bundle_component(files: Mapping[str, str]) -> dict[str, str]:
    """The workload/ folder of a rendered bundle (path -> text), relative to that folder."""
    return {p.removeprefix("workload/"): t for p, t in files.items() if p.startswith("workload/")}


def assert_user_parts_kept(built: dict[str, Any], w: Workload) -> None:
    """What the user wrote survives the patch: the other containers, the RL container's own env, ports and mounts,
    the volumes and labels of each patched pod template, and every pod template the patch does not target."""
    before = sample(w)
    assert untargeted(built, w) == untargeted(before, w)
    for old, new, name in zip(targeted(before, w), targeted(built, w), rl_containers(w), strict=True):
        assert container(new, "proxy") == PROXY
        rl, old_rl = container(new, name), container(old, name)
        assert rl["image"] == old_rl["image"]
        for key in ("env", "ports", "volumeMounts"):
            assert all(item in rl[key] for item in old_rl[key]), f"{key} of {name} lost an item"
        assert all(v in new["spec"]["volumes"] for v in old["spec"]["volumes"])
        assert new["metadata"]["labels"].items() >= old["metadata"]["labels"].items()


def without_worker_groups(text: str) -> str:
    """A profile's text with no workload.workerGroups (the eks-jark blueprint names one), to switch its kind."""
    return re.sub(r"^  workerGroups:.*\n(    - .*\n)*", "", text, flags=re.MULTILINE)
