"""PrometheusRule groups and promtool unit tests for the RL alerts (STUB: replaced by the signal-catalog work)."""

from __future__ import annotations

from typing import Any

from rlobs.catalog import Catalog
from rlobs.model import Profile
from rlobs.naming import Pipeline


def rule_groups(profile: Profile, catalog: Catalog, pipeline: Pipeline) -> list[dict[str, Any]]:
    """The `spec.groups` of the RL PrometheusRule (recording rules and alerts)."""
    return [{"name": f"rlobs-{profile.metadata.name}.rules", "rules": []}]
