"""The shipped starter profiles: read from package data into an explicit name -> Blueprint registry."""

from __future__ import annotations

from dataclasses import dataclass

from rlobs.errors import RlobsError
from rlobs.profile.yamlsource import load_yaml
from rlobs.resources import package_dir


@dataclass(frozen=True, slots=True)
class Blueprint:
    name: str
    target: str
    description: str
    text: str  # the profile, verbatim, comments included


def load_blueprints() -> dict[str, Blueprint]:
    found: dict[str, Blueprint] = {}
    for entry in sorted(package_dir("blueprints").iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yaml"):
            continue
        text = entry.read_text(encoding="utf-8")
        data = load_yaml(text)
        name = entry.name.removesuffix(".yaml")
        found[name] = Blueprint(name, str(data["target"]), str(data["metadata"].get("description", "")), text)
    return found


def default_blueprint(found: dict[str, Blueprint], target: str | None) -> str:
    """The blueprint `init --target` starts from: the target's first blueprint by name (the first of all without)."""
    names = [name for name, bp in found.items() if target is None or bp.target == target]
    if not names:
        targets = ", ".join(sorted({bp.target for bp in found.values()}))
        raise RlobsError(f"unknown target {target!r}: expected one of {targets}")
    return names[0]
