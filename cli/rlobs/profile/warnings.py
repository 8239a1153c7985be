"""Warnings, not errors: a shipped blueprint's placeholder left in a valid profile, or what its target warns about."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from rlobs.errors import Problem
from rlobs.profile.yamlsource import Located, Path, get_at, load_yaml, strings
from rlobs.resources import package_dir

# Keys whose blueprint value stands for the user's own -> what that is (each target adds its Target.PLACEHOLDERS).
FLEET_PLACEHOLDERS: dict[Path, str] = {
    ("gitops", "repoUrl"): "your own GitOps repository (Argo CD syncs the bundle from it)",
}
# What a profile's target warns about besides placeholders: (key path, message) per warning, from the parsed data.
TargetWarnings = Callable[[dict[str, Any]], Iterable[tuple[Path, str]]]

# A repository URL's owner/name part: the placeholder whatever form or host the URL is written in.
_REPO_PATH = re.compile(r"^(?:[a-z+]+://)?(?:[^@/]+@)?[^/:]+[:/](?P<path>.+?)(?:\.git)?/?$")


def shipped_blueprints() -> list[str]:
    folder = package_dir("blueprints")
    entries = sorted([*folder.iterdir(), *(folder / "fleet").iterdir()], key=lambda e: e.name)
    return [e.read_text(encoding="utf-8") for e in entries if e.name.endswith(".yaml")]


def placeholders(keys: Mapping[Path, str], blueprints: Iterable[str]) -> dict[str, str]:
    """placeholder text -> what the user's own value is, from the `keys` of every blueprint text."""
    found: dict[str, str] = {}
    for text in blueprints:
        data = load_yaml(text)
        for path, own in keys.items():
            value = get_at(data, path)
            if isinstance(value, str) and value:
                found[value] = own
                repo = _REPO_PATH.match(value) if path[-1] == "repoUrl" else None
                if repo is not None:
                    found[repo["path"]] = own
    return found


def find(
    located: Located, display: str, known: Mapping[str, str], targets: Mapping[str, TargetWarnings]
) -> list[Problem]:
    """Every warning for one parsed profile or fleet file, in file order (`targets`: target name -> its warnings)."""
    from rlobs.profile.load import located_problem

    found = [
        located_problem(located, display, path, f"expected {own}, got the blueprint's placeholder {text!r}")
        for path, text, own in _placeholders_in(located.data, known)
    ]
    data = located.data
    found += [located_problem(located, display, path, message) for path, message in _workload(data)]
    target = data.get("target") if isinstance(data, dict) else None
    if isinstance(target, str) and target in targets:
        found += [located_problem(located, display, path, message) for path, message in targets[target](data)]
    found.sort(key=lambda p: (p.line, p.column, p.path))
    return found


def _workload(data: Any) -> Iterator[tuple[Path, str]]:
    w = data.get("workload") if isinstance(data, dict) else None
    if not isinstance(w, dict) or not isinstance(w.get("run"), dict) or w["run"].get("system") != "verl":
        return
    if w.get("kind") in ("RayJob", "RayCluster", "RayService") and not w.get("workerGroups"):
        yield (
            ("workload", "kind"),
            "expected workerGroups naming the worker groups of this verl Ray workload, got none: only the head gets "
            "the env, and verl's TaskRunner may train on a worker pod (`rlobs check-workload` lists them)",
        )


def _placeholders_in(data: Any, known: Mapping[str, str]) -> Iterator[tuple[Path, str, str]]:
    for path, value in strings(data):
        hit = next((p for p in sorted(known, key=len, reverse=True) if p in value), None)
        if hit is not None:
            yield path, hit, known[hit]
