"""What an eks profile is warned about (rlobs.profile.warnings locates and prints it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rlobs.profile.gitweb import link_problem
from rlobs.profile.kube_versions import past_standard, today
from rlobs.profile.yamlsource import Path, get_at
from rlobs.targets.eks.profile import DEFAULT_KUBERNETES_VERSION


def warnings(data: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    # A Kubernetes version past standard support: extended support is billed per cluster hour on top.
    path: Path = ("eks", "cluster", "kubernetesVersion")
    version = get_at(data, path)
    unset = version is None
    if unset:
        version, path = DEFAULT_KUBERNETES_VERSION, path[:2]
    if isinstance(version, str) and (late := past_standard("eks", version, today())):
        yield path, late + (" (kubernetesVersion is unset: that is its default)" if unset else "")
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
