"""The starter profiles, shipped ones and each target's own (Target.BLUEPRINTS), in one name -> Blueprint registry."""

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
    from rlobs.targets import blueprint_texts

    texts = {
        entry.name.removesuffix(".yaml"): entry.read_text(encoding="utf-8")
        for entry in package_dir("blueprints").iterdir()
        if entry.name.endswith(".yaml")
    }
    texts.update(blueprint_texts())
    found: dict[str, Blueprint] = {}
    for name, text in sorted(texts.items()):
        data = load_yaml(text)
        found[name] = Blueprint(name, str(data["target"]), str(data["metadata"].get("description", "")), text)
    return found


def default_blueprint(found: dict[str, Blueprint], target: str | None) -> str:
    """The blueprint `init --target` starts from: the target's first blueprint by name (the first of all without)."""
    names = [name for name, bp in found.items() if target is None or bp.target == target]
    if not names:
        targets = ", ".join(sorted({bp.target for bp in found.values()}))
        raise RlobsError(f"unknown target {target!r}: expected one of {targets}")
    return names[0]
