"""YAML text of plain data written directly: byte for byte what filters.to_yaml's PyYAML dumper (libyaml's emitter)
writes, without a representer node or an emitter event per value. Only what it decides with certainty is written
here; anything else raises NotPlain and the caller dumps the whole document with PyYAML.

The layout follows libyaml's emitter.c (yaml_emitter_emit_block_mapping_key/value, ..._block_sequence_item,
yaml_emitter_increase_indent): block mappings and sequences indented by two, a sequence inside a mapping written
at the mapping's own indentation ("indentless"), empty ones in flow style (`{}`, `[]`). Scalar styles follow
yaml_emitter_analyze_scalar and yaml_emitter_select_scalar_style, restricted to strings of printable ASCII."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rlobs.bundle import memo


class NotPlain(Exception):
    """A value, or a string whose emitted form is not decided here, left to PyYAML."""


# Every character a single line may hold here: printable ASCII. Anything else (tab, CR, other controls, non-ASCII,
# the Unicode line breaks) makes libyaml weigh double quotes, unicode ranges or breaks: left to PyYAML.
_LINE = re.compile(r"[\x20-\x7e]*")
_TEXT = re.compile(r"[\n\x20-\x7e]*")

# What stops libyaml from writing a single line plain in block context (yaml_emitter_analyze_scalar): an indicator
# first (`-`, `?` only when followed by a space or the end), `---` or `...` first, `: ` or a final `:`, ` #`, and a
# leading or trailing space. Flow-only indicators (`,` `[` ... inside the text) do not matter: no flow collection
# here ever holds a value.
_NOT_PLAIN = re.compile(r"""^(?:[#,\[\]{}&*!|>'"%@`]|[-?](?:\ |$)|---|\.\.\.|\ )|:(?:\ |$)|\ \#|\ $""", re.VERBOSE)

# A finite float whose repr has no exponent: PyYAML writes repr(value) as is, and it reads back as a float.
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")

# libyaml folds a plain or quoted line at a space past the emitter's width (2**16, set by to_yaml): lines this
# short are never folded whatever their indentation, so longer ones are left to PyYAML.
_MAX_LINE = 4096

# A mapping key longer than this (in bytes; ASCII here) is written as a complex `? ` key
# (yaml_emitter_check_simple_key).
_MAX_SIMPLE_KEY = 128

_CACHED_LEN = 200  # forms of longer strings are rare and would only fill the tables


class Writer:
    """The direct writer. `implicit_str(text)` says whether the dumper's resolver reads `text` written plain back
    as a string; where it would not (`true`, `1`, `null`, `2024-01-01`, `~`, ...) PyYAML single-quotes the text.
    Each string's form is remembered: it depends only on the string."""

    def __init__(self, implicit_str: Callable[[str], bool]) -> None:
        self._implicit_str = implicit_str
        self._keys: dict[str, str] = {}  # key -> "key:"
        self._values: dict[str, str] = {}  # one-line string -> " text\n", as it follows "key:" or "-"

    def dump(self, data: Any) -> str:
        """The document's text; NotPlain for anything not decided here, including a bare scalar document."""
        kind = type(data)
        out: list[str] = []
        if kind is dict:
            if not data:
                return "{}\n"
            self._mapping(data, out, "", "")
        elif kind is list:
            if not data:
                return "[]\n"
            self._sequence(data, out, "", "")
        else:
            raise NotPlain
        return "".join(out)

    def _mapping(self, data: dict[Any, Any], out: list[str], indent: str, lead: str) -> None:
        """Each `key:` and its value, keys at `indent`; the first key after `lead` ("" right after a `- `)."""
        keys = self._keys
        for key, value in data.items():
            if type(key) is not str:
                raise NotPlain
            out.append(lead)
            out.append(keys.get(key) or self._key(key))
            lead = indent
            self._value(value, out, indent)

    def _sequence(self, data: list[Any], out: list[str], indent: str, lead: str) -> None:
        """Each `- item`, dashes at `indent`; the first after `lead` ("" right after a `- `)."""
        inner = indent + "  "
        for item in data:
            out.append(lead)
            lead = indent
            kind = type(item)
            if kind is dict and item:
                out.append("- ")
                self._mapping(item, out, inner, "")
            elif kind is list and item:
                out.append("- ")
                self._sequence(item, out, inner, "")
            else:
                out.append("-")
                out.append(self._leaf(item, indent))

    def _value(self, value: Any, out: list[str], indent: str) -> None:
        """What follows `key:` of a mapping at `indent`."""
        kind = type(value)
        if kind is dict and value:
            out.append("\n")
            inner = indent + "  "
            self._mapping(value, out, inner, inner)
        elif kind is list and value:
            out.append("\n")
            self._sequence(value, out, indent, indent)  # indentless: the dashes at the mapping's indentation
        else:
            out.append(self._leaf(value, indent))

    def _leaf(self, value: Any, indent: str) -> str:
        """A scalar or empty collection after `key:` or `-` of a collection at `indent`, its line ended."""
        kind = type(value)
        if kind is str:
            return self._values.get(value) or self._string(value, indent)
        if value is None:
            return " null\n"
        if value is True:
            return " true\n"
        if value is False:
            return " false\n"
        if kind is int:
            return f" {int.__repr__(value)}\n"
        if kind is float:
            text = float.__repr__(value)
            if _FLOAT.fullmatch(text):
                return f" {text}\n"
        elif kind is dict and not value:
            return " {}\n"
        elif kind is list and not value:
            return " []\n"
        raise NotPlain

    def _key(self, key: str) -> str:
        if len(key) > _MAX_SIMPLE_KEY or "\n" in key:
            raise NotPlain
        form = self._line(key) + ":"
        if len(key) <= _CACHED_LEN:
            memo.put(self._keys, key, form)
        return form

    def _string(self, value: str, indent: str) -> str:
        if "\n" in value:
            return _literal(value, indent + "  ")
        form = f" {self._line(value)}\n"
        if len(value) <= _CACHED_LEN:
            memo.put(self._values, value, form)
        return form

    def _line(self, text: str) -> str:
        """A one-line string plain, or single-quoted where libyaml would not write it plain."""
        if len(text) > _MAX_LINE or not _LINE.fullmatch(text):
            raise NotPlain
        if text and not _NOT_PLAIN.search(text) and self._implicit_str(text):
            return text
        return "'" + text.replace("'", "''") + "'"


def _literal(value: str, inner: str) -> str:
    """A multi-line string as the `|` block filters._str_representer asks for, lines at `inner`, its header as
    yaml_emitter_write_block_scalar_hints writes it: an indentation indicator (the emitter's indent, 2) when the
    text starts with a space or a line break, `-` when it has no final line break. Where libyaml would not write
    the block (a space before a line break or at the end: double quotes) or would write `|+` (more than one final
    break, which also ends the document with `...`), NotPlain."""
    if not _TEXT.fullmatch(value) or " \n" in value or value.endswith((" ", "\n\n")) or value == "\n":
        raise NotPlain
    if value.endswith("\n"):
        chomp, body = "", value[:-1]
    else:
        chomp, body = "-", value
    hint = "2" if value[0] in " \n" else ""
    lines = "\n".join(inner + line if line else "" for line in body.split("\n"))
    return f" |{hint}{chomp}\n{lines}\n"
