"""Helpers of the EKS target's tests: the EKS profiles, their rendered bundles, parsed YAML objects, CRD schemas."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

from testing.bundles import build
from testing.crdschema import crd_schema
from testing.helpers import all_profiles, profile, shared

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster

EKS_PROFILES = sorted(name for name, text in all_profiles().items() if "\ntarget: eks" in text)


@functools.cache
def bundle(name: str) -> dict[str, str]:
    """path -> text of profile `name`'s rendered bundle (rendered once per test session)."""
    return {r.path: r.text for r in build(profile(name))}


def objects(name: str, prefix: str = "") -> dict[str, Any]:
    """path -> the single YAML document of every .yaml file under `prefix` (a fresh copy: tests may mutate it)."""
    return copy.deepcopy({p: o for p, o in _parsed(name).items() if p.startswith(prefix)})


@functools.cache
def _parsed(name: str) -> dict[str, Any]:
    return {p: yaml.load(t, Loader=_Loader) for p, t in bundle(name).items() if p.endswith(".yaml")}


def of_kind(name: str, kind: str) -> dict[str, Any]:
    return {p: o for p, o in objects(name).items() if isinstance(o, dict) and o.get("kind") == kind}


@functools.cache
def schema(rel: str) -> dict[str, Any]:
    """A CRD under ../shared/upstream as a strict JSON Schema."""
    return crd_schema(shared(f"upstream/{rel}"))


def write_bundle(name: str, root: Path) -> Path:
    out = root / name
    for path, text in bundle(name).items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text(text, encoding="utf-8")
    return out


AMP_URL = "https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-1/api/v1/remote_write"


def remote_writing(text: str, aggregated: bool = True) -> str:
    """An EKS profile's text that remote-writes to an AMP workspace (per-run records only, where aggregated)."""
    values = f"""  helmValues:
    kube-prometheus-stack:
      prometheus:
        prometheusSpec:
          remoteWrite: [{{url: "{AMP_URL}", writeRelabelConfigs: [{{regex: "tmp_.*", action: labeldrop}}]}}]
"""
    if aggregated:
        values = "  prometheus: {remoteWrite: aggregated}\n" + values
    return text.replace("  metricsPipeline:", values + "  metricsPipeline:", 1)


@functools.cache
def aggregated_bundle(name: str) -> dict[str, str]:
    """path -> text of profile `name`'s bundle with eks.prometheus.remoteWrite: aggregated to an AMP workspace."""
    from rlobs.targets import parse_profile

    return {r.path: r.text for r in build(parse_profile(remote_writing(all_profiles()[name])))}
