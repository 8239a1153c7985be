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
    "conditions": {"display_name", "condition_prometheus_query_language", "condition_threshold"},
    # The SLO burn-rate policies' conditions (select_slo_burn_rate filters).
    "conditions.condition_threshold": {"filter", "comparison", "threshold_value", "duration", "trigger"},
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

# google_monitoring_custom_service and google_monitoring_slo as google-beta declares them (mmv1
# products/monitoring/Service.yaml and Slo.yaml: the API's serviceLevelIndicator.requestBased is request_based_sli,
# rollingPeriod is rolling_period_days).
SLO_SCHEMA: dict[str, dict[str, set[str]]] = {
    "google_monitoring_custom_service": {
        "": {"provider", "project", "depends_on", "service_id", "display_name", "telemetry", "user_labels"}
    },
    "google_monitoring_slo": {
        "": {
            *("provider", "project", "depends_on", "service", "slo_id", "display_name", "goal"),
            *("rolling_period_days", "calendar_period", "user_labels"),
            *("basic_sli", "request_based_sli", "windows_based_sli"),
        },
        "request_based_sli": {"good_total_ratio", "distribution_cut"},
        "request_based_sli.good_total_ratio": {"good_service_filter", "bad_service_filter", "total_service_filter"},
    },
}
