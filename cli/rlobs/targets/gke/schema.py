"""The gke target's cross-field rules as JSON Schema (rlobs.profile.schema adds them to the profile's schema)."""

from __future__ import annotations

from rlobs.profile.schema import JsonSchema, absent_or_null, given, key_is, pattern
from rlobs.targets.gke.profile import LABEL_KEY, LABEL_VALUE, MAX_USER_LABELS, OWNED_LABELS, REGION, SYSTEM_NAMESPACE

# profile.MIN_EXPORT_SECONDS to MAX_EXPORT_SECONDS (5s-300s) in the Duration syntax: 5s-300s or 1m-5m.
GKE_EXPORT_INTERVAL = r"([5-9]|[1-9][0-9]|[12][0-9]{2}|300)s|[1-5]m"

# profile.GkeProfile._workload_on_gke.
_GKE_PROFILE: list[JsonSchema] = [
    {
        "properties": {
            "workload": {
                "properties": {
                    "exportInterval": {"pattern": pattern(GKE_EXPORT_INTERVAL)},
                    "namespace": {"not": {"pattern": pattern(SYSTEM_NAMESPACE.pattern)}},
                }
            }
        }
    }
]

# profile.GkeSpec._cluster_rules and _user_labels.
_GKE_SPEC: list[JsonSchema] = [
    {
        "if": key_is("clusterMode", "create-autopilot"),
        "then": {"properties": {"location": {"pattern": pattern(REGION)}}},
    },
    {
        "if": {
            "required": ["manage", "clusterMode"],
            "properties": {
                "manage": {"const": "terraform"},
                "clusterMode": {"enum": ["create-standard", "create-autopilot"]},
            },
        },
        "then": given("deletionProtection"),
        "else": absent_or_null("deletionProtection"),
    },
    {
        "if": key_is("naming", "gmp-collector"),
        "then": given("collectorEndpoint"),
        "else": absent_or_null("collectorEndpoint"),
    },
    {
        "properties": {
            "userLabels": {
                "maxProperties": MAX_USER_LABELS - len(OWNED_LABELS),
                "propertyNames": {"pattern": pattern(LABEL_KEY.pattern), "not": {"enum": sorted(OWNED_LABELS)}},
                "additionalProperties": {"pattern": pattern(LABEL_VALUE.pattern)},
            }
        }
    },
]


def schema_rules() -> dict[str, list[JsonSchema]]:
    return {"GkeProfile": _GKE_PROFILE, "GkeSpec": _GKE_SPEC}
