"""The ai-on-eks Terraform variables a profile may set (eks.terraformVariables), and their cross-flag rules."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any

from rlobs.profile.fields import INVISIBLE
from rlobs.profile.problems import ProblemAt
from rlobs.profile.regions import pinned

# Variables derived from profile keys; setting them again under eks.terraformVariables would be ambiguous.
_OWNED = {
    "name": "eks.cluster.name",
    "region": "eks.cluster.region",
    "eks_cluster_version": "eks.cluster.kubernetesVersion",
    "enable_kuberay_operator": "eks.kuberayOperator",
    "enable_nvidia_dcgm_exporter": "eks.dcgmExporter",
    "nvidia_dcgm_exporter_service_monitor": "rlobs (it renders the DCGM ServiceMonitor itself)",
    "enable_ai_ml_observability_stack": "eks.mode",
}

# The paid add-on of enable_cluster_addons: rlobs turns it on only for eks.cloudwatch.
CLOUDWATCH_ADDON = "amazon-cloudwatch-observability"

ARGOCD_NOTE = (
    "enable_argocd is no longer declared by infra/base/terraform/variables.tf (removed in ai-on-eks PR #202); "
    "argocd.tf installs Argo CD unconditionally"
)

# infra/base/terraform/variables.tf `validation` blocks, so a bad value fails at render time, not at apply.
_VALIDATIONS: dict[str, tuple[set[Any], str]] = {
    "availability_zones_count": ({2, 3, 4}, "2, 3 or 4"),
    "ami_family": ({"bottlerocket", "al2023"}, "bottlerocket or al2023"),
}


def declared() -> dict[str, dict[str, Any]]:
    """name -> {type, sensitive, default} of every variable infra/base/terraform/variables.tf declares."""
    variables: dict[str, dict[str, Any]] = pinned("ai_on_eks_variables.json")["variables"]
    return variables


def declared_source() -> dict[str, str]:
    """Where the table was read: repository, path, commit and date (tools/ai_on_eks_variables.py)."""
    source: dict[str, str] = pinned("ai_on_eks_variables.json")["source"]
    return source


# Each Terraform type a profile may set: what it looks like in YAML, whether a value is one, and its JSON Schema.
_TF_TYPES: dict[str, tuple[str, Callable[[Any], bool], dict[str, Any]]] = {
    "bool": ("true or false", lambda v: isinstance(v, bool), {"type": "boolean"}),
    "number": ("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool), {"type": "number"}),
    "string": ("a string", lambda v: isinstance(v, str), {"type": "string"}),
    "list(string)": (
        "a list of strings",
        lambda v: isinstance(v, list | tuple) and all(isinstance(x, str) for x in v),
        {"type": "array", "items": {"type": "string"}},
    ),
    "map(bool)": (
        "a mapping of names to true or false",
        lambda v: isinstance(v, dict) and all(isinstance(x, bool) for x in v.values()),
        {"type": "object", "additionalProperties": {"type": "boolean"}},
    ),
}


def type_problem(tf_type: str, value: Any) -> str | None:
    if tf_type not in _TF_TYPES:
        return f"expected a variable rlobs can write (its type {tf_type} is not supported; edit the tfvars by hand)"
    expected, ok, _ = _TF_TYPES[tf_type]
    return None if ok(value) else f"expected {expected} (Terraform type {tf_type})"


def settable() -> dict[str, dict[str, Any]]:
    """name -> JSON Schema of every variable a profile may set (the editor schema lists exactly these)."""
    return {
        key: {**_TF_TYPES[spec["type"]][2], **({"enum": sorted(_VALIDATIONS[key][0])} if key in _VALIDATIONS else {})}
        for key, spec in declared().items()
        if not spec["sensitive"] and key not in _OWNED and spec["type"] in _TF_TYPES
    }


def entry_problems(variables: Any) -> list[ProblemAt]:
    """Every entry that is undeclared, sensitive, owned by rlobs or mistyped; paths relative to the field."""
    if not isinstance(variables, dict):
        return []  # the model says it expected a mapping
    known = declared()
    return [
        ProblemAt((str(key),), problem)
        for key, value in variables.items()
        if (problem := _variable_problem(known, str(key), value)) is not None
    ]


def _variable_problem(known: dict[str, dict[str, Any]], key: str, value: Any) -> str | None:
    if key == "enable_argocd":
        return ARGOCD_NOTE + "; expected no enable_argocd"
    if key not in known:
        hint = difflib.get_close_matches(key, known, n=1)
        mean = f" (did you mean '{hint[0]}'?)" if hint else ""
        return f"expected a variable that infra/base/terraform/variables.tf declares{mean}, got one it does not"
    if known[key]["sensitive"]:
        return (
            "expected no sensitive variable: rlobs never writes credentials to git; pass it as "
            f"TF_VAR_{key} from your shell or a secret store when you run terraform, got a value (not shown)"
        )
    if key in _OWNED:
        return f"expected no {key}: rlobs sets it from {_OWNED[key]}"
    if key == "enable_cluster_addons" and isinstance(value, dict) and value.get("metrics-server") is False:
        return "expected metrics-server to stay true (it is the stack's Metrics Server)"
    if key == "enable_cluster_addons" and isinstance(value, dict) and CLOUDWATCH_ADDON in value:
        return f"expected no {CLOUDWATCH_ADDON} entry: rlobs sets it from eks.cloudwatch"
    if (problem := type_problem(known[key]["type"], value)) is not None:
        return problem
    if key in _VALIDATIONS and value not in _VALIDATIONS[key][0]:
        return f"expected {_VALIDATIONS[key][1]} (the variable's validation rule)"
    return _text_problem(value)


# ai-on-eks hands its string variables to AWS resource arguments (names, ARNs, CIDRs, domains) and Helm values, none
# of which takes a control character or a multi-line value; tfvars escapes would carry one, the consumers would not.
MAX_TEXT = 1024
_TEXT = f"[^{INVISIBLE}]{{0,{MAX_TEXT}}}"  # compiled (and cached) by re when a string variable is first checked


def _text_problem(value: Any) -> str | None:
    texts = [value] if isinstance(value, str) else list(value) if isinstance(value, tuple | list) else []
    if any(isinstance(text, str) and not re.fullmatch(_TEXT, text) for text in texts):
        return (
            f"expected one line of at most {MAX_TEXT} characters without control or invisible characters "
            "(ai-on-eks passes it to AWS resource arguments and Helm values)"
        )
    return None


def flag_problems(mode: str, *, dcgm: bool, values: dict[str, Any]) -> list[tuple[str, str]]:
    """Cross-flag rules Terraform does not check (each would deploy something twice or scrape nothing)."""
    problems = []
    if values.get("enable_kube_prometheus_stack") is True:
        message = "expected false: the observability stack already runs kube-prometheus-stack; a second one means "
        problems.append(("enable_kube_prometheus_stack", message + "two Prometheus operators owning the same CRDs"))
    if values.get("observability_mcp_enabled") is True and mode != "ai-on-eks":
        message = "expected it only with eks.mode: ai-on-eks (it configures that stack)"
        problems.append(("observability_mcp_enabled", message))
    gpu_operator = values.get("enable_nvidia_gpu_operator") is True
    if dcgm and gpu_operator and values.get("enable_nvidia_gpu_operator_dcgm_exporter", True):
        message = "expected enable_nvidia_gpu_operator_dcgm_exporter: false with eks.dcgmExporter: true (the GPU "
        message += "Operator's DCGM exporter replaces the standalone one that rlobs monitors in namespace monitoring)"
        problems.append(("enable_nvidia_gpu_operator", message))
    return problems
