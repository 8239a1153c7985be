"""The google-beta provider's diff rule for google_monitoring_dashboard.dashboard_json, ported line by line from
resource_monitoring_dashboard.go (removeComputedKeys and monitoringDashboardDiffSuppress; unchanged from 7.17.0 to
HEAD): keys the API returns that the config lacks are ignored, everything else must be equal, so a key the config
has and the API drops (a zero value, say) is a diff on every plan."""

from __future__ import annotations

import copy
from typing import Any


def remove_computed_keys(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    for k in list(old):
        v = old[k]
        if new.get(k) is None:
            del old[k]
            continue
        if isinstance(v, dict):
            old[k] = remove_computed_keys(v, new[k])
            continue
        if isinstance(v, list):
            for i, j in enumerate(v):
                if isinstance(j, dict) and len(new[k]) > i:
                    v[i] = remove_computed_keys(j, new[k][i])
    return old


def plan_is_empty(api: dict[str, Any], config: dict[str, Any]) -> bool:
    """True when `terraform plan` shows no change for a dashboard the API returns as `api`."""
    return remove_computed_keys(copy.deepcopy(api), config) == config
