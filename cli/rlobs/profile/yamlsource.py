"""Parse a YAML document into plain data plus the source position of every key and value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

Path = tuple[str | int, ...]

# libyaml when present: about 10x faster than the pure-Python loader.
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class Pos:
    line: int  # 1-based
    column: int  # 1-based


@dataclass(slots=True)
class Located:
    """Data parsed from YAML, with positions for each path: `values` where the value starts, `keys` its key."""

    data: Any
    values: dict[Path, Pos] = field(default_factory=dict)
    keys: dict[Path, Pos] = field(default_factory=dict)
    duplicates: list[tuple[Path, Pos]] = field(default_factory=list)

    def pos(self, path: Path, *, key: bool = False) -> Pos:
        """Best position for path: the key (or value), else the nearest ancestor that exists."""
        table = self.keys if key else self.values
        probe = path
        while probe:
            if probe in table:
                return table[probe]
            if probe in self.values:
                return self.values[probe]
            probe = probe[:-1]
        return self.values.get((), Pos(1, 1))


def load_yaml(text: str) -> Any:
    """Plain data from one YAML document (packaged data files, parse-back checks)."""
    return yaml.load(text, Loader=_Loader)


class YamlSyntaxError(Exception):
    def __init__(self, pos: Pos, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


def _mark(node: yaml.Node) -> Pos:
    return Pos(node.start_mark.line + 1, node.start_mark.column + 1)


def _walk(node: yaml.Node, path: Path, out: Located) -> None:
    out.values[path] = _mark(node)
    if isinstance(node, yaml.MappingNode):
        seen: set[object] = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            child = (*path, key)
            if key in seen:
                out.duplicates.append((child, _mark(key_node)))
            seen.add(key)
            out.keys[child] = _mark(key_node)
            _walk(value_node, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), out)


def load_located(text: str) -> Located:
    """Parse one YAML document; raise YamlSyntaxError with the position of the first syntax error."""
    try:
        data = yaml.load(text, Loader=_Loader)
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        pos = Pos(mark.line + 1, mark.column + 1) if mark else Pos(1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            problem = f"{exc.context}, {exc.problem}"
        raise YamlSyntaxError(pos, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:  # e.g. a second document in the stream
        raise YamlSyntaxError(Pos(1, 1), f"invalid YAML: {exc}") from None
    located = Located(data)
    if node is not None:
        _walk(node, (), located)
    return located
