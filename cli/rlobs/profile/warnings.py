"""Warnings, not errors: a valid profile that still carries a shipped blueprint's placeholder, or alerts that notify
nobody. Pure: parsed data with its positions in, located warnings out (validate and render print them, exit 0)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from rlobs.errors import Problem
from rlobs.profile.gitweb import link_problem
from rlobs.profile.source import read_source
from rlobs.profile.yamlsource import Located, Path, YamlSyntaxError, get_at, load_located, load_yaml
from rlobs.resources import package_dir

if TYPE_CHECKING:
    from pathlib import Path as FsPath

# Keys whose value in a shipped blueprint stands for the user's own, and what the user's own is. The placeholder
# values themselves are read from the blueprints (placeholders()), so a blueprint that changes its example changes
# what is warned about; the fleet file's repository key is included for the starter fleet.
PLACEHOLDER_KEYS: dict[Path, str] = {
    ("eks", "gitops", "repoUrl"): "your own GitOps repository (Argo CD syncs the bundle from it)",
    ("gitops", "repoUrl"): "your own GitOps repository (Argo CD syncs the bundle from it)",
    ("gke", "project"): "your own GCP project ID",
}

# A repository URL's owner/name part (https://github.com/acme/gitops.git, git@github.com:acme/gitops.git): the
# placeholder whatever form or host the URL is written in.
_REPO_PATH = re.compile(r"^(?:[a-z+]+://)?(?:[^@/]+@)?[^/:]+[:/](?P<path>.+?)(?:\.git)?/?$")


@cache
def placeholders() -> dict[str, str]:
    """placeholder text -> what the user's own value is, from every shipped blueprint (starter fleet included)."""
    found: dict[str, str] = {}
    folder = package_dir("blueprints")
    for entry in sorted([*folder.iterdir(), *(folder / "fleet").iterdir()], key=lambda e: e.name):
        if not entry.name.endswith(".yaml"):
            continue
        data = load_yaml(entry.read_text(encoding="utf-8"))
        for path, own in PLACEHOLDER_KEYS.items():
            value = get_at(data, path)
            if isinstance(value, str) and value:
                found[value] = own
                repo = _REPO_PATH.match(value) if path[-1] == "repoUrl" else None
                if repo is not None:
                    found[repo["path"]] = own
    return found


def load_warnings(path: FsPath) -> list[Problem]:
    """The warnings for the profile file at `path`; none when it does not even parse (loading reports that)."""
    try:
        located = load_located(read_source(path).decode("utf-8"))
    except (OSError, ValueError, YamlSyntaxError):
        return []
    return find(located, str(path))


def find(located: Located, display: str) -> list[Problem]:
    """Every warning for one parsed profile (or fleet file), in file order."""
    found = [
        _at(located, display, path, f"expected {own}, got the blueprint's placeholder {text!r}")
        for path, text, own in _placeholders_in(located.data)
    ]
    found += [_at(located, display, path, message) for path, message in _unrouted(located.data)]
    found += [_at(located, display, path, message) for path, message in _unlinked(located.data)]
    found.sort(key=lambda p: (p.line, p.column, p.path))
    return found


def _placeholders_in(data: Any) -> Iterator[tuple[Path, str, str]]:
    """(path, placeholder, what to use instead) of every string value that is or contains a placeholder."""
    known = placeholders()
    for path, value in _strings(data, ()):
        hit = next((p for p in sorted(known, key=len, reverse=True) if p in value), None)
        if hit is not None:
            yield path, hit, known[hit]


def _unrouted(data: Any) -> Iterator[tuple[Path, str]]:
    """Alerts that fire but notify nobody: no receiver (eks) or notification channel (gke) gets the RL alerts."""
    if not isinstance(data, dict) or get_at(data, ("alerts", "enabled")) is False:
        return
    target = data.get("target")
    if target == "eks":
        receivers = get_at(data, ("eks", "alertmanagerReceivers")) or []
        routed = [r for r in receivers if isinstance(r, dict) and r.get("alerts", "rl") in ("rl", "all")]
        if not routed:
            yield (
                ("eks", "alertmanagerReceivers"),
                "expected a receiver for the RL alerts (alerts: rl or all), got none: the RL alerts fire but notify "
                "nobody (add one, or set alerts.enabled: false)",
            )
    elif target == "gke" and not get_at(data, ("gke", "notificationChannels")):
        yield (
            ("gke", "notificationChannels"),
            "expected a notification channel, got none: every alert policy fires but notifies nobody (add one, or "
            "set alerts.enabled: false)",
        )


def _unlinked(data: Any) -> Iterator[tuple[Path, str]]:
    """A GitOps repository on a host whose web links rlobs does not know: the alerts' runbook links may not open."""
    path = ("eks", "gitops", "repoUrl")
    url = get_at(data, path) if isinstance(data, dict) and data.get("target") == "eks" else None
    if isinstance(url, str) and (problem := link_problem(url)) is not None:
        yield path, problem


def _at(located: Located, display: str, path: Path, message: str) -> Problem:
    from rlobs.profile.load import dotted

    pos = located.pos(path, key=True)
    return Problem(display, pos.line, pos.column, dotted(path), message)


def _strings(data: Any, path: Path) -> Iterator[tuple[Path, str]]:
    if isinstance(data, str):
        yield path, data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _strings(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _strings(value, (*path, i))
