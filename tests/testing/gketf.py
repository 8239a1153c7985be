"""What the google-beta provider declares of google_monitoring_alert_policy, for the tests of the alert policies as
Terraform (tests/test_tfpolicy.py, tests/test_fleet_gketf.py)."""

from __future__ import annotations

# Arguments of google_monitoring_alert_policy that rlobs may set, per block, as google-beta declares them
# (google-beta/services/monitoring/resource_monitoring_alert_policy.go, generated from mmv1
# products/monitoring/AlertPolicy.yaml; condition_prometheus_query_language and its fields since before 7.17).
SCHEMA: dict[str, set[str]] = {
    "": {
        "provider",
        "project",
        "depends_on",
        "display_name",
        "documentation",
        "user_labels",
        "conditions",
        "combiner",
        "enabled",
        "alert_strategy",
        "severity",
        "notification_channels",
    },
    "documentation": {"content", "mime_type", "subject", "links"},
    "documentation.links": {"display_name", "url"},
    "conditions": {"display_name", "condition_prometheus_query_language"},
    "conditions.condition_prometheus_query_language": {
        "query",
        "duration",
        "evaluation_interval",
        "labels",
        "rule_group",
        "alert_rule",
        "disable_metric_validation",
    },
    "alert_strategy": {
        "auto_close",
        "notification_prompts",
        "notification_rate_limit",
        "notification_channel_strategy",
    },
}
