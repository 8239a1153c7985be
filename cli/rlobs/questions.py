"""The questions `init` asks: each answer goes into the blueprint's text, checked by the loader `validate` uses."""

from __future__ import annotations

import contextlib
from typing import Any

import yaml

from rlobs.blueprints import Blueprint, default_blueprint
from rlobs.errors import ProfileError
from rlobs.profile.load import dotted
from rlobs.profile.question import Question as Question  # the type rlobs.prompting asks with
from rlobs.profile.worktree import proposed
from rlobs.profile.yamlsource import Path, compose_yaml, get_at, load_yaml
from rlobs.targets import TARGETS, parse_profile, placeholders


def asked(target: str) -> tuple[Question, ...]:
    return TARGETS[target].QUESTIONS


def targets(found: dict[str, Blueprint]) -> tuple[str, ...]:
    return tuple(name for name in TARGETS if any(bp.target == name for bp in found.values()))


def choose(raw: str, choices: tuple[str, ...]) -> str | None:
    """A choice by its name in any case (EKS, eks) or its 1-based number; None when it is neither."""
    text = raw.strip()
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    return {c.casefold(): c for c in choices}.get(text.casefold())


def start(found: dict[str, Blueprint], target: str) -> str:
    return found[default_blueprint(found, target)].text


def default(text: str, question: Question) -> str | None:
    """The blueprint's value as the suggested answer: none for a placeholder, a folder as seen from this work tree."""
    value = get_at(load_yaml(text), question.path)
    if question.many and isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if not isinstance(value, str) or value in placeholders():
        return None
    return proposed(value) if question.folder else value


def answer(text: str, question: Question, raw: str) -> tuple[str, list[str]]:
    """The profile text with the answer in it, and the loader's problems at the question's key (none: accepted)."""
    value: Any = raw.strip()
    if question.choices:
        value = choose(raw, question.choices)
        if value is None:
            numbered = ", ".join(f"{i} {c}" for i, c in enumerate(question.choices, 1))
            return text, [f"{dotted(question.path)}: expected one of {numbered}, got {raw.strip()!r}"]
    elif question.many:
        value = [v.strip() for v in raw.split(",") if v.strip()]
    new = set_value(text, question.path, value, after=question.after)
    if question.path == ("workload", "kind") and value == "JobSet" and get_at(load_yaml(new), _JOBS) is None:
        # Asked next; until then the JobSet runs the loop in its workload.container's job.
        new = set_value(new, _JOBS, [get_at(load_yaml(new), ("workload", "container"))], after="kind")
    problems = problems_at(new, question.path)
    return (text, problems) if problems else (new, [])


_JOBS = ("workload", "replicatedJobs")


def problems_at(text: str, path: Path) -> list[str]:
    try:
        parse_profile(text, "profile")
    except ProfileError as exc:
        key = dotted(path)
        return [
            f"{p.path}: {p.message}" for p in exc.problems if p.path == key or p.path.startswith((key + ".", key + "["))
        ]
    return []


def set_value(text: str, path: Path, value: Any, *, after: str | None = None) -> str:
    """`text` with the value at `path` replaced (or added after the sibling key `after`), its comments kept."""
    lines = text.split("\n")
    parent, node = _node(text, path)
    rendered = _yaml_value(value)
    if node is not None:
        start, end = node.start_mark, node.end_mark
        if start.line != end.line:  # a block value: replaced by a one-line flow value
            return "\n".join([*lines[: start.line], lines[start.line][: start.column] + rendered, *lines[end.line :]])
        line = lines[start.line]
        rest = line[end.column :]
        if rest.lstrip().startswith("#"):  # keep the comment in its column where the new value leaves room
            width = len(rest) - len(rest.lstrip()) + end.column - start.column
            rest = " " * max(1, width - len(rendered)) + rest.lstrip()
        lines[start.line] = line[: start.column] + rendered + rest
        return "\n".join(lines)
    siblings = {k.value: (k, v) for k, v in parent.value} if isinstance(parent, yaml.MappingNode) else {}
    if after not in siblings:
        raise ValueError(f"{dotted(path)}: no place for it in the blueprint")  # a bug in a target's QUESTIONS
    key_node, value_node = siblings[after]
    indent = " " * key_node.start_mark.column
    at = value_node.end_mark.line + (0 if value_node.end_mark.column == 0 else 1)
    lines.insert(at, f"{indent}{path[-1]}: {rendered}")
    return "\n".join(lines)


def _yaml_value(value: Any) -> str:
    """One line of YAML that reads back as `value` (quoted only when it must be)."""
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    plain = str(value)
    with contextlib.suppress(yaml.YAMLError):
        if plain and load_yaml(f"k: {plain}") == {"k": plain}:
            return plain
    return yaml.safe_dump(plain, default_style='"', width=10**6).strip().removesuffix("...").strip()


def _node(text: str, path: Path) -> tuple[yaml.Node | None, yaml.Node | None]:
    node = compose_yaml(text)
    parent = None
    for part in path:
        parent = node
        if not isinstance(node, yaml.MappingNode):
            return parent, None
        node = next((v for k, v in node.value if k.value == part), None)
        if node is None:
            return parent, None
    return parent, node
