"""The Kubernetes workload kinds rlobs patches: their apiVersions, pod templates, patches and merge-key schema."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from functools import reduce
from typing import Any

import yaml

from rlobs.bundle.spec import DataFile
from rlobs.profile.model import Workload
from rlobs.rl.labels import bundle_metadata

API_VERSIONS = {
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "Job": "batch/v1",
    "JobSet": "jobset.x-k8s.io/v1alpha2",
    "RayJob": "ray.io/v1",
    "RayCluster": "ray.io/v1",
    "RayService": "ray.io/v1",
}
RAY_KINDS = frozenset({"RayJob", "RayCluster", "RayService"})
# Kinds defined by CRDs: Kustomize knows no merge keys for them and would replace, not merge, the lists a
# strategic-merge patch touches (kustomize examples/customOpenAPIschema.md), so the Component ships openapi().
CRD_KINDS = frozenset({"JobSet", *RAY_KINDS})

# Where the pod template that runs the RL loop sits, from the object's root. For Ray it is the head group: the
# driver of a RayJob and a RayService's Serve controller run there
# (https://docs.ray.io/en/latest/cluster/kubernetes/user-guides/). Ray actors (verl's TaskRunner, which trains and
# writes the metrics file) run on any pod, so the worker groups the profile names (workload.workerGroups) get the
# patch too: KubeRay keeps them in workerGroupSpecs, a list keyed by groupName, each with its own pod template.
# KubeRay ray.io/v1 CRDs: rayClusterSpec (RayJob), rayClusterConfig (RayService).
POD_TEMPLATE: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "RayJob": ("spec", "rayClusterSpec", "headGroupSpec", "template"),
    "RayCluster": ("spec", "headGroupSpec", "template"),
    "RayService": ("spec", "rayClusterConfig", "headGroupSpec", "template"),
}
# A JobSet keeps a list of replicated jobs (spec.replicatedJobs, each with a unique name); each entry's template is a
# batch/v1 JobTemplateSpec, whose spec.template is the pod template (jobset api/jobset/v1alpha2/jobset_types.go).
REPLICATED_JOBS = ("spec", "replicatedJobs")
JOB_POD_TEMPLATE = ("template", "spec", "template")
# The lists of pod templates a kind keeps instead of (JobSet) or beside (Ray: the worker groups) the one at
# POD_TEMPLATE: (where the list is, the key its items merge by, where an item keeps its template, what a group is).
GROUPS: dict[str, tuple[tuple[str, ...], str, tuple[str, ...], str]] = {
    "JobSet": (REPLICATED_JOBS, "name", JOB_POD_TEMPLATE, "job"),
    **{k: ((*POD_TEMPLATE[k][:-2], "workerGroupSpecs"), "groupName", ("template",), "worker group") for k in RAY_KINDS},
}

# One name for the schema in every bundle; the patch it applies to is the target's own.
OPENAPI_FILE = "openapi.json"
ENV_PATCH_FILE = "otel-env-patch.yaml"
# The env for deployments Kustomize does not build: a ConfigMap for envFrom, and a Helm values list.
ENV_CONFIGMAP_FILE = "env-configmap.yaml"
HELM_VALUES_FILE = "helm-env-values.yaml"
HELM_ENV_KEY = "extraEnv"
_REF = re.compile(r"\$\((\w+)\)")  # Kubernetes expands $(VAR) in env values from the vars defined before it
# The built-in definition the schema points the pod templates at: it carries the merge keys of containers, env,
# ports, volumeMounts and volumes (all by name). `kubectl kustomize` resolves it from its built-in schema even when
# a custom one is set (kustomize v5.5.0 and v5.8.1; tests/test_workloads.py checks the kubectl it finds).
POD_TEMPLATE_SPEC = "io.k8s.api.core.v1.PodTemplateSpec"


def _nest(path: tuple[str, ...], leaf: dict[str, Any]) -> dict[str, Any]:
    for key in reversed(path):
        leaf = {key: leaf}
    return leaf


# A pod-template fragment (metadata and/or spec) for the RL container of the given name.
Fragment = Callable[[str], dict[str, Any]]


def patch(workload: Workload, fragment: Fragment) -> dict[str, Any]:
    """A strategic-merge patch of `fragment(container)` into each RL pod template, with that template's container."""
    kind = workload.kind
    out: dict[str, Any] = {
        "apiVersion": API_VERSIONS[kind],
        "kind": kind,
        "metadata": {"name": workload.name, "namespace": workload.namespace},
    }
    if kind in POD_TEMPLATE:
        out |= _nest(POD_TEMPLATE[kind], fragment(workload.container))
    groups = workload.jobs if kind == "JobSet" else workload.workers
    if groups:
        path, key, template, _ = GROUPS[kind]
        # One container name for every job would add an image-less container to the jobs that name theirs differently.
        items = [{key: name, **_nest(template, fragment(container))} for name, container in groups]
        # A JobSet's list has no pod template above it to make its parents.
        reduce(lambda node, k: node.setdefault(k, {}), path[:-1], out)[path[-1]] = items
    return out


