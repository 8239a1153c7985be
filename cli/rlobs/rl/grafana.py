"""Grafana dashboard JSON for the RL golden signals, from the catalog through naming (datasource uid `prometheus`)."""

from __future__ import annotations

import hashlib
from typing import Any

from rlobs.profile.model import Profile
from rlobs.rl import naming
from rlobs.rl.catalog import Catalog
from rlobs.rl.naming import Part, Pipeline
from rlobs.rl.panels import SECTIONS, panels

DATASOURCE = {"type": "prometheus", "uid": "prometheus"}
SCHEMA_VERSION = 39  # Grafana 10.4/11.x dashboards; kube-prometheus-stack 76 ships Grafana 12, which migrates it.
# Dashboard filters: template variable name -> catalog attribute key.
VARIABLES = (("run", "run_id"), ("algorithm", "algorithm"), ("environment", "environment"), ("model", "model"))
_UID_MAX = 40  # Grafana rejects longer dashboard uids


def dashboard_uid(profile: Profile) -> str:
    """Stable across renders; a short hash keeps long bundle names unique within 40 characters."""
    uid = f"rlobs-{profile.metadata.name}-rl"
    if len(uid) <= _UID_MAX:
        return uid
    digest = hashlib.sha256(profile.metadata.name.encode()).hexdigest()[:8]
    return f"rlobs-{profile.metadata.name[: _UID_MAX - 18]}-{digest}-rl"


def _variable(name: str, label: str, probe: str) -> dict[str, Any]:
    query = f"label_values({probe}, {label})"
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


def rl_dashboard(profile: Profile, catalog: Catalog, pipeline: Pipeline) -> dict[str, Any]:
    """The RL golden-signals dashboard (Grafana JSON model), datasource uid `prometheus`."""
    regex = {catalog.attribute(key).name: f"${name}" for name, key in VARIABLES}

    def sel(key: str, part: Part) -> str:
        return naming.selector(catalog.metric(key), pipeline, part, regex=regex)

    run_label = naming.label(catalog.attribute("run_id").name, pipeline)
    legend_run = "{{" + run_label + "}}"
    # Variables list values from the step counter: every run that trains has it.
    probe = naming.selector(catalog.metric("train_steps"), pipeline)
    variables = [
        _variable(name, naming.label_token(catalog.attribute(key).name, pipeline), probe) for name, key in VARIABLES
    ]

    items: list[dict[str, Any]] = []
    next_id = 1
    y = 0
    all_panels = panels(catalog, pipeline, sel, "$__rate_interval")
    for section in SECTIONS:
        items.append(
            {
                "id": next_id,
                "type": "row",
                "title": section,
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                "panels": [],
            }
        )
        next_id += 1
        y += 1
        for i, panel in enumerate(p for p in all_panels if p.section == section):
            items.append(
                {
                    "id": next_id,
                    "type": "timeseries",
                    "title": panel.title,
                    "description": panel.description,
                    "datasource": DATASOURCE,
                    "gridPos": {"h": 8, "w": 12, "x": 12 * (i % 2), "y": y + 8 * (i // 2)},
                    "fieldConfig": {"defaults": {"unit": panel.grafana_unit}, "overrides": []},
                    "options": {
                        "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                        "tooltip": {"mode": "multi", "sort": "desc"},
                    },
                    "targets": [
                        {
                            "refId": chr(ord("A") + j),
                            "datasource": DATASOURCE,
                            "expr": q.expr,
                            "legendFormat": q.legend.replace("{run}", legend_run),
                            "range": True,
                        }
                        for j, q in enumerate(panel.queries)
                    ],
                }
            )
            next_id += 1
        count = sum(1 for p in all_panels if p.section == section)
        y += 8 * ((count + 1) // 2)

    return {
        "uid": dashboard_uid(profile),
        "title": f"RL golden signals ({profile.metadata.name})",
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
        "links": [],
        "panels": items,
    }
