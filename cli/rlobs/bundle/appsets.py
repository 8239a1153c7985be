"""Argo CD ApplicationSets and the cluster Secrets they select, target-neutral, and the check of the keys they read."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ENABLED = "rlobs.io/enabled"
TARGET = "rlobs.io/target"
CLUSTER = "rlobs.io/cluster"
ENVIRONMENT = "rlobs.io/environment"
REVISION = "rlobs.io/revision"
REGION = "rlobs.io/region"

# Label values: at most 63 characters, alphanumerics with '-', '_' or '.' inside, or empty; never '/' or ':', so an
# ARN or a URL can never be one (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/).
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
# A pinned revision: a branch, tag or commit, never HEAD (which follows the default branch at sync time).
_REVISION = re.compile(r"(?!HEAD$)[A-Za-z0-9][A-Za-z0-9._/-]{0,199}")


# What a valid value of a key is: (test, what it expects).
Rule = tuple[Callable[[str], bool], str]
# The rules of the keys every contract has; a target adds its own (FleetPart.rules). Keys with no rule need a
# non-empty value.
RULES: dict[str, Rule] = {
    ENABLED: (lambda v: v == "true", '"true"'),
    CLUSTER: (lambda v: bool(_DNS_LABEL.fullmatch(v)) and v != "in-cluster", "a cluster name (DNS label)"),
    ENVIRONMENT: (lambda v: bool(_DNS_LABEL.fullmatch(v)), "an environment name (DNS label)"),
    REVISION: (lambda v: bool(_REVISION.fullmatch(v)), "a pinned branch, tag or commit (not HEAD)"),
}


@dataclass(frozen=True, slots=True)
class SecretMetadata:
    """What one cluster Secret carries for rlobs: `name` is the Secret's stringData.name (the Argo CD cluster name)."""

    name: str
    labels: dict[str, str]
    annotations: dict[str, str]


# The keys a template reads: `index .metadata.annotations "k"`, `index .metadata.labels "k"` and the dotted form
# `.metadata.labels.k` (only keys without '/', '.' or '-' can be written that way).
INDEXED = re.compile(r'index\s+\.metadata\.(labels|annotations)\s+"([^"]+)"')
_DOTTED = re.compile(r"\.metadata\.(labels|annotations)\.([A-Za-z0-9_]+)")


@dataclass(frozen=True, slots=True)
class Reference:
    kind: str  # labels or annotations
    key: str
    template: str  # the ApplicationSet (file) that reads it


def references(name: str, appset: dict[str, Any]) -> list[Reference]:
    """Every label and annotation an ApplicationSet reads: in its template's strings and its cluster selectors."""
    found: list[Reference] = []
    for text in strings(appset["spec"]["template"]):
        found += [Reference(kind, key, name) for form in (INDEXED, _DOTTED) for kind, key in form.findall(text)]
    for generator in appset["spec"]["generators"]:
        selector = generator.get("clusters", {}).get("selector", {})
        found += [Reference("labels", key, name) for key in selector.get("matchLabels", {})]
        found += [
            Reference("labels", e["key"], name)
            for e in selector.get("matchExpressions", [])
            if e["operator"] in ("In", "Exists")
        ]
    return sorted(set(found), key=lambda r: (r.template, r.kind, r.key))


def strings(node: Any) -> Iterable[str]:
    """Every string key and value in a JSON-like tree."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)


def referential_problems(
    appsets: dict[str, dict[str, Any]],
    selected: dict[str, list[str]],
    contracts: dict[str, SecretMetadata],
    rules: Mapping[str, Rule],
) -> list[str]:
    """One line per (cluster, key, template) where a template reads a label or annotation the cluster's Secret
    lacks or holds an invalid value for. With missingkey=error one such cluster makes the controller create no
    Application at all (argo-cd#16832); and `index` on a missing key yields "" even with missingkey=error."""
    problems = []
    for name, appset in sorted(appsets.items()):
        refs = references(name, appset)
        for cluster in selected[name]:
            meta = contracts[cluster]
            for ref in refs:
                values = meta.labels if ref.kind == "labels" else meta.annotations
                problem = _check(ref, values.get(ref.key), rules)
                if problem:
                    problems.append(f"cluster {cluster}: {ref.kind[:-1]} {ref.key} {problem} (read by {ref.template})")
    return problems


def _check(ref: Reference, value: str | None, rules: Mapping[str, Rule]) -> str | None:
    if value is None:
        return "is missing"
    if ref.kind == "labels" and not _LABEL_VALUE.fullmatch(value):
        return f"is not a valid label value (63 characters, no '/' or ':'): {value!r}"
    test, expected = rules.get(ref.key, (bool, "a non-empty value"))
    if not test(value):
        return f"expected {expected}, got {value!r}"
    return None


# The label Argo CD reads cluster Secrets by (https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/#clusters).
SECRET_TYPE = "argocd.argoproj.io/secret-type"


def live_metadata(docs: Iterable[Any]) -> dict[str, SecretMetadata]:
    """The cluster Secrets' metadata in `docs` (Secrets or Lists of them), by fleet cluster name: the
    rlobs.io/cluster label, else the Secret's own name. Only metadata is read, never `data` (the credentials)."""
    found: dict[str, SecretMetadata] = {}
    for doc in docs:
        items = doc.get("items") if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") else [doc]
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or item.get("kind") != "Secret":
                continue
            meta = item.get("metadata")
            meta = meta if isinstance(meta, dict) else {}
            labels, annotations = _texts(meta.get("labels")), _texts(meta.get("annotations"))
            if labels.get(SECRET_TYPE) != "cluster":
                continue
            name = labels.get(CLUSTER) or str(meta.get("name", ""))
            found[name] = SecretMetadata(name, labels, annotations)
    return found


def _texts(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Kubernetes label selector semantics (matchLabels and the four matchExpressions operators)."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for e in selector.get("matchExpressions", []):
        key, op, values = e["key"], e["operator"], e.get("values", [])
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not ok:
            return False
    return True


def live_problems(
    appsets: dict[str, dict[str, Any]],
    selected: dict[str, list[str]],
    live: dict[str, SecretMetadata],
    rules: Mapping[str, Rule],
) -> list[str]:
    """The live cluster Secrets against the fleet: each ApplicationSet must select exactly the clusters the fleet
    gives it, and every key its template reads must be there with a valid value."""
    problems = []
    live_selected: dict[str, list[str]] = {}
    for name, appset in sorted(appsets.items()):
        (generator,) = appset["spec"]["generators"]
        selector = generator["clusters"]["selector"]
        chosen = sorted(c for c, meta in live.items() if matches(selector, meta.labels))
        live_selected[name] = chosen
        problems += [
            f"cluster {c}: no cluster Secret of it is selected by {name} (its labels: "
            f"{', '.join(f'{k}={v}' for k, v in sorted(selector['matchLabels'].items()))})"
            for c in selected[name]
            if c not in chosen
        ]
        problems += [
            f"cluster {c}: its cluster Secret is selected by {name}, but the fleet does not give it that component"
            for c in chosen
            if c not in selected[name]
        ]
        if "in-cluster" in chosen:  # Argo CD's own cluster; no fleet cluster is named so (fleetspec.ClusterName)
            problems.append(f"cluster in-cluster: the hub's own cluster Secret is selected by {name}")
    return problems + referential_problems(appsets, live_selected, live, rules)
