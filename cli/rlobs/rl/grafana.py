"""Grafana dashboards: the RL golden signals, and what every rlobs dashboard shares (datasource, uid rule, layout)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from rlobs.rl import naming, slos, tracker
from rlobs.rl.facts import RlFacts
from rlobs.rl.naming import Part
from rlobs.rl.panels import SECTIONS, panels, rows_height, two_per_row

# kube-prometheus-stack's default Prometheus datasource (grafana sidecar `datasources.uid`): the cluster's own.
DEFAULT_DATASOURCE_UID = "prometheus"
# Every panel and query variable reads the datasource the `cluster` variable picks: on one cluster only its own
# Prometheus (the default), on a fleet's central Grafana one datasource per cluster (eks.grafana.remotePrometheus).
CLUSTER_VARIABLE = "cluster"
DATASOURCE = {"type": "prometheus", "uid": "${" + CLUSTER_VARIABLE + "}"}
WIDTH = 24  # Grafana's grid is 24 columns wide
PANEL_HEIGHT = 8
SCHEMA_VERSION = 39  # Grafana 10.4/11.x dashboards; kube-prometheus-stack 76 ships Grafana 12, which migrates it.
# Dashboard filters: template variable name -> catalog attribute key.
VARIABLES = (("run", "run_id"), ("algorithm", "algorithm"), ("environment", "environment"), ("model", "model"))
_UID_MAX = 40  # Grafana rejects longer dashboard and datasource uids (pkg/util/shortid_generator.go MaxUIDLength)


def grafana_uid(uid: str) -> str:
    """`uid` within Grafana's 40 characters: a long one shortened with a hash, so it stays unique and stable."""
    if len(uid) <= _UID_MAX:
        return uid
    return f"{uid[: _UID_MAX - 9]}-{hashlib.sha256(uid.encode()).hexdigest()[:8]}"


def dashboard_uid(name: str, suffix: str) -> str:
    return grafana_uid(f"rlobs-{name}-{suffix}")


def row(panel_id: int, title: str, y: int) -> dict[str, Any]:
    return {
        "id": panel_id,
        "type": "row",
        "title": title,
        "collapsed": False,
        "gridPos": {"h": 1, "w": WIDTH, "x": 0, "y": y},
        "panels": [],
    }


def timeseries(
    panel_id: int,
    title: str,
    unit: str,
    targets: list[tuple[str, str]],
    at: tuple[int, int],
    description: str = "",
    links: list[dict[str, Any]] | None = None,
    *,
    stacked: bool = False,
) -> dict[str, Any]:
    panel: dict[str, Any] = {"id": panel_id, "type": "timeseries", "title": title}
    if description:
        panel["description"] = description
    defaults: dict[str, Any] = {"unit": unit, **({"links": links} if links else {})}
    if stacked:
        defaults["custom"] = {"stacking": {"mode": "normal", "group": "A"}, "fillOpacity": 60}
    return panel | {
        "datasource": DATASOURCE,
        "gridPos": {"h": PANEL_HEIGHT, "w": WIDTH // 2, "x": at[0], "y": at[1]},
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "targets": [
            {"refId": chr(ord("A") + j), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend, "range": True}
            for j, (expr, legend) in enumerate(targets)
        ],
    }


def cluster_variable() -> dict[str, Any]:
    """Its value is a datasource uid, not a name, since Grafana 10.3 (grafana/grafana#78949)."""
    return {
        "name": CLUSTER_VARIABLE,
        "label": "Cluster",
        "type": "datasource",
        "query": "prometheus",
        "regex": "",
        "refresh": 1,
        "includeAll": False,
        "multi": False,
        "current": {"selected": True, "text": "Prometheus", "value": DEFAULT_DATASOURCE_UID},
        "hide": 0,
        "options": [],
    }


def _variable(facts: RlFacts, name: str, key: str) -> dict[str, Any]:
    """A filter on catalog attribute `key`, listing the values the step counter has: every run that trains has it."""
    label = naming.label_token(facts.catalog.attribute(key).name, facts.pipeline)
    query = f"label_values({naming.selector(facts.catalog.metric('train_steps'), facts.pipeline)}, {label})"
    return {
        "name": name,
        "label": name.title(),
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"qryType": 1, "query": query, "refId": f"{name}-values"},
        "definition": query,
        "refresh": 2,  # on time range change: new runs appear without a reload
        "includeAll": True,
        "allValue": ".*",
        "multi": True,
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1,
        "hide": 0,
        "options": [],
    }


