"""blueprint.tfvars for ai-on-eks infra/jark-stack: the variables rlobs sets, their types and cross-flag rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rlobs.bundle.spec import DataFile
from rlobs.errors import RlobsError
from rlobs.targets.eks.terraform import (
    ARGOCD_NOTE,
    CLOUDWATCH_ADDON,
    declared,
    declared_source,
    flag_problems,
    type_problem,
)

if TYPE_CHECKING:
    from rlobs.targets.eks.profile import EksProfile


@dataclass(frozen=True, slots=True)
class TfVar:
    name: str
    value: Any
    comment: str = ""


# JARK's own choices, as infra/jark-stack/terraform/blueprint.tfvars sets them (awslabs/ai-on-eks @ c835f47a).
_JARK = (
    TfVar("enable_aws_efs_csi_driver", value=True, comment="as in the upstream jark-stack blueprint"),
    TfVar("enable_jupyterhub", value=True),
    TfVar("enable_argo_workflows", value=True),
    TfVar("enable_argo_events", value=True),
)


def _cluster_addons(entries: Any, *, cloudwatch: bool) -> TfVar:
    """The upstream default, eks.cloudwatch and eks.terraformVariables over it; the comment names what differs."""
    default = declared()["enable_cluster_addons"]["default"]
    given = entries if isinstance(entries, dict) else {}
    value = {**default, CLOUDWATCH_ADDON: cloudwatch, **given}
    why = {CLOUDWATCH_ADDON: "eks.cloudwatch", **dict.fromkeys(given, "eks.terraformVariables")}
    changed = [f"{k} = {str(v).lower()} ({why[k]})" for k, v in value.items() if default.get(k) != v]
    comment = f"ai-on-eks's default map (variables.tf @ {declared_source()['commit']})"
    return TfVar("enable_cluster_addons", value, comment + (", except " + ", ".join(changed) if changed else ""))


PATH = "terraform/blueprint.tfvars"


def blueprint_tfvars(profile: EksProfile) -> DataFile:
    variables = tfvars(profile)
    header = (
        f"blueprint.tfvars for awslabs/ai-on-eks infra/jark-stack, rendered by rlobs for {profile.metadata.name}.\n"
        "Copy it over infra/jark-stack/terraform/blueprint.tfvars and run ./install.sh there (see README.md).\n"
        "Every variable below is declared by infra/base/terraform/variables.tf; rlobs checked names and types.\n"
        "\n"
        f"enable_argocd is deliberately absent. {ARGOCD_NOTE}.\n"
        'The upstream blueprint and docs still set it; Terraform would only warn "Value for undeclared variable".'
    )
    return DataFile(
        PATH,
        "hcl",
        {v.name: v.value for v in variables},
        "The ai-on-eks `infra/jark-stack` variables: cluster, KubeRay, DCGM, add-ons.",
        header=header,
        comments={v.name: v.comment for v in variables},
    )


def tfvars(profile: EksProfile) -> tuple[TfVar, ...]:
    eks = profile.eks
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
            value=False,
            comment="rlobs renders the DCGM ServiceMonitor (rl-layer/); a second one would scrape every GPU twice",
        ),
        TfVar("enable_ai_ml_observability_stack", eks.mode == "ai-on-eks", mode_comment),
        TfVar(
            "enable_kube_prometheus_stack",
            value=False,
            comment="never with the observability stack (two operators, same CRDs)",
        ),
        _cluster_addons(eks.terraform_variables.get("enable_cluster_addons"), cloudwatch=eks.cloudwatch),
    )
    extra = tuple(
        TfVar(k, v, "from eks.terraformVariables")
        for k, v in sorted(eks.terraform_variables.items())
        if k != "enable_cluster_addons"
    )
    result = head + extra
    check_tfvars(result, eks.mode, dcgm=eks.dcgm_exporter)
    return result


def check_tfvars(variables: tuple[TfVar, ...], mode: str, *, dcgm: bool) -> None:
    """Render-time guard: every variable declared and well typed, and the cross-flag rules hold."""
    known = declared()
    values = {v.name: v.value for v in variables}
    problems = [f"{v.name}: expected a declared variable" for v in variables if v.name not in known]
    problems += [
        f"{v.name}: {p}" for v in variables if v.name in known and (p := type_problem(known[v.name]["type"], v.value))
    ]
    problems += [f"{k}: {p}" for k, p in flag_problems(mode, dcgm=dcgm, values=values)]
    if (values.get("enable_ai_ml_observability_stack") is True) != (mode == "ai-on-eks"):
        problems.append("enable_ai_ml_observability_stack: expected true exactly in eks.mode ai-on-eks")
    if problems:
        raise RlobsError("blueprint.tfvars would be invalid:\n  " + "\n  ".join(problems))
