"""Cloud Monitoring dashboard and alert-policy JSON for the RL golden signals (PromQL through naming)."""

from __future__ import annotations

import re
from typing import Any

from rlobs.profile.fields import duration_seconds
from rlobs.profile.model import Profile
from rlobs.rl import naming
from rlobs.rl.alerts import RUNBOOK_PATH, alerts
from rlobs.rl.catalog import Catalog
from rlobs.rl.naming import Part
from rlobs.rl.panels import SECTIONS, panels

COLUMNS = 48  # MosaicLayout allows 1..48 (monitoring v1 discovery)
# Dashboard filters: template variable -> catalog attribute key. PromQL tiles reference ${Var}, which Cloud Monitoring
# expands to a `label="value"` matcher (GoogleCloudPlatform/monitoring-dashboard-samples, Argo Workflows dashboard).
FILTERS = (("RunId", "run_id"), ("Algorithm", "algorithm"), ("Environment", "environment"), ("Model", "model"))
RATE_WINDOW = "5m"  # fixed: Cloud Monitoring charts step at >= 60s, so rate() always sees several samples
EVALUATION_INTERVAL = "60s"  # a positive multiple of 30s (AlertPolicy PrometheusQueryLanguageCondition)
AUTO_CLOSE = "1800s"
# model.Severity -> AlertPolicy.Severity (which has no INFO).
SEVERITIES = {"critical": "CRITICAL", "warning": "WARNING", "info": "WARNING"}


def display_name(profile: Profile) -> str:
    return f"RL golden signals ({profile.metadata.name})"


def dashboard(profile: Profile, catalog: Catalog) -> dict[str, Any]:
    """A Cloud Monitoring Dashboard (monitoring v1) with PromQL tiles and dashboard filters."""
    pipeline = naming.pipeline_for(profile)
    raw = ["${" + var + "}" for var, _ in FILTERS]

    def sel(key: str, part: Part) -> str:
        return naming.selector(catalog.metric(key), pipeline, part, raw=raw)

    tiles: list[dict[str, Any]] = []
    y = 0
    all_panels = panels(catalog, pipeline, sel, RATE_WINDOW)
    for section in SECTIONS:
        tiles.append(
            {
                "xPos": 0,
                "yPos": y,
                "width": COLUMNS,
                "height": 4,
                "widget": {"title": section, "sectionHeader": {"dividerBelow": True}},
            }
        )
        y += 4
        chosen = [p for p in all_panels if p.section == section]
        for i, panel in enumerate(chosen):
            tiles.append(
                {
                    "xPos": (COLUMNS // 2) * (i % 2),
                    "yPos": y + 16 * (i // 2),
                    "width": COLUMNS // 2,
                    "height": 16,
                    "widget": {
                        "title": panel.title,
                        "xyChart": {
                            "dataSets": [
                                {
                                    "timeSeriesQuery": {"prometheusQuery": q.expr, "unitOverride": panel.unit},
                                    "plotType": "LINE",
                                    "targetAxis": "Y1",
                                    "minAlignmentPeriod": "60s",
                                }
                                for q in panel.queries
                            ],
                            "yAxis": {"label": panel.unit, "scale": "LINEAR"},
                            "chartOptions": {"mode": "COLOR"},
                        },
                    },
                }
            )
        y += 16 * ((len(chosen) + 1) // 2)
    return {
        "displayName": display_name(profile),
        "labels": {"rlobs": ""},
        "dashboardFilters": [
            {
                "filterType": "METRIC_LABEL",
                "labelKey": naming.label(catalog.attribute(key).name, pipeline),
                "templateVariable": var,
            }
            for var, key in FILTERS
        ],
        "mosaicLayout": {"columns": COLUMNS, "tiles": tiles},
    }


def _kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name).lower()


def alert_policies(profile: Profile, catalog: Catalog) -> list[tuple[str, dict[str, Any]]]:
    """(file stem, AlertPolicy (monitoring v3)) for each RL alert."""
    pipeline = naming.pipeline_for(profile)
    run_label = naming.label(catalog.attribute("run_id").name, pipeline)
    channels = list(profile.gke.notification_channels) if profile.gke is not None else []
    name = profile.metadata.name
    found = []
    for a in alerts(profile, catalog, pipeline):
        run = f"`<{run_label}>`"  # the incident's label
        content = "\n".join(
            [
                f"## {a.name}",
                "",
                a.text(a.description, run),
                "",
                f"**What to do.** {a.runbook}",
                "",
                f"Runbook: `{RUNBOOK_PATH}#{a.anchor}` in the rlobs bundle `{name}`. Query:",
                "",
                "```promql",
                a.expr,
                "```",
            ]
        )
        # Cloud Monitoring cannot template a dotted PromQL label into the subject; name the workload instead.
        runs = f"of {profile.workload.name}"
        policy = {
            "displayName": f"{a.name} ({name})",
            "documentation": {
                "content": content,
                "mimeType": "text/markdown",
                "subject": a.text(a.summary, runs)[:255],
            },
            "userLabels": {"rlobs_bundle": name, "rl_alert": _kebab(a.name)},
            "conditions": [
                {
                    "displayName": a.text(a.summary, runs),
                    "conditionPrometheusQueryLanguage": {
                        "query": a.expr,
                        "duration": f"{duration_seconds(a.for_)}s",
                        "evaluationInterval": EVALUATION_INTERVAL,
                        "alertRule": a.name,
                        "ruleGroup": f"rlobs-{name}",
                        # The series may not exist before the first run reports; accept the policy anyway.
                        "disableMetricValidation": True,
                    },
                }
            ],
            "combiner": "OR",
            "enabled": True,
            "alertStrategy": {"autoClose": AUTO_CLOSE},
            "severity": SEVERITIES[a.severity],
            "notificationChannels": channels,
        }
        found.append((f"{name}-{_kebab(a.name)}", policy))
    return found
