"""The alert policies as Terraform JSON google_monitoring_alert_policy resources, from the data of their API JSON."""

from __future__ import annotations

import re
from typing import Any

# AlertPolicy fields whose values are string maps: their keys are label names, not schema fields, and stay as they
# are (AlertPolicy.userLabels and PrometheusQueryLanguageCondition.labels, monitoring v3 discovery).
MAP_FIELDS = frozenset({"userLabels", "labels"})
RESOURCE = "google_monitoring_alert_policy"
FILE = "terraform/alert_policies.tf.json"


def snake(name: str) -> str:
    """google-beta names each argument of this resource as its field's snake_case (mmv1 monitoring/AlertPolicy.yaml)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def arguments(value: Any, field: str = "") -> Any:
    """An AlertPolicy JSON value as resource arguments: field names snake_case, string maps' keys kept."""
    if isinstance(value, dict):
        if field in MAP_FIELDS:
            return {k: literal(v) for k, v in value.items()}
        return {snake(k): arguments(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [arguments(v, field) for v in value]
    if isinstance(value, str):
        return literal(value)
    return value


def literal(text: str) -> str:
    """Every JSON-syntax string is a template, so `${` and `%{` (as in `${condition.display_name}`) are doubled."""
    return text.replace("${", "$${").replace("%{", "%%{")


def resource_name(stem: str, bundle: str) -> str:
    return stem.removeprefix(f"{bundle}-").replace("-", "_")


def resources(bundle: str, policies: list[tuple[str, dict[str, Any]]], depends_on: list[str]) -> dict[str, Any]:
    """alert_policies.tf.json (https://developer.hashicorp.com/terraform/language/syntax/json)."""
    found = {
        resource_name(stem, bundle): {
            "provider": "google-beta",
            "project": "${var.project_id}",
            **arguments(policy),
            "depends_on": depends_on,
        }
        for stem, policy in policies
    }
    return {"resource": {RESOURCE: found}} if found else {}
