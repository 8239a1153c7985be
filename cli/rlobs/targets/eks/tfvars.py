"""blueprint.tfvars for ai-on-eks infra/jark-stack: the variables rlobs sets, their types and cross-flag rules."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rlobs.errors import RlobsError
from rlobs.resources import read_text

if TYPE_CHECKING:
    from rlobs.profile.eks import EksSpec
    from rlobs.profile.model import Profile


@dataclass(frozen=True, slots=True)
class TfVar:
    name: str
    value: Any
    comment: str = ""


# JARK's own choices, as infra/jark-stack/terraform/blueprint.tfvars sets them (awslabs/ai-on-eks @ c835f47a).
_JARK = (
    TfVar("enable_aws_efs_csi_driver", True, "as in the upstream jark-stack blueprint"),
    TfVar("enable_jupyterhub", True),
    TfVar("enable_argo_workflows", True),
    TfVar("enable_argo_events", True),
)

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

# The variable's default (infra/base/terraform/variables.tf); eks.terraformVariables may override entries, except
# that metrics-server stays on: it is JARK's Metrics Server (an EKS add-on, not a chart in the stack).
_CLUSTER_ADDONS = {
    "coredns": True,
    "kube-proxy": True,
    "vpc-cni": True,
    "eks-pod-identity-agent": True,
    "metrics-server": True,
    "eks-node-monitoring-agent": True,
    "amazon-cloudwatch-observability": True,
}

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
    """name -> {type, sensitive} of every variable infra/base/terraform/variables.tf declares."""
    variables: dict[str, dict[str, Any]] = json.loads(read_text("data", "ai_on_eks_variables.json"))["variables"]
    return variables


def type_problem(tf_type: str, value: Any) -> str | None:
    """Why `value` does not fit the Terraform type `tf_type`, or None."""
    ok = {
        "bool": lambda v: isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "string": lambda v: isinstance(v, str),
        "list(string)": lambda v: isinstance(v, list | tuple) and all(isinstance(x, str) for x in v),
        "map(bool)": lambda v: isinstance(v, dict) and all(isinstance(x, bool) for x in v.values()),
    }.get(tf_type)
    if ok is None:
        return f"expected a variable rlobs can write (its type {tf_type} is not supported; edit the tfvars by hand)"
    return None if ok(value) else f"expected a value of Terraform type {tf_type}"


def variable_problems(eks: EksSpec) -> list[tuple[str, str]]:
    """(key, message) for each eks.terraformVariables entry that is undeclared, mistyped or conflicting."""
    known = declared()
    problems: list[tuple[str, str]] = []
    for key, value in eks.terraform_variables.items():
        if key == "enable_argocd":
            problems.append((key, ARGOCD_NOTE + "; expected no enable_argocd"))
            continue
        if key not in known:
            hint = difflib.get_close_matches(key, known, n=1)
            mean = f" (did you mean '{hint[0]}'?)" if hint else ""
            problems.append((key, f"expected a variable that infra/base/terraform/variables.tf declares{mean}"))
            continue
        if known[key]["sensitive"]:
            problems.append(
                (
                    key,
                    "expected no sensitive variable: rlobs never writes credentials to git; pass it as "
                    f"TF_VAR_{key} from your shell or a secret store when you run terraform",
                )
            )
            continue
        if key in _OWNED:
            problems.append((key, f"expected no {key}: rlobs sets it from {_OWNED[key]}"))
            continue
        if key == "enable_cluster_addons" and isinstance(value, dict) and value.get("metrics-server") is False:
            problems.append((key, "expected metrics-server to stay true (it is the stack's Metrics Server)"))
            continue
        problem = type_problem(known[key]["type"], value) or _validation_problem(key, value)
        if problem:
            problems.append((key, problem))
    problems += _flag_problems(eks.mode, eks.dcgm_exporter, dict(eks.terraform_variables))
    return problems


def _validation_problem(key: str, value: Any) -> str | None:
    if key in _VALIDATIONS and value not in _VALIDATIONS[key][0]:
        return f"expected {_VALIDATIONS[key][1]} (the variable's validation rule)"
    return None


def _flag_problems(mode: str, dcgm: bool, values: dict[str, Any]) -> list[tuple[str, str]]:
    """Cross-flag rules Terraform does not check (each would deploy something twice or scrape nothing)."""
    problems = []
    if values.get("enable_kube_prometheus_stack") is True:
        problems.append(
            (
                "enable_kube_prometheus_stack",
                "expected false: the observability stack already runs kube-prometheus-stack; a second one means "
                "two Prometheus operators owning the same CRDs",
            )
        )
    if values.get("observability_mcp_enabled") is True and mode != "ai-on-eks":
        problems.append(
            ("observability_mcp_enabled", "expected it only with eks.mode: ai-on-eks (it configures that stack)")
        )
    gpu_operator_dcgm = values.get("enable_nvidia_gpu_operator") is True and values.get(
        "enable_nvidia_gpu_operator_dcgm_exporter", True
    )
    if dcgm and gpu_operator_dcgm:
        problems.append(
            (
                "enable_nvidia_gpu_operator",
                "expected enable_nvidia_gpu_operator_dcgm_exporter: false with eks.dcgmExporter: true (the GPU "
                "Operator's DCGM exporter replaces the standalone one that rlobs monitors in namespace monitoring)",
            )
        )
    return problems


def tfvars(profile: Profile) -> tuple[TfVar, ...]:
    """The variables of blueprint.tfvars, in file order."""
    eks = profile.eks
    assert eks is not None
    mode_comment = (
        "the reference stack deploys Prometheus, Grafana, OpenSearch and FluentBit (eks.mode: ai-on-eks)"
        if eks.mode == "ai-on-eks"
        else "false: rlobs renders and pins the stack's ArgoCD Applications itself (eks.mode: rlobs)"
    )
    head = (
        TfVar("name", eks.cluster.name, "EKS cluster and VPC name"),
        TfVar("region", eks.cluster.region),
        TfVar("eks_cluster_version", eks.cluster.kubernetes_version),
        *_JARK,
        TfVar("enable_kuberay_operator", eks.kuberay_operator),
        TfVar("enable_nvidia_dcgm_exporter", eks.dcgm_exporter, "DCGM exporter in namespace monitoring"),
        TfVar(
            "nvidia_dcgm_exporter_service_monitor",
            False,
            "rlobs renders the DCGM ServiceMonitor (rl-layer/); a second one would scrape every GPU twice",
        ),
        TfVar("enable_ai_ml_observability_stack", eks.mode == "ai-on-eks", mode_comment),
        TfVar("enable_kube_prometheus_stack", False, "never with the observability stack (two operators, same CRDs)"),
        TfVar(
            "enable_cluster_addons",
            {**_CLUSTER_ADDONS, **_addon_overrides(eks)},
            "the variable's default map (and eks.terraformVariables' entries): metrics-server is the EKS add-on",
        ),
    )
    extra = tuple(
        TfVar(k, v, "from eks.terraformVariables")
        for k, v in sorted(eks.terraform_variables.items())
        if k != "enable_cluster_addons"
    )
    result = head + extra
    check_tfvars(result, eks.mode, eks.dcgm_exporter)
    return result


def _addon_overrides(eks: EksSpec) -> dict[str, Any]:
    value = eks.terraform_variables.get("enable_cluster_addons")
    return value if isinstance(value, dict) else {}


def check_tfvars(variables: tuple[TfVar, ...], mode: str, dcgm: bool) -> None:
    """Render-time guard: every variable declared and well typed, and the cross-flag rules hold."""
    known = declared()
    values = {v.name: v.value for v in variables}
    problems = [f"{v.name}: expected a declared variable" for v in variables if v.name not in known]
    problems += [
        f"{v.name}: {p}" for v in variables if v.name in known and (p := type_problem(known[v.name]["type"], v.value))
    ]
    problems += [f"{k}: {p}" for k, p in _flag_problems(mode, dcgm, values)]
    if (values.get("enable_ai_ml_observability_stack") is True) != (mode == "ai-on-eks"):
        problems.append("enable_ai_ml_observability_stack: expected true exactly in eks.mode ai-on-eks")
    if problems:
        raise RlobsError("blueprint.tfvars would be invalid:\n  " + "\n  ".join(problems))
