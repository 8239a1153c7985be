"""The cross-field rules of the profile's validators, as JSON Schema (if/then/else under each object's `allOf`), so an
editor flags what `validate` refuses across keys too; each rule names the validator it mirrors, and
tests/test_schema.py runs a corpus through both and requires the same verdict."""

from __future__ import annotations

from typing import Any

from rlobs.profile.gke import LABEL_KEY, LABEL_VALUE, MAX_USER_LABELS, OWNED_LABELS, REGION, SYSTEM_NAMESPACE
from rlobs.profile.terraform import settable

JsonSchema = dict[str, Any]


def _is(key: str, value: object) -> JsonSchema:
    """`key` is given and equals `value` (an absent key takes its default, which no rule here is conditioned on)."""
    return {"required": [key], "properties": {key: {"const": value}}}


def _absent_or_null(*keys: str) -> JsonSchema:
    return {"properties": {k: {"type": "null"} for k in keys}}


def _given(*keys: str) -> JsonSchema:
    return {"required": list(keys), "properties": {k: {"not": {"type": "null"}} for k in keys}}


def _pattern(regex: str) -> str:
    return f"^(?:{regex})$"


# model.Workload._replicated_jobs_for_jobsets and _run_id_for_wandb.
_WORKLOAD: list[JsonSchema] = [
    {
        "if": _is("kind", "JobSet"),
        "then": {"required": ["replicatedJobs"], "properties": {"replicatedJobs": {"minItems": 1}}},
        "else": {"properties": {"replicatedJobs": {"maxItems": 0}}},
    },
    {
        "if": {"required": ["tracker"], "properties": {"tracker": _is("kind", "wandb")}},
        "then": {"properties": {"run": {"properties": {"id": {"not": {"type": "string", "pattern": r"[/\\#?%:]"}}}}}},
    },
]

# model.Tracker._fields_for_kind.
_TRACKER: list[JsonSchema] = [
    {
        "if": _is("kind", "wandb"),
        "then": {**_given("entity", "project"), "allOf": [_absent_or_null("experiment")]},
        "else": {**_given("url", "experiment"), "allOf": [_absent_or_null("entity", "project")]},
    }
]

# Managed OpenTelemetry's export interval range (gke.MIN_EXPORT_SECONDS to MAX_EXPORT_SECONDS, 5s-300s) in the
# Duration syntax: 5s-300s or 1m-5m (gkeprofile._gke_workload_problems; tests/test_schema.py compares the two).
GKE_EXPORT_INTERVAL = r"([5-9]|[1-9][0-9]|[12][0-9]{2}|300)s|[1-5]m"

# gkeprofile.GkeProfile._workload_on_gke.
_GKE_PROFILE: list[JsonSchema] = [
    {
        "properties": {
            "workload": {
                "properties": {
                    "exportInterval": {"pattern": _pattern(GKE_EXPORT_INTERVAL)},
                    "namespace": {"not": {"pattern": _pattern(SYSTEM_NAMESPACE.pattern)}},
                }
            }
        }
    }
]

# gke.GkeSpec._cluster_rules and _user_labels.
_GKE_SPEC: list[JsonSchema] = [
    {"if": _is("clusterMode", "create-autopilot"), "then": {"properties": {"location": {"pattern": _pattern(REGION)}}}},
    {
        "if": {
            "required": ["manage", "clusterMode"],
            "properties": {
                "manage": {"const": "terraform"},
                "clusterMode": {"enum": ["create-standard", "create-autopilot"]},
            },
        },
        "then": _given("deletionProtection"),
        "else": _absent_or_null("deletionProtection"),
    },
    {
        "if": _is("naming", "gmp-collector"),
        "then": _given("collectorEndpoint"),
        "else": _absent_or_null("collectorEndpoint"),
    },
    {
        "properties": {
            "userLabels": {
                "maxProperties": MAX_USER_LABELS - len(OWNED_LABELS),
                "propertyNames": {"pattern": _pattern(LABEL_KEY.pattern), "not": {"enum": sorted(OWNED_LABELS)}},
                "additionalProperties": {"pattern": _pattern(LABEL_VALUE.pattern)},
            }
        }
    },
]

_TF_TYPES: dict[str, JsonSchema] = {
    "bool": {"type": "boolean"},
    "number": {"type": "number"},
    "string": {"type": "string"},
    "list(string)": {"type": "array", "items": {"type": "string"}},
    "map(bool)": {"type": "object", "additionalProperties": {"type": "boolean"}},
}


def _terraform_variables() -> JsonSchema:
    """terraform.entry_problems: only the variables a profile may set, each of its Terraform type and validation."""
    properties = {}
    for key, (tf_type, allowed) in settable().items():
        properties[key] = {**_TF_TYPES[tf_type], **({"enum": list(allowed)} if allowed is not None else {})}
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
        # eks.EksSpec._stack_settings_need_rlobs_mode and _receivers_fit_the_mode.
        {
            "if": _is("mode", "ai-on-eks"),
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
        # eks.EksSpec._receiver_names: `null` is rlobs' own receiver (unique names are beyond JSON Schema).
        {"properties": {"alertmanagerReceivers": {"items": {"properties": {"name": {"not": {"const": "null"}}}}}}},
        # terraform.flag_problems: the GPU Operator's DCGM exporter next to the standalone one (dcgmExporter: true).
        {
            "if": {"not": _is("dcgmExporter", value=False)},
            "then": {
                "properties": {
                    "terraformVariables": {
                        "if": _is("enable_nvidia_gpu_operator", value=True),
                        "then": _is("enable_nvidia_gpu_operator_dcgm_exporter", value=False),
                    }
                }
            },
        },
    ]


def add_cross_field_rules(schema: JsonSchema) -> JsonSchema:
    """`schema` (pydantic's, with $defs per model) with each model's cross-field rules added to its allOf."""
    rules: dict[str, list[JsonSchema]] = {
        "Workload": _WORKLOAD,
        "Tracker": _TRACKER,
        "GkeProfile": _GKE_PROFILE,
        "GkeSpec": _GKE_SPEC,
        "EksSpec": _eks_spec(),
    }
    defs = schema["$defs"]
    for name, extra in rules.items():
        defs[name] = {**defs[name], "allOf": [*defs[name].get("allOf", []), *extra]}
    return schema
