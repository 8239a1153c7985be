"""Cloud Monitoring dashboard and alert-policy JSON for the RL golden signals (STUB: see the signal catalog work)."""

from __future__ import annotations

from typing import Any

from rlobs.catalog import Catalog
from rlobs.model import Profile


def dashboard(profile: Profile, catalog: Catalog) -> dict[str, Any]:
    """A Cloud Monitoring Dashboard (monitoring v1) with PromQL tiles and dashboard filters."""
    return {"displayName": f"RL golden signals ({profile.metadata.name})", "mosaicLayout": {"columns": 48, "tiles": []}}


def alert_policies(profile: Profile, catalog: Catalog) -> list[tuple[str, dict[str, Any]]]:
    """(file stem, AlertPolicy (monitoring v3)) for each RL alert."""
    return []
