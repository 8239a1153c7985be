"""Expand every ApplicationSet for every cluster it selects, offline, the way the controller does."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlobs.bundle.appsets import INDEXED, SecretMetadata, strings
from rlobs.bundle.filters import to_yaml
from rlobs.errors import RlobsError
from rlobs.profile.yamlsource import load_yaml


@dataclass(frozen=True, slots=True)
class Pair:
    appset: str  # its file in the bundle
    cluster: str
    template: dict[str, Any]
    params: dict[str, Any]


def params(meta: SecretMetadata) -> dict[str, Any]:
    """The cluster generator's parameters for a cluster Secret holding `meta` (the server is the Secret's own)."""
    return {
        "name": meta.name,
        "nameNormalized": meta.name,  # fleet cluster names are already DNS labels
        "server": f"https://{meta.name}.server.invalid",  # the EKS endpoint only the Secret knows; no template reads it
        "project": "",
        "metadata": {"labels": dict(meta.labels), "annotations": dict(meta.annotations)},
    }


def _rebuild(node: Any, rendered: Iterator[str]) -> Any:
    """`node` with each of its strings (keys and values, in appsets.strings' order) the next rendered text."""
    if isinstance(node, str):
        return next(rendered)
    if isinstance(node, dict):
        return {_rebuild(str(k), rendered): _rebuild(v, rendered) for k, v in node.items()}
    if isinstance(node, list):
        return [_rebuild(v, rendered) for v in node]
    return node


def expand(pairs: list[Pair]) -> list[dict[str, Any]]:
    """The Application each (ApplicationSet, cluster) pair makes. The controller runs every string key and value as
    its own Go text/template with Sprig (Argo CD docs, ApplicationSet "Go Template": "Go templates are applied on a
    per-field basis"); helm's engine is the same, so one `helm template` of a throwaway chart renders every field."""
    helm = shutil.which("helm") or shutil.which("helm", path=str(Path(sys.executable).parent))
    if not helm:
        raise RlobsError("the preview runs Go templates with helm's engine: expected helm on PATH, got none")
    sources = [list(strings(pair.template)) for pair in pairs]
    values = {f"c{n}": _as_the_controller_reads(pair.params, sources[n]) for n, pair in enumerate(pairs)}
    # Each field is its own template, executed with its cluster's parameters as `.`; base64 keeps any rendered text
    # valid YAML for helm, which parses what it renders.
    flat = [(n, text) for n, texts in enumerate(sources) for text in texts]
    defines = "\n".join(f'{{{{- define "f{i}" }}}}{text}{{{{ end }}}}' for i, (_, text) in enumerate(flat))
    uses = "\n".join(
        f'f{i}: {{{{ include "f{i}" (index .Values "c{n}") | b64enc | quote }}}}' for i, (n, _) in enumerate(flat)
    )
    output = _helm(helm, values, defines, uses)
    rendered = iter([base64.b64decode(output[f"f{i}"]).decode("utf-8") for i in range(len(flat))])
    fields = [[next(rendered) for _ in texts] for texts in sources]
    missing = sorted(
        {pair.cluster for pair, texts in zip(pairs, fields, strict=True) if "<no value>" in "".join(texts)}
    )
    if missing:
        # helm runs templates with missingkey=zero, which prints <no value> for a field read of a missing key; the
        # controller's missingkey=error fails the whole ApplicationSet instead.
        raise RlobsError(f"a template reads a key the cluster Secret lacks (clusters {', '.join(missing)})")
    return [
        {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", **_rebuild(pair.template, iter(texts))}
        for pair, texts in zip(pairs, fields, strict=True)
    ]


def _as_the_controller_reads(params: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    """`params` with "" for each label or annotation a template reads with `index` that the Secret lacks: the
    controller's maps are map[string]string, whose index is "" for a missing key; helm's values would give nil,
    printed <no value>. A missing key read any other way stays missing (<no value> here, missingkey=error there)."""
    meta = {kind: dict(values) for kind, values in params["metadata"].items()}
    for kind, key in {found for text in texts for found in INDEXED.findall(text)}:
        meta[kind].setdefault(key, "")
    return {**params, "metadata": meta}


def _helm(helm: str, values: dict[str, Any], defines: str, uses: str) -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix="rlobs-preview-") as tmp:
        chart = Path(tmp) / "chart"
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: rlobs-preview\nversion: 0.0.0\n", encoding="utf-8")
        (chart / "values.yaml").write_text(to_yaml(values), encoding="utf-8")
        (chart / "templates" / "_fields.tpl").write_text(defines + "\n", encoding="utf-8")
        (chart / "templates" / "fields.yaml").write_text(uses + "\n", encoding="utf-8")
        env = {"HELM_CACHE_HOME": f"{tmp}/c", "HELM_CONFIG_HOME": f"{tmp}/g", "HELM_DATA_HOME": f"{tmp}/d"}
        proc = subprocess.run(
            [helm, "template", "preview", str(chart), "--show-only", "templates/fields.yaml"],
            capture_output=True,
            text=True,
            env={**env, "PATH": "/usr/bin:/bin"},
            check=False,
        )
    if proc.returncode != 0:
        raise RlobsError(f"a template failed to render, as it would in the controller: {proc.stderr.strip()}")
    data: dict[str, str] = load_yaml(proc.stdout)
    return data
