"""`rlobs check-workload`: is each target of the bundle's workload patch in the user's manifests (untrusted input)?"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rlobs.errors import RlobsError
from rlobs.files import MIB, read_capped
from rlobs.rl import workloads

MAX_MANIFESTS = 32 * MIB  # all the manifests together: a big Helm chart renders a few MiB
MAX_FILES = 2000
KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
KUSTOMIZE_SECONDS = 300
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


FOUND, MISSING = "found", "missing"


@dataclass(frozen=True, slots=True)
class Finding:
    status: str  # FOUND or MISSING
    line: str  # what was looked for, and what is wrong when it is missing


def targets(source: Path) -> dict[str, Any]:
    """The bundle's workload patch, read from a bundle folder or built from a profile as its bundle has it."""
    if source.is_dir():
        patch_file = source / "workload" / workloads.ENV_PATCH_FILE
        doc = _yaml(_read(patch_file), patch_file)
        if len(doc) != 1 or not isinstance(doc[0], dict) or not workloads.pod_templates(doc[0]):
            raise RlobsError(f"{source}: expected a bundle folder with workload/{workloads.ENV_PATCH_FILE}")
        return doc[0]
    from rlobs.rl.adapters import adapter_env
    from rlobs.rl.catalog import load_catalog
    from rlobs.targets import load_profile

    profile = load_profile(source)
    env = adapter_env(profile, load_catalog())
    return workloads.patch(
        profile.workload, lambda container: {"spec": {"containers": [{"name": container, "env": env}]}}
    )


def manifests(path: str) -> list[dict[str, Any]]:
    """The objects in a YAML file (`-`: stdin), a folder of YAML files or a kustomization; a `kind: List`'s items."""
    if path == "-":
        data = sys.stdin.buffer.read(MAX_MANIFESTS + 1)
        if len(data) > MAX_MANIFESTS:
            raise RlobsError(f"stdin: over the {MAX_MANIFESTS // MIB} MiB the manifests may hold")
        docs = _yaml(data, Path("<stdin>"))
    else:
        where = Path(path)
        folder = where if where.is_dir() else where.parent if where.name in KUSTOMIZATIONS else None
        if folder is not None and any((folder / k).is_file() for k in KUSTOMIZATIONS):
            docs = _yaml(_kustomize(folder), folder)
        elif folder is not None:
            files = sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
            if not files or len(files) > MAX_FILES:
                raise RlobsError(f"{folder}: expected a folder of 1 to {MAX_FILES} YAML files, got {len(files)}")
            left, docs = MAX_MANIFESTS, []
            for file in files:  # the cap is for all of them together
                data = _read(file, left)
                left -= len(data)
                docs += _yaml(data, file)
        else:
            docs = _yaml(_read(where), where)
    objects = [d for d in docs if isinstance(d, dict)]
    objects += [i for d in objects if d.get("kind") == "List" for i in d.get("items") or [] if isinstance(i, dict)]
    return objects


def _read(path: Path, cap: int = MAX_MANIFESTS) -> bytes:
    try:
        return read_capped(path, cap)
    except FileNotFoundError:
        raise RlobsError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise RlobsError(f"{path}: cannot read it: {exc.strerror if isinstance(exc, OSError) else exc}") from None


def _yaml(data: bytes, where: Path) -> list[Any]:
    try:
        return list(yaml.load_all(data.decode("utf-8"), Loader=_Loader))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f":{mark.line + 1}" if mark is not None else ""
        raise RlobsError(f"{where}{at}: expected YAML manifests: {getattr(exc, 'problem', None) or exc}") from None