def _tracker_links(facts: RlFacts, run_label: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(data links on per-run series, dashboard links) to the tracker's run; MLflow: to the experiment."""
    found = tracker.links(facts.profile.workload.tracker)
    if found is None:
        return [], []
    # A dotted label needs the bracket form of Grafana's data-link variable (Grafana data-link variables docs).
    label = f'["{run_label}"]' if naming.dotted(facts.pipeline) else f".{run_label}"
    return [_data_link(*found.run("${__field.labels" + label + "}"))], [_board_link(*found.home)]


def _data_link(title: str, url: str) -> dict[str, Any]:
    return {"title": title, "url": url, "targetBlank": True}


def _board_link(title: str, url: str) -> dict[str, Any]:
    return {"title": title, "type": "link", "url": url, "targetBlank": True, "icon": "external link"}


@dataclass(frozen=True, slots=True)
class BoardLinks:
    """Tracker links for a board whose series carry no run label (Ray, GPU, engines): a `run` variable picks the run."""

    variables: tuple[dict[str, Any], ...]
    data: tuple[dict[str, Any], ...]  # on every time-series panel
    dashboard: tuple[dict[str, Any], ...]


# The variable the links of a BoardLinks dashboard read; percent-encoded in URLs (Grafana's :percentencode format),
# since a run id may hold `+` and `@`.
RUN_VARIABLE = "run"


def board_links(facts: RlFacts) -> BoardLinks:
    found = tracker.links(facts.profile.workload.tracker)
    if found is None:
        return BoardLinks((), (), ())
    if found.run_base is None:
        # MLflow: the experiment (its run ids are MLflow's own; the rl.loop span carries them).
        return BoardLinks((), (_data_link(*found.home),), (_board_link(*found.home),))
    variable = _variable(facts, RUN_VARIABLE, "run_id")
    # One run at a time: a link cannot point at "All".
    variable |= {"includeAll": False, "multi": False, "current": {}}
    del variable["allValue"]
    run = ("W&B run ${" + RUN_VARIABLE + "}", found.run_base + "${" + RUN_VARIABLE + ":percentencode}")
    return BoardLinks((variable,), (_data_link(*run),), (_board_link(*run), _board_link(*found.home)))


def rl_dashboard(facts: RlFacts) -> dict[str, Any]:
    catalog, pipeline = facts.catalog, facts.pipeline
    regex = {catalog.attribute(key).name: f"${name}" for name, key in VARIABLES}

    def sel(key: str, part: Part) -> str:
        return naming.selector(catalog.metric(key), pipeline, part, regex=regex)

    run_label = naming.label(catalog.attribute("run_id").name, pipeline)
    legend_run = "{{" + run_label + "}}"
    variables = [cluster_variable()] + [_variable(facts, name, key) for name, key in VARIABLES]

    run_links, dashboard_links = _tracker_links(facts, run_label)
    items: list[dict[str, Any]] = []
    y = 0
    all_panels = panels(catalog, pipeline, sel, "$__rate_interval")
    for section in SECTIONS:
        items.append(row(len(items) + 1, section, y))
        y += 1
        chosen = [p for p in all_panels if p.section == section]
        for i, panel in enumerate(chosen):
            targets = [(q.expr, q.legend.replace("{run}", legend_run)) for q in panel.queries]
            links = run_links if any("{run}" in q.legend for q in panel.queries) else None
            items.append(
                timeseries(
                    len(items) + 1,
                    panel.title,
                    panel.grafana_unit,
                    targets,
                    two_per_row(i, y, WIDTH // 2, PANEL_HEIGHT),
                    panel.description,
                    links,
                    stacked=panel.stacked,
                )
            )
        y += rows_height(len(chosen), PANEL_HEIGHT)
    budget = slos.budget_query(facts)
    if budget:
        items.append(row(len(items) + 1, "Error budget", y))
        what = "Share of each SLO's error budget left over its period (negative once overspent)."
        legend = "{{" + slos.SLO_LABEL + "}}"
        items.append(timeseries(len(items) + 1, slos.BUDGET_TITLE, "percentunit", [(budget, legend)], (0, y + 1), what))

    return {
        "uid": dashboard_uid(facts.name, "rl"),
        "title": f"RL golden signals ({facts.name})",
        "description": "RL loop latency, throughput, training health and saturation from the rlobs signal catalog.",
        "tags": ["rlobs", "rl"],
        "timezone": "browser",
        "editable": True,
        "graphTooltip": 1,
        "refresh": "30s",
        "schemaVersion": SCHEMA_VERSION,
        "version": 1,
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": variables},
        "annotations": {"list": []},
        "links": dashboard_links,
        "panels": items,
    }
