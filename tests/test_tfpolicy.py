"""The alert policies as Terraform: the same content as the policy JSON, field by field, in arguments the
google-beta provider has, and strings Terraform reads back unchanged."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from rlobs.targets.gke import monitoring, tfpolicy
from testing.bundles import build, facts
from testing.gke import terraform_profiles
from testing.gketf import SCHEMA
from testing.helpers import gke_profile

TF = {n: p for n, p in terraform_profiles().items() if p.alerts.enabled}

MAPS = {"user_labels", "conditions.condition_prometheus_query_language.labels"}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def _unliteral(text: str) -> str:
    """What Terraform reads from a string of its JSON syntax: `$${` and `%%{` are escaped `${` and `%{`."""
    return text.replace("$${", "${").replace("%%{", "%{")


def _back(value: Any, path: str = "") -> Any:
    """What the API gets from these arguments: camelCase fields, Terraform's template escapes undone."""
    if isinstance(value, dict):
        if path in MAPS:
            return {k: _back(v, path + ".") for k, v in value.items()}
        return {_camel(k): _back(v, f"{path}.{k}".lstrip(".")) for k, v in value.items()}
    if isinstance(value, list):
        return [_back(v, path) for v in value]
    return _unliteral(value) if isinstance(value, str) else value


def _walk(a: Any, b: Any, path: str = "") -> list[str]:
    """Every path where a and b differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _walk(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _walk(x, y, f"{path}[{i}]")]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} != {b!r}"]


def _rendered(name: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    files = {r.path: r.text for r in build(TF[name])}
    tf = json.loads(files[tfpolicy.FILE])["resource"][tfpolicy.RESOURCE]
    policies = {
        p.removeprefix("monitoring/alert-policies/").removesuffix(".json"): json.loads(t)
        for p, t in files.items()
        if p.startswith("monitoring/alert-policies/")
    }
    return tf, policies


@pytest.mark.parametrize("name", sorted(TF))
def test_terraform_policies_agree_with_the_json_field_by_field(name: str) -> None:
    tf, policies = _rendered(name)
    bundle = TF[name].metadata.name
    assert sorted(tf) == sorted(tfpolicy.resource_name(stem, bundle) for stem in policies)
    for stem, policy in policies.items():
        args = dict(tf[tfpolicy.resource_name(stem, bundle)])
        assert args.pop("provider") == "google-beta" and args.pop("project") == "${var.project_id}"
        assert args.pop("depends_on") == ["google_project_service.apis"]
        assert _walk(_back(args), policy) == [], stem


def _keys(value: Any, path: str = "") -> list[tuple[str, str]]:
    if isinstance(value, list):
        return [k for v in value for k in _keys(v, path)]
    if not isinstance(value, dict) or path in MAPS:
        return []
    return [(path, k) for k in value] + [kk for k, v in value.items() for kk in _keys(v, f"{path}.{k}".lstrip("."))]


@pytest.mark.parametrize("name", sorted(TF))
def test_terraform_policies_use_only_provider_arguments(name: str) -> None:
    tf, _ = _rendered(name)
    unknown = [f"{p}.{k}" for body in tf.values() for p, k in _keys(body) if k not in SCHEMA.get(p, set())]
    assert not unknown
    names = list(tf)
    assert all(re.fullmatch(r"[a-z_][a-z0-9_]*", n) for n in names)


def test_agreement_check_catches_a_drifted_field() -> None:
    name = sorted(TF)[0]
    tf, policies = _rendered(name)
    stem, policy = sorted(policies.items())[0]
    args = {k: v for k, v in tf[tfpolicy.resource_name(stem, TF[name].metadata.name)].items()}
    for meta in ("provider", "project", "depends_on"):
        args.pop(meta)
    args["conditions"][0]["condition_prometheus_query_language"]["duration"] = "0s"
    (drift,) = _walk(_back(args), policy)
    assert drift.startswith(".conditions[0].conditionPrometheusQueryLanguage.duration: '0s' != ")


def test_template_sequences_survive_terraform() -> None:
    # Cloud Monitoring documentation has its own ${...} variables; Terraform would interpolate them.
    policy = {"documentation": {"content": "Run ${metric.label.run} at 100%{x}"}, "userLabels": {"a_b": "${x}"}}
    args = tfpolicy.arguments(policy)
    content = "Run $${metric.label.run} at 100%%{x}"
    assert args == {"documentation": {"content": content}, "user_labels": {"a_b": "$${x}"}}
    assert _unliteral(args["documentation"]["content"]) == policy["documentation"]["content"]


def test_no_terraform_policies_when_alerts_are_off() -> None:
    p = gke_profile("gke-standard-rayjob")  # alerts.enabled: false
    assert not monitoring.alert_policies(facts(p), ())
    assert tfpolicy.resources(p.metadata.name, [], []) == {}
