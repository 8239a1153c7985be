"""Cloud Monitoring dashboard and alert-policy JSON for the RL golden signals (PromQL through naming)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rlobs.errors import RlobsError
from rlobs.profile.fields import duration_seconds
from rlobs.rl import naming, tracker
from rlobs.rl.alerts import RUNBOOK_PATH
from rlobs.rl.facts import RlFacts
from rlobs.rl.naming import Part
from rlobs.rl.panels import SECTIONS, panels, rows_height, two_per_row
from rlobs.targets.gke.profile import DashboardFilter, FilterType

COLUMNS = 48  # MosaicLayout allows 1..48 (monitoring v1 discovery)
# Dashboard filters (catalog attribute keys), pinned and without template variables, the form Google's RL dashboard
# uses on the same dotted keys (monitoring-dashboard-samples reinforcement-learning/rl-workload-performance.json:
# METRIC_LABEL, no templateVariable). DashboardFilter.templateVariable: "If omitted, the dashboard filter will be
# applied to all relevant widgets in the dashboard" (monitoring v1 discovery), i.e. every widget whose data has the
# label and whose query does not fix it (https://cloud.google.com/monitoring/dashboards/filter-permanent), so the
# queries carry no `${Var}`: none of Google's samples expands a template variable on a dotted key. No valueType:
# unset means unspecified, and google-cloud-monitoring-dashboards 3.2.0 does not know the field yet.
FILTERS = ("run_id", "algorithm", "environment", "model", "system", "system_version")
# gke.dashboardFilters[].type -> DashboardFilter.filterType (monitoring v1 discovery, revision 20260903).
FILTER_TYPES: dict[FilterType, str] = {
    "metric": "METRIC_LABEL",
    "resource": "RESOURCE_LABEL",
    "user-metadata": "USER_METADATA_LABEL",
    "system-metadata": "SYSTEM_METADATA_LABEL",
}
RATE_WINDOW = "5m"  # fixed: Cloud Monitoring charts step at >= 60s, so rate() always sees several samples
EVALUATION_INTERVAL = "60s"  # a positive multiple of 30s (AlertPolicy PrometheusQueryLanguageCondition)
AUTO_CLOSE = "1800s"
DOC_LIMIT = 8192  # AlertPolicy.Documentation.content, characters
# model.Severity -> AlertPolicy.Severity (which has no INFO).
SEVERITIES = {"critical": "CRITICAL", "warning": "WARNING", "info": "WARNING"}
# User label on every dashboard and alert policy of a bundle (value: metadata.name, a DNS label, so a valid label
# value): step 4 deletes the labelled ones the bundle no longer has. Dashboard.labels and AlertPolicy.userLabels are
# both string maps (monitoring v1 and v3 discovery).
BUNDLE_LABEL = "rlobs_bundle"
TILE_HEIGHT = 16
_PLAIN_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def _tile(x: int, y: int, width: int, height: int, widget: dict[str, Any]) -> dict[str, Any]:
    """The API omits zero fields, so an explicit `xPos: 0` is a permanent diff (terraform-provider-google#24650)."""
    position = {k: v for k, v in (("xPos", x), ("yPos", y)) if v}
    return {**position, "width": width, "height": height, "widget": widget}


def _legend(template: str, run_label: str) -> str:
    """`${metric.labels.KEY}` is documented for plain keys only: a dotted run key stays out (the run filter splits)."""
    run = "${metric.labels." + run_label + "}" if _PLAIN_LABEL.fullmatch(run_label) else ""
    return template.replace("{run}", run).strip()


Series = tuple[dict[str, Any], str, str]  # an XyChart data set's query, unit and legend ("": none)


def xy_chart(unit: str, series: list[Series], *, stacked: bool = False) -> dict[str, Any]:
    """Series in the chart's unit on Y1, those in its one other unit (rl.panels has no more) on Y2, labelled with it."""
    others = sorted({u for _, u, _ in series if u != unit})
    data_sets = [
        {
            "timeSeriesQuery": {**query, "unitOverride": u},
            "plotType": "STACKED_AREA" if stacked else "LINE",
            "targetAxis": "Y1" if u == unit else "Y2",
            "minAlignmentPeriod": "60s",
            **({"legendTemplate": legend} if legend else {}),
        }
        for query, u, legend in series
    ]
    y2 = {"y2Axis": {"label": others[0], "scale": "LINEAR"}} if others else {}
    return {"dataSets": data_sets, "yAxis": {"label": unit, "scale": "LINEAR"}, **y2, "chartOptions": {"mode": "COLOR"}}


def dashboard(
    facts: RlFacts,
    user_labels: Mapping[str, str] | None = None,
    extra: Sequence[DashboardFilter] = (),
    clusters: Sequence[str] = (),
) -> dict[str, Any]:
    """`clusters`: one dashboard over these clusters (a fleet's per-project view), with a `cluster` filter first."""
    catalog, pipeline = facts.catalog, facts.pipeline
    run_label = naming.label(catalog.attribute("run_id").name, pipeline)
    # Every query names the bundle's workload, as its alert policies do: a project holds every bundle's series.
    matchers, regex = dict(facts.scope), {}
    if clusters:
        matchers.pop("cluster", None)
        regex = {"cluster": "|".join(sorted(set(clusters)))}  # cluster names are DNS labels: no regex syntax
    by_cluster = [{"filterType": "METRIC_LABEL", "labelKey": "cluster"}] if clusters else []
    filters = by_cluster + _filters(facts, extra)
    # A pinned filter narrows a widget only where the widget's data has the label (filter-permanent), so every
    # aggregation keeps the filtered labels beside the run's; the rl.* ones are constant over a run (no extra series).
    keep = [
        naming.label_token(f["labelKey"], pipeline)
        for f in filters
        if f["filterType"] in _IN_QUERY and f["labelKey"] != run_label
    ]

    def sel(key: str, part: Part) -> str:
        return naming.selector(catalog.metric(key), pipeline, part, matchers, regex=regex)

    tiles: list[dict[str, Any]] = []
    y = 0
    all_panels = panels(catalog, pipeline, sel, RATE_WINDOW, keep)
    for section in SECTIONS:
        tiles.append(_tile(0, y, COLUMNS, 4, {"title": section, "sectionHeader": {"dividerBelow": True}}))
        y += 4
        chosen = [p for p in all_panels if p.section == section]
        for i, panel in enumerate(chosen):
            x, top = two_per_row(i, y, COLUMNS // 2, TILE_HEIGHT)
            series = [
                ({"prometheusQuery": q.expr}, q.unit or panel.unit, _legend(q.legend, run_label)) for q in panel.queries
            ]
            widget = {"title": panel.title, "xyChart": xy_chart(panel.unit, series, stacked=panel.stacked)}
            tiles.append(_tile(x, top, COLUMNS // 2, TILE_HEIGHT, widget))
        y += rows_height(len(chosen), TILE_HEIGHT)
    links = tracker.policy_links(facts.profile)
    if links:
        # Dashboards have no per-series link field (monitoring v1 XyChart, Text): one Markdown tile links the run.
        content = " · ".join(f"[{link['displayName']}]({link['url']})" for link in links)
        tiles.append(
            _tile(0, y, COLUMNS, 4, {"title": "Experiment tracker", "text": {"content": content, "format": "MARKDOWN"}})
        )
    return {
        "displayName": f"RL golden signals ({facts.name})",
        "labels": {**(user_labels or {}), "rlobs": "", BUNDLE_LABEL: facts.name},
        "dashboardFilters": filters,
        "mosaicLayout": {"columns": COLUMNS, "tiles": tiles},
    }


# Filter types whose label a PromQL series carries (metric labels and prometheus_target's resource labels); metadata
# labels are not PromQL labels.
_IN_QUERY = ("METRIC_LABEL", "RESOURCE_LABEL")


def _filters(facts: RlFacts, extra: Sequence[DashboardFilter]) -> list[dict[str, Any]]:
    own = [naming.label(facts.catalog.attribute(key).name, facts.pipeline) for key in FILTERS]
    filters: list[dict[str, Any]] = [{"filterType": "METRIC_LABEL", "labelKey": label} for label in own]
    for i, f in enumerate(extra):
        if f.type == "metric" and f.label in own:
            raise RlobsError(
                f"gke.dashboardFilters[{i}].label: expected a label rlobs does not filter on already "
                f"({', '.join(own)}), got {f.label!r}"
            )
        if FILTER_TYPES[f.type] in _IN_QUERY and f.label in facts.scope:
            # The queries fix it to the bundle's workload, and a pinned filter never overrides a query's own value.
            raise RlobsError(
                f"gke.dashboardFilters[{i}].label: expected a label the dashboard does not fix to the bundle's "
                f"workload ({', '.join(facts.scope)}), got {f.label!r}"
            )
        value = {"stringValue": f.value} if f.value is not None else {}
        filters.append({"filterType": FILTER_TYPES[f.type], "labelKey": f.label, **value})
    return filters


def kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name).lower()


def promql_condition(
    display_name: str, query: str, duration: str, rule: str, group: str, labels: Mapping[str, str]
) -> dict[str, Any]:
    return {
        "displayName": display_name,
        "conditionPrometheusQueryLanguage": {
            "query": query,
            "duration": duration,
            "evaluationInterval": EVALUATION_INTERVAL,
            "alertRule": rule,
            "ruleGroup": group,
            # The series may not exist before the first run reports; accept the policy anyway.
            "disableMetricValidation": True,
            "labels": dict(labels),
        },
    }


def alert_policy(
    title: str,
    bundle: str,
    user_labels: Mapping[str, str] | None,
    rl_alert: str,
    content: str,
    doc: dict[str, Any],
    conditions: list[dict[str, Any]],
    channels: Callable[[str], list[str]],
    severity: str,
    combiner: str = "OR",
) -> dict[str, Any]:
    return {
        "displayName": f"{title} ({bundle})",
        "documentation": {"content": content, "mimeType": "text/markdown", **doc},
        "userLabels": {**(user_labels or {}), BUNDLE_LABEL: bundle, "rl_alert": rl_alert},
        "conditions": conditions,
        "combiner": combiner,
        "enabled": True,
        "alertStrategy": {"autoClose": AUTO_CLOSE},
        "severity": SEVERITIES[severity],
        "notificationChannels": channels(severity),
    }


def alert_policies(
    facts: RlFacts, channels: Callable[[str], list[str]], user_labels: Mapping[str, str] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """(file stem, AlertPolicy (monitoring v3)) for each RL alert."""
    run = f"`<{naming.label(facts.catalog.attribute('run_id').name, facts.pipeline)}>`"  # the incident's label
    name = facts.name
    found = []
    links = tracker.policy_links(facts.profile)
    # Cloud Monitoring cannot template a dotted PromQL label into the subject; name the workload instead, with the
    # cluster and namespace it runs in (the query is scoped to exactly that workload).
    where = facts.alert_labels
    runs = f"of {where.get('cluster', '')}/{where['namespace']}/{where['workload']}".replace("of /", "of ")
    for a in facts.alerts:
        content = (
            f"## {a.name}\n\n{a.text(a.description, run)}\n\n**What to do.** {a.runbook}\n\n"
            f"Runbook: `{RUNBOOK_PATH}#{a.anchor}` in the rlobs bundle `{name}`. Query:\n\n```promql\n{a.expr}\n```"
        )
        if len(content) > DOC_LIMIT:
            # The documentation holds at most 8192 characters (AlertPolicy.Documentation.content); the query is
            # the condition's own, and the runbook shows it too.
            content = content[: content.rindex("Query:")] + "The query is the condition's (and the runbook's)."
        summary = a.text(a.summary, runs)
        doc = {"subject": summary[:255], **({"links": links} if links else {})}
        # Incident labels: which bundle, cluster, namespace and workload (the run is the query's).
        condition = promql_condition(summary, a.expr, f"{duration_seconds(a.for_)}s", a.name, f"rlobs-{name}", where)
        policy = alert_policy(a.name, name, user_labels, kebab(a.name), content, doc, [condition], channels, a.severity)
        found.append((f"{name}-{kebab(a.name)}", policy))
    return found
