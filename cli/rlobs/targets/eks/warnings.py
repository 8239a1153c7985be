"""What an eks profile is warned about (rlobs.profile.warnings locates and prints it): RL alerts no receiver gets,
and a GitOps repository whose web links rlobs does not know."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rlobs.profile.gitweb import link_problem
from rlobs.profile.yamlsource import Path, get_at


def warnings(data: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    # Alerts that fire but notify nobody: no receiver gets the RL alerts.
    if get_at(data, ("alerts", "enabled")) is not False:
        receivers = get_at(data, ("eks", "alertmanagerReceivers")) or []
        if not any(isinstance(r, dict) and r.get("alerts", "rl") in ("rl", "all") for r in receivers):
            yield (
                ("eks", "alertmanagerReceivers"),
                "expected a receiver for the RL alerts (alerts: rl or all), got none: the RL alerts fire but notify "
                "nobody (add one, or set alerts.enabled: false)",
            )
    # A GitOps repository on a host whose web links rlobs does not know: the alerts' runbook links may not open.
    path = ("eks", "gitops", "repoUrl")
    url = get_at(data, path)
    if isinstance(url, str) and (problem := link_problem(url)) is not None:
        yield path, problem
