"""Where a Kubernetes minor version stands on a day on EKS or GKE, by their calendars (tools/kube_versions.py pins)."""

from __future__ import annotations

import os
from datetime import date

from rlobs.errors import RlobsError
from rlobs.profile.regions import pinned

# The day versions are judged on: today, or this ISO date (tests fix it; a user can ask about a future apply).
TODAY_ENV = "RLOBS_TODAY"
_NAMES = {"eks": "EKS", "gke": "GKE"}
# Whether a version without an end of extended support stays supported past standard support: the GKE schedule
# publishes no such date (the Extended channel keeps a version longer); an EKS version without one had none.
_OPEN_ENDED = {"eks": False, "gke": True}


def today() -> date:
    fixed = os.environ.get(TODAY_ENV)
    try:
        return date.fromisoformat(fixed) if fixed else date.today()
    except ValueError:  # an environment value is the user's input too: one line, not a traceback
        raise RlobsError(f"{TODAY_ENV}: expected a date like 2026-12-03, got {str(fixed)[:40]!r}") from None


def unsupported(provider: str, version: str, on: date) -> str | None:
    """Why `version` cannot be used on `provider` on day `on` (not released, or past all support), or None."""
    table = pinned("kubernetes_versions.json")
    window = table[provider]["versions"].get(version)
    name, as_of = _NAMES[provider], table["source"]["date"]
    if window is None or date.fromisoformat(window["released"]) > on:
        versions = table[provider]["versions"].items()
        offered = sorted(
            (v for v, w in versions if _end(provider, w) >= on >= date.fromisoformat(w["released"])),
            key=lambda v: int(v.split(".")[1]),
        )
        span = f"{offered[0]} to {offered[-1]}" if offered else "none"
        return (
            f"expected a Kubernetes version {name} offers on {on} ({span}, by its release calendar as of {as_of}), "
            f"got {version}, which {name} has not released"
        )
    if (end := _end(provider, window)) < on:
        return f"expected a Kubernetes version {name} supports on {on}, got {version}: its support ended on {end}"
    return None


def past_standard(provider: str, version: str, on: date) -> str | None:
    window = pinned("kubernetes_versions.json")[provider]["versions"].get(version)
    if window is None or unsupported(provider, version, on) or date.fromisoformat(window["endOfStandardSupport"]) >= on:
        return None
    name = _NAMES[provider]
    extended = window["endOfExtendedSupport"]
    until = f"until {extended}" if extended else "for a limited time"
    return (
        f"expected a Kubernetes version in {name} standard support on {on}, got {version}: its standard support "
        f"ended on {window['endOfStandardSupport']}; {name} extended support (billed extra) runs {until}"
    )


def _end(provider: str, window: dict[str, str]) -> date:
    if window["endOfExtendedSupport"]:
        return date.fromisoformat(window["endOfExtendedSupport"])
    return date.max if _OPEN_ENDED[provider] else date.fromisoformat(window["endOfStandardSupport"])
