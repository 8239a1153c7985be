"""Cloud Monitoring dashboard and alert-policy JSON for the RL golden signals (PromQL through naming)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rlobs.profile.fields import duration_seconds
from rlobs.rl import naming
from rlobs.rl.alerts import RUNBOOK_PATH
from rlobs.rl.facts import RlFacts
from rlobs.rl.naming import Part
from rlobs.rl.panels import SECTIONS, panels, rows_height, two_per_row

COLUMNS = 48  # MosaicLayout allows 1..48 (monitoring v1 discovery)
# Dashboard filters: template variable -> catalog attribute key. PromQL tiles reference ${Var}, which Cloud Monitoring
# expands to a `label="value"` matcher (GoogleCloudPlatform/monitoring-dashboard-samples, Argo Workflows dashboard).
FILTERS = (("RunId", "run_id"), ("Algorithm", "algorithm"), ("Environment", "environment"), ("Model", "model"))
RATE_WINDOW = "5m"  # fixed: Cloud Monitoring charts step at >= 60s, so rate() always sees several samples
EVALUATION_INTERVAL = "60s"  # a positive multiple of 30s (AlertPolicy PrometheusQueryLanguageCondition)
AUTO_CLOSE = "1800s"
# model.Severity -> AlertPolicy.Severity (which has no INFO).
SEVERITIES = {"critical": "CRITICAL", "warning": "WARNING", "info": "WARNING"}
# User label on every dashboard and alert policy of a bundle (value: metadata.name, a DNS label, so a valid label
# value): step 4 deletes the labelled ones the bundle no longer has. Dashboard.labels and AlertPolicy.userLabels are
# both string maps (monitoring v1 and v3 discovery).
BUNDLE_LABEL = "rlobs_bundle"
TILE_HEIGHT = 16


def display_name(name: str) -> str:
    return f"RL golden signals ({name})"


def dashboard(facts: RlFacts) -> dict[str, Any]:
    """A Cloud Monitoring Dashboard (monitoring v1) with PromQL tiles and dashboard filters."""
    catalog, pipeline = facts.catalog, facts.pipeline
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
            x, top = two_per_row(i, y, COLUMNS // 2, TILE_HEIGHT)
            tiles.append(
                {
                    "xPos": x,
                    "yPos": top,
                    "width": COLUMNS // 2,
                    "height": TILE_HEIGHT,
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
        y += rows_height(len(chosen), TILE_HEIGHT)
    return {
        "displayName": display_name(facts.name),
        "labels": {"rlobs": "", BUNDLE_LABEL: facts.name},
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


def alert_policies(facts: RlFacts, channels: Callable[[str], list[str]]) -> list[tuple[str, dict[str, Any]]]:
    """(file stem, AlertPolicy (monitoring v3)) for each RL alert, notifying `channels(severity)`."""
    run_label = naming.label(facts.catalog.attribute("run_id").name, facts.pipeline)
    name = facts.name
    found = []
    for a in facts.alerts:
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
        # Cloud Monitoring cannot template a dotted PromQL label into the subject; name the workload instead, with
        # the cluster and namespace it runs in (the query is scoped to exactly that workload).
        where = facts.alert_labels
        runs = f"of {where.get('cluster', '')}/{where['namespace']}/{where['workload']}".replace("of /", "of ")
        policy = {
            "displayName": f"{a.name} ({name})",
            "documentation": {
                "content": content,
                "mimeType": "text/markdown",
                "subject": a.text(a.summary, runs)[:255],
            },
            "userLabels": {BUNDLE_LABEL: name, "rl_alert": _kebab(a.name)},
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
                        # Incident labels: which bundle, cluster, namespace and workload (the run is the query's).
                        "labels": dict(facts.alert_labels),
                    },
                }
            ],
            "combiner": "OR",
            "enabled": True,
            "alertStrategy": {"autoClose": AUTO_CLOSE},
            "severity": SEVERITIES[a.severity],
            "notificationChannels": channels(a.severity),
        }
        found.append((f"{name}-{_kebab(a.name)}", policy))
    return found
