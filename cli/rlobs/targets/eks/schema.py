"""The eks target's cross-field rules as JSON Schema (rlobs.profile.schema adds them to the profile's schema)."""

from __future__ import annotations

from rlobs.profile.schema import JsonSchema, key_is
from rlobs.targets.eks.terraform import settable


def _terraform_variables() -> JsonSchema:
    """terraform.entry_problems: only the variables a profile may set, each of its Terraform type and validation."""
    properties = settable()
    # terraform.flag_problems: a second kube-prometheus-stack; the Metrics Server kept.
    if "enable_kube_prometheus_stack" in properties:
        properties["enable_kube_prometheus_stack"] = {"const": False}
    if "enable_cluster_addons" in properties:
        properties["enable_cluster_addons"] = {
            **properties["enable_cluster_addons"],
            "properties": {"metrics-server": {"const": True}},
        }
    return {"properties": properties, "additionalProperties": False}


def _eks_spec() -> list[JsonSchema]:
    receivers_in_ai_on_eks = {"items": {"properties": {"alerts": {"const": "rl"}}}}
    return [
        {"properties": {"terraformVariables": _terraform_variables()}},
        # profile.EksSpec._fits_ai_on_eks_mode.
        {
            "if": key_is("mode", "ai-on-eks"),
            "then": {
                "properties": {
                    "prometheus": {"maxProperties": 0},
                    "grafana": {"maxProperties": 0},
                    "opensearch": {"propertyNames": {"const": "logWriterSecret"}},
                    "alertmanagerReceivers": receivers_in_ai_on_eks,
                }
            },
            # terraform.flag_problems: observability_mcp_enabled configures the reference stack only.
            "else": {
                "properties": {"terraformVariables": {"properties": {"observability_mcp_enabled": {"const": False}}}}
            },
        },
        # profile.EksSpec._receiver_names: `null` is rlobs' own receiver (unique names are beyond JSON Schema).
        {"properties": {"alertmanagerReceivers": {"items": {"properties": {"name": {"not": {"const": "null"}}}}}}},
        # terraform.flag_problems: the GPU Operator's DCGM exporter next to the standalone one (dcgmExporter: true).
        {
            "if": {"not": key_is("dcgmExporter", value=False)},
            "then": {
                "properties": {
                    "terraformVariables": {
                        "if": key_is("enable_nvidia_gpu_operator", value=True),
                        "then": key_is("enable_nvidia_gpu_operator_dcgm_exporter", value=False),
                    }
                }
            },
        },
    ]


def schema_rules() -> dict[str, list[JsonSchema]]:
    return {"EksSpec": _eks_spec()}
