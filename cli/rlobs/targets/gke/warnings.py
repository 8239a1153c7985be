"""What a gke profile is warned about (rlobs.profile.warnings locates and prints it): policies that notify nobody."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rlobs.profile.yamlsource import Path, get_at


def warnings(data: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    if get_at(data, ("alerts", "enabled")) is not False and not get_at(data, ("gke", "notificationChannels")):
        yield (
            ("gke", "notificationChannels"),
            "expected a notification channel, got none: every alert policy fires but notifies nobody (add one, or "
            "set alerts.enabled: false)",
        )
