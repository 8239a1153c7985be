"""Parse a YAML document into plain data plus the source position of every key and value."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
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
    # The source text of each unquoted scalar YAML read as something other than a string (1.30 -> 1.3), so a
    # problem can show what was typed and say to quote it.
    plain: dict[Path, str] = field(default_factory=dict)

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
    return yaml.load(text, Loader=_Loader)


def compose_yaml(text: str) -> yaml.Node | None:
    """The node tree of one document (None for an empty one), for edits that need the source positions."""
    return yaml.compose(text, Loader=_Loader)


class YamlSyntaxError(Exception):
    def __init__(self, pos: Pos, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


def _walk(node: yaml.Node, path: Path, out: Located) -> None:
    out.values[path] = _pos(node.start_mark)
    if isinstance(node, yaml.MappingNode):
        seen: set[object] = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            child = (*path, key)
            if key in seen:
                out.duplicates.append((child, _pos(key_node.start_mark)))
            seen.add(key)
            out.keys[child] = _pos(key_node.start_mark)
            _walk(value_node, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), out)
    # A plain scalar's style is None in PyYAML and "" in libyaml.
    elif isinstance(node, yaml.ScalarNode) and not node.style and node.tag != _STR_TAG:
        out.plain[path] = node.value


_STR_TAG = "tag:yaml.org,2002:str"

# What PyYAML (pure or libyaml, whose words differ) says, and what a person needs to hear instead: the pattern, the
# hint, and whether to point where the construct started (context_mark) rather than where parsing gave up. Tabs are
# found by the character at the position (libyaml does not name it). Patterns as text: compiled when first matched.
_SYNTAX_HINTS: tuple[tuple[str, str, bool], ...] = (
    (
        r"mapping values are not allowed",
        "unexpected ':' here: a key indented deeper than the key above it (line it up), or a value containing "
        "': ' (quote the value)",
        False,
    ),
    (
        r"block mapping, (did not find expected key|expected <block end>, but found '<block mapping start>')",
        "this line is indented less than the keys above it but more than their parent: line it up with one of them",
        False,
    ),
    (
        r"block collection, (did not find expected '-' indicator|expected <block end>, but found '\?')",
        "a key among list items: indent it like the key above the list, or start it with '- ' as a new item",
        False,
    ),
    (
        r"could not find expected ':'",
        "expected `key: value` (a colon and a space after the key), got a line without ':'",
        True,
    ),
    (
        r"found unexpected end of stream",
        "a quoted value without its closing quote",
        True,
    ),
)
_TAB_HINT = "a tab character: YAML indents with spaces only (replace the tab with spaces)"


def _syntax_error(text: str, exc: yaml.MarkedYAMLError) -> YamlSyntaxError:
    mark = exc.problem_mark or exc.context_mark
    raw = ", ".join(filter(None, (exc.context, exc.problem))) or "invalid YAML"
    if _char_at(text, mark) == "\t" or "tab character" in raw or "'\\t'" in raw:
        return YamlSyntaxError(_pos(mark), f"invalid YAML: {_TAB_HINT}")
    for pattern, hint, at_start in _SYNTAX_HINTS:
        if re.search(pattern, raw):
            where = exc.context_mark if at_start and exc.context_mark is not None else mark
            return YamlSyntaxError(_pos(where), f"invalid YAML: {hint}")
    return YamlSyntaxError(_pos(mark), f"invalid YAML: {raw}")


def _char_at(text: str, mark: yaml.Mark | None) -> str:
    lines = text.split("\n")
    if mark is None or mark.line >= len(lines):
        return ""
    return lines[mark.line][mark.column : mark.column + 1]


def _pos(mark: yaml.Mark | None) -> Pos:
    return Pos(mark.line + 1, mark.column + 1) if mark is not None else Pos(1, 1)


# A profile is a few hundred nodes a few levels deep. Checked on the event stream before any node is built, so a
# hostile file (billion laughs, 10^6 nested lists, a 5000-digit integer) costs milliseconds, not gigabytes.
MAX_NODES = 20_000
MAX_DEPTH = 32
MAX_NUMBER_CHARS = 40  # int() refuses more than 4300 digits (CPython's int_max_str_digits); no setting needs 40
_NUMBERISH = re.compile(r"[-+]?(0x[0-9a-fA-F_]+|[0-9][0-9_:.eE+-]*)")


def _limits(text: str) -> None:
    """Refuse aliases and anchors (a profile needs none), and too many nodes, too deep, or too long a number."""
    nodes = depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise YamlSyntaxError(_at(event), "expected no YAML anchors or aliases (& and *): a profile needs none")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlSyntaxError(_at(event), f"expected at most {MAX_DEPTH} levels of nesting, got more")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif _long_number(event):
            raise YamlSyntaxError(_at(event), f"expected a number of at most {MAX_NUMBER_CHARS} characters")
        if isinstance(event, yaml.NodeEvent):
            nodes += 1
            if nodes > MAX_NODES:
                raise YamlSyntaxError(_at(event), f"expected at most {MAX_NODES} keys and values, got more")


def _long_number(event: yaml.Event) -> bool:
    """A plain scalar PyYAML would build as an int or float, longer than any setting needs."""
    if not isinstance(event, yaml.ScalarEvent) or event.style or len(event.value) <= MAX_NUMBER_CHARS:
        return False
    return _NUMBERISH.fullmatch(event.value) is not None


def _at(event: yaml.Event) -> Pos:
    mark = event.start_mark
    return Pos(mark.line + 1, mark.column + 1) if mark else Pos(1, 1)


def load_located(text: str) -> Located:
    """One YAML document; YamlSyntaxError, with its position, for the first syntax error or limit passed."""
    located = Located(None)
    try:
        _limits(text)
        # Composed once: positions are read off the node tree before it is constructed (a merge key rewrites it).
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _walk(node, (), located)
                located.data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(text, exc) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (a NUL, other control characters)
        before = text[: exc.position]
        pos = Pos(before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1)
        character = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise YamlSyntaxError(pos, f"invalid YAML: unacceptable character #x{character:04x}: {exc.reason}") from None
    except ValueError as exc:  # a value PyYAML's constructors cannot build, e.g. the date 2026-02-30
        raise YamlSyntaxError(Pos(1, 1), f"invalid YAML: {exc}") from None
    return located


def value_at(data: Any, path: Path) -> tuple[bool, Any]:
    """(True, the value) at `path` in loaded YAML data (keys of mappings, indexes of lists), else (False, None)."""
    for part in path:
        listed = isinstance(data, list | tuple) and isinstance(part, int) and 0 <= part < len(data)
        if listed or (isinstance(data, dict) and part in data):
            data = data[part]
        else:
            return False, None
    return True, data


def plain(value: Any) -> Any:
    """Plain dicts and lists of parsed data or a profile's values (tuples, frozen mappings), e.g. for a values file."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def strings(data: Any, path: Path = (), *, keys: bool = False) -> Iterator[tuple[Path, str]]:
    """(path, text) of every string value below `data`, and with `keys` of every key (at its own path)."""
    if isinstance(data, str):
        yield path, data
    elif isinstance(data, dict):
        for key, value in data.items():
            if keys:
                yield (*path, key), str(key)
            yield from strings(value, (*path, key), keys=keys)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from strings(value, (*path, i), keys=keys)


def get_at(data: Any, path: Path) -> Any:
    return value_at(data, path)[1]
