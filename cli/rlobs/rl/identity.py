"""The run identity every metric point and span carries, and the env that sets it and the export interval."""

from __future__ import annotations

from typing import Any

from rlobs.profile.model import ProfileBase, Workload
from rlobs.rl.catalog import Catalog


def identity_env(key: str) -> str:
    """The environment variable that overrides an identity attribute in the app (run_id -> RL_RUN_ID)."""
    return "RL_" + key.upper()


def identity_values(profile: ProfileBase, catalog: Catalog) -> dict[str, str | None]:
    """Identity attribute name -> the profile's value (None where the profile leaves it unset)."""
    run = profile.workload.run
    by_key: dict[str, str | None] = {
        "system": run.system,
        "system_version": run.system_version,
        "run_id": profile.workload.run_id,
        "algorithm": run.algorithm,
        "environment": run.environment,
        "model": run.model,
    }
    return {a.name: by_key.get(a.key) for a in catalog.identity}


def rl_env(profile: ProfileBase, catalog: Catalog) -> list[dict[str, str]]:
    """The RL container's RL_* env: the run identity the app module reads, for the attributes the profile sets."""
    values = identity_values(profile, catalog)
    return [
        {"name": identity_env(a.key), "value": value} for a in catalog.identity if (value := values[a.name]) is not None
    ]


def identity_rows(profile: ProfileBase, catalog: Catalog) -> list[dict[str, Any]]:
    """attribute name, its RL_* variable and the profile's default, for the app module and the docs."""
    values = identity_values(profile, catalog)
    return [{"name": a.name, "env": identity_env(a.key), "default": values[a.name]} for a in catalog.identity]


def export_interval_env(workload: Workload) -> dict[str, str]:
    """OTEL_METRIC_EXPORT_INTERVAL (ms), the SDK's periodic reader interval."""
    return {"name": "OTEL_METRIC_EXPORT_INTERVAL", "value": str(workload.export_interval_ms)}