def _at(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def pod_templates(obj: Any) -> dict[str, Any]:
    """The templates the patch puts the env in, by group ("", "job NAME", "worker group NAME"); `obj` is untrusted."""
    kind = _at(obj, ("kind",))
    out = {"": _at(obj, POD_TEMPLATE[kind])} if kind in POD_TEMPLATE else {}
    if kind in GROUPS:
        path, key, template, label = GROUPS[kind]
        items = _at(obj, path)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get(key), str):
                out[f"{label} {item[key]}"] = _at(item, template)
    return out


def _objects(path: tuple[str, ...], leaf: dict[str, Any]) -> dict[str, Any]:
    for key in reversed(path):
        leaf = {"type": "object", "properties": {key: leaf}}
    return leaf


def openapi(kind: str) -> dict[str, Any] | None:
    if kind not in CRD_KINDS:
        return None
    template = {"$ref": f"#/definitions/{POD_TEMPLATE_SPEC}"}
    path, key, item, _ = GROUPS[kind]
    root = _objects(POD_TEMPLATE[kind], template) if kind in POD_TEMPLATE else {"properties": {}}
    parent = reduce(
        lambda node, k: node["properties"].setdefault(k, {"type": "object", "properties": {}}), path[:-1], root
    )
    parent["properties"][path[-1]] = {
        "type": "array",
        "x-kubernetes-patch-merge-key": key,
        "x-kubernetes-patch-strategy": "merge",
        "items": _objects(item, template),
    }
    group, _, version = API_VERSIONS[kind].partition("/")
    definition = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            **root["properties"],
        },
        "x-kubernetes-group-version-kind": [{"group": group, "kind": kind, "version": version}],
    }
    # Definition names follow Kubernetes' reverse-domain convention (jobset.x-k8s.io -> io.x-k8s.jobset).
    reverse_domain = ".".join(reversed(group.split(".")))
    return {
        "swagger": "2.0",
        "info": {"title": f"rlobs merge keys for {kind}", "version": version},
        "paths": {},
        "definitions": {f"{reverse_domain}.{version}.{kind}": definition},
    }


def component(workload: Workload, patches: list[str], resources: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "kustomize.config.k8s.io/v1alpha1", "kind": "Component"}
    if workload.kind in CRD_KINDS:
        # Only CRDs need it; Kustomize keeps its built-in definitions beside a custom schema, so built-in kinds in
        # the same kustomization still merge (tests/test_workloads.py checks both).
        out["openapi"] = {"path": OPENAPI_FILE}
    if resources:
        out["resources"] = resources
    target = {"kind": workload.kind, "name": workload.name}
    out["patches"] = [{"path": path, "target": target} for path in patches]
    return out


def env_config(env: list[dict[str, Any]]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The env split into ConfigMap literals ($(VAR)s resolved: envFrom values are not expanded) and the rest."""
    data: dict[str, str] = {}
    kept: list[dict[str, Any]] = []
    for entry in env:
        value = entry.get("value")
        if isinstance(value, str) and all(ref in data for ref in _REF.findall(value)):
            data[entry["name"]] = _REF.sub(lambda m: data[m[1]], value)
        else:
            kept.append(entry)
    return data, kept


def configmap(metadata: dict[str, Any], data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


def configmap_name(workload: Workload) -> str:
    return f"{workload.name}-rlobs-env"[:253]


def beside_patch(
    workload: Workload, env: list[dict[str, Any]], bundle: str, folder: str, schema_what: str
) -> list[DataFile]:
    schema = openapi(workload.kind)
    files = [] if schema is None else [DataFile(f"{folder}/{OPENAPI_FILE}", "json", schema, schema_what)]
    data, kept = env_config(env)
    name = configmap_name(workload)
    fragment = yaml.safe_dump({"envFrom": [{"configMapRef": {"name": name}}], "env": kept}, sort_keys=False)
    return [
        *files,
        DataFile(
            f"{folder}/{ENV_CONFIGMAP_FILE}",
            "yaml",
            configmap(bundle_metadata(name, workload.namespace, bundle), data),
            "The RL env as a ConfigMap for `envFrom`, for workloads Kustomize does not build.",
            header=textwrap.fill(
                "Without Kustomize: apply this ConfigMap, and give each RL container the Kustomize patch names "
                f"({ENV_PATCH_FILE}) this envFrom and the env a ConfigMap cannot hold (the downward API, Secrets):",
                116,
            )
            + "\n\n"
            + fragment,
        ),
        DataFile(
            f"{folder}/{HELM_VALUES_FILE}",
            "yaml",
            {HELM_ENV_KEY: env},
            "The RL env as a Helm values list, for charts that take the container's env.",
            header=textwrap.fill(
                f"For a Helm chart: put this list under the chart's key for the RL container's env ({HELM_ENV_KEY} "
                "in many charts, extraEnvs in opentelemetry-collector, head.containerEnv and each worker group's "
                "containerEnv in KubeRay's ray-cluster chart) and pass the file after your own values (-f). Helm "
                "replaces a list set twice: if your values set that key, add these entries to your list. "
                f"{ENV_PATCH_FILE} shows what else the Kustomize patch sets where the target needs it (pod labels, "
                "ports, the service account).",
                116,
            ),
        ),
    ]


def routes_readme(workload: Workload, env: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "configmap": configmap_name(workload),
        "configmap_file": ENV_CONFIGMAP_FILE,
        "kept": [e["name"] for e in env_config(env)[1]],
        "helm_file": HELM_VALUES_FILE,
        "helm_key": HELM_ENV_KEY,
    }
