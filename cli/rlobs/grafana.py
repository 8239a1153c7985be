"""Grafana dashboard JSON for the RL golden signals (STUB: replaced by the signal-catalog work)."""

from __future__ import annotations

from typing import Any

from rlobs.catalog import Catalog
from rlobs.model import Profile
from rlobs.naming import Pipeline


def rl_dashboard(profile: Profile, catalog: Catalog, pipeline: Pipeline) -> dict[str, Any]:
    """The RL golden-signals dashboard (Grafana JSON model), datasource uid `prometheus`."""
    return {"uid": f"rlobs-{profile.metadata.name}", "title": f"RL golden signals ({profile.metadata.name})", "panels": []}
