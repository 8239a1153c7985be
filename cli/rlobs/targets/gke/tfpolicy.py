"""The alert policies as google_monitoring_alert_policy resources, in Terraform's JSON syntax, from the same policy
data as monitoring/alert-policies/*.json: one source, two serialisations, so a change to a policy reaches both."""

from __future__ import annotations

import re
from typing import Any

# AlertPolicy fields whose values are string maps: their keys are label names, not schema fields, and stay as they
# are (AlertPolicy.userLabels and PrometheusQueryLanguageCondition.labels, monitoring v3 discovery).
MAP_FIELDS = frozenset({"userLabels", "labels"})
RESOURCE = "google_monitoring_alert_policy"
FILE = "terraform/alert_policies.tf.json"


def snake(name: str) -> str:
    """The provider's argument name for an API field: google-beta names every argument of this resource as the
    field's snake_case (mmv1 products/monitoring/AlertPolicy.yaml, e.g. conditionPrometheusQueryLanguage ->
    condition_prometheus_query_language, evaluationInterval -> evaluation_interval)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def arguments(value: Any, field: str = "") -> Any:
    """An AlertPolicy JSON value as resource arguments: objects become blocks (an object in Terraform's JSON syntax,
    a list of objects for repeated blocks), field names snake_case, string maps' keys kept."""
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
    """A string Terraform reads back as exactly `text`: every JSON-syntax string is a template, so `${` and `%{`
    (Cloud Monitoring's own `${condition.display_name}` documentation variables among them) are doubled."""
    return text.replace("${", "$${").replace("%{", "%%{")


def resource_name(stem: str, bundle: str) -> str:
    """A Terraform resource name from a policy file stem (letters, digits, `_`; the bundle prefix dropped)."""
    return stem.removeprefix(f"{bundle}-").replace("-", "_")


def resources(bundle: str, policies: list[tuple[str, dict[str, Any]]], depends_on: list[str]) -> dict[str, Any]:
    """The whole alert_policies.tf.json: one resource per policy (https://developer.hashicorp.com/terraform/language/
    syntax/json: blocks as objects, meta-arguments like provider and depends_on as plain keys)."""
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