def _kustomize(folder: Path) -> bytes:
    # Untrusted input: kustomize runs no plugin or Helm chart unless asked (--enable-alpha-plugins, --enable-helm),
    # and fetches only the remote bases the kustomization names.
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise RlobsError(f"{folder} is a kustomization: `kubectl kustomize` builds it, and kubectl is not on PATH")
    try:
        proc = subprocess.run(
            [kubectl, "kustomize", str(folder)], capture_output=True, timeout=KUSTOMIZE_SECONDS, check=False
        )
    except subprocess.TimeoutExpired:
        raise RlobsError(f"{folder}: `kubectl kustomize` took over {KUSTOMIZE_SECONDS} s") from None
    if proc.returncode != 0:
        last = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
        raise RlobsError(f"{folder}: `kubectl kustomize` failed: {last[:300]}")
    if len(proc.stdout) > MAX_MANIFESTS:
        raise RlobsError(f"{folder}: `kubectl kustomize` printed over the {MAX_MANIFESTS // MIB} MiB allowed")
    return proc.stdout


def _names(template: Any) -> list[str]:
    spec = template.get("spec") if isinstance(template, dict) else None
    containers = spec.get("containers") if isinstance(spec, dict) else None
    return [c["name"] for c in containers or [] if isinstance(c, dict) and isinstance(c.get("name"), str)]


def check(patch: dict[str, Any], objects: list[dict[str, Any]]) -> list[Finding]:
    """One finding per patch target: the object (kind, name, namespace), then each pod group's RL container."""
    kind, meta = patch["kind"], patch["metadata"]
    name, namespace = meta["name"], meta["namespace"]
    what = f"{kind} {namespace}/{name}"
    same = [o for o in objects if o.get("kind") == kind and _meta(o, "name") == name]
    if not same:
        others = sorted({str(_meta(o, "name")) for o in objects if o.get("kind") == kind})
        got = f"{kind}s found: {', '.join(others)}" if others else f"no {kind} in them"
        return [Finding(MISSING, f"{what}: no {kind} named {name} in the manifests ({got}); the patch would not apply")]
    here = next((o for o in same if _meta(o, "namespace") in (namespace, None)), None)
    if here is None:
        got = ", ".join(sorted(str(_meta(o, "namespace")) for o in same))
        return [
            Finding(MISSING, f"{what}: found in namespace {got}, but the bundle is wired for namespace {namespace}")
        ]
    unset = " (no namespace in the manifests: deploy it into that one)" if _meta(here, "namespace") is None else ""
    findings = [Finding(FOUND, f"{what}{unset}")]
    ours, theirs = workloads.pod_templates(patch), workloads.pod_templates(here)
    for group, template in ours.items():
        label = f"{what} {group or ('head group' if kind in workloads.RAY_KINDS else 'pod template')}"
        for container in _names(template):
            if group not in theirs:
                groups = ", ".join(g for g in theirs if g) or "none"
                findings.append(Finding(MISSING, f"{label}: no such group in it (its groups: {groups})"))
            elif container in (found := _names(theirs[group])):
                findings.append(Finding(FOUND, f"{label}, container {container}"))
            else:
                findings.append(
                    Finding(
                        MISSING,
                        f"{label}, container {container}: not in it (containers: {', '.join(found) or 'none'}); the "
                        "patch would add a container with no image, which the API server rejects",
                    )
                )
    if _adapter(ours) == "verl":
        # verl's TaskRunner actor trains and writes the metrics file on whichever pod Ray places it.
        unpatched = [group for group in theirs if group not in ours]  # in the manifest's order, not a set's
        findings += [
            Finding(MISSING, f"{what} {group}: gets no env, and verl may train there (add it to workload.workerGroups)")
            for group in unpatched
        ]
    return findings


def _meta(obj: dict[str, Any], key: str) -> Any:
    meta = obj.get("metadata")
    return meta.get(key) if isinstance(meta, dict) else None


def _adapter(templates: dict[str, Any]) -> str | None:
    for template in templates.values():
        for c in (template.get("spec") or {}).get("containers") or []:
            for e in c.get("env") or []:
                if e.get("name") == "RLOBS_ADAPTER":
                    return str(e.get("value"))
    return None
