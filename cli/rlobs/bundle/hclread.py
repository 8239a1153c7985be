"""A strict reader of the one HCL shape rlobs writes itself: attribute files of literal values (`.tfvars`).

filters.hcl_attributes and the tfvars templates write only `# comments`, blank lines and top-level
`name = value` lines whose values are literals: quoted strings (with `$${` and `%%{` escapes, never a template
sequence), numbers, true/false, one-line lists and `{ "key" = value }` maps, one element per line. Reading that
needs no parser library, so a cold render does not start the python-hcl2 process for it (~250 ms of CPU).

It reads that shape only. Anything else (a block, an expression, a function call, an interpolation, an escape
HCL does not have, a duplicate name) raises NotOurs, and the caller hands the text to python-hcl2 as before: this
reader can only say "valid" for text it fully understands, never "invalid". Strings are returned as their quoted
source text, as python-hcl2 returns them, so tests compare the two readers value for value (tests/test_hclread.py,
over every HCL file of the golden bundles and their mutations).

Syntax from hashicorp/hcl hclsyntax spec.md (v2.24): "Structural Elements" (attributes, comments), "Expressions"
(literals, tuple and object constructors; object elements separated by newlines or commas), "Template Literals"
(escapes \\n \\r \\t \\" \\\\ \\uNNNN \\UNNNNNNNN; `$${` and `%%{` for literal `${` and `%{`).
"""

from __future__ import annotations

import re
from typing import Any


class NotOurs(ValueError):
    """Not the attribute-file shape rlobs writes: for python-hcl2 to judge."""


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")  # no exponent: python-hcl2 reads those as expressions
# A quoted string: plain characters, the escapes HCL has, `$${`/`%%{`, or a `$`/`%` not starting a template.
_STRING = re.compile(
    r'"(?:[^"\\$%\x00-\x1f\x7f]|\\[nrt"\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}|\$\${|%%{|[$%](?![{$%]))*"'
)
_SPACE = re.compile(r"[ \t]*")


def read(text: str) -> dict[str, Any]:
    """The attributes of `text`, name -> value (strings as quoted source text); NotOurs for any other shape."""
    return _Reader(text).attributes()


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def attributes(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for line_start in self._lines():
            self.at = line_start
            name = self._token(_NAME, "an attribute name")
            if name in found:
                raise NotOurs(f"{name} set twice")
            self._expect("=")
            found[name] = self._value()
            self._end_of_line()
        return found

    def _lines(self) -> Any:
        """The start of each line that is not blank or a `#` comment; the reader moves self.at past each one."""
        text = self.text
        while self.at < len(text):
            self.at = _SPACE.match(text, self.at).end()  # type: ignore[union-attr]
            if text.startswith("\n", self.at):
                self.at += 1
            elif text.startswith("#", self.at):
                end = text.find("\n", self.at)
                if end < 0:
                    raise NotOurs("no newline after the last comment")
                self.at = end + 1
            else:
                yield self.at

    def _skip_space(self) -> None:
        self.at = _SPACE.match(self.text, self.at).end()  # type: ignore[union-attr]

    def _token(self, pattern: re.Pattern[str], what: str) -> str:
        self._skip_space()
        found = pattern.match(self.text, self.at)
        if found is None:
            raise NotOurs(f"expected {what} at offset {self.at}")
        self.at = found.end()
        return found.group()

    def _expect(self, literal: str) -> None:
        self._skip_space()
        if not self.text.startswith(literal, self.at):
            raise NotOurs(f"expected {literal!r} at offset {self.at}")
        self.at += len(literal)

    def _end_of_line(self) -> None:
        self._skip_space()
        if not self.text.startswith("\n", self.at):
            raise NotOurs(f"expected the end of the line at offset {self.at}")
        self.at += 1

    def _peek(self) -> str:
        self._skip_space()
        return self.text[self.at : self.at + 1]

    def _value(self) -> Any:
        first = self._peek()
        if first == '"':
            return self._token(_STRING, "a quoted string")
        if first == "[":
            return self._list()
        if first == "{":
            return self._object()
        word = _NAME.match(self.text, self.at)
        if word is not None and word.group() in ("true", "false"):
            self.at = word.end()
            return word.group() == "true"
        number = self._token(_NUMBER, "a literal value")
        if self.text[self.at : self.at + 1].isalnum() or self.text[self.at : self.at + 1] in "._":
            raise NotOurs(f"expected a number at offset {self.at}")
        return float(number) if "." in number else int(number)

    def _list(self) -> list[Any]:
        """`[a, b]` on one line (hcl_value writes lists so)."""
        self._expect("[")
        items: list[Any] = []
        if self._peek() == "]":
            self.at += 1
            return items
        while True:
            items.append(self._value())
            if self._peek() == ",":
                self.at += 1
                continue
            self._expect("]")
            return items

    def _object(self) -> dict[str, Any]:
        """`{` newline, then `"key" = value` lines, then `}` (or `{}`)."""
        self._expect("{")
        found: dict[str, Any] = {}
        if self._peek() == "}":
            self.at += 1
            return found
        self._end_of_line()
        while True:
            if self._peek() == "}":
                self.at += 1
                return found
            key = self._token(_STRING, "a quoted key")
            if key in found:
                raise NotOurs(f"key {key} set twice")
            self._expect("=")
            found[key] = self._value()
            self._end_of_line()
