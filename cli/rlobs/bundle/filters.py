"""Serialisers and escaping filters; every profile value that reaches a text format goes through one."""

from __future__ import annotations

import itertools
import json
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

# libyaml's emitter when PyYAML was built with it (every manylinux wheel is): an EKS bundle's YAML in 10 ms, against
# 140 ms with PyYAML's pure-Python emitter.
_SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _BlockDumper(_SafeDumper):  # type: ignore[valid-type,misc]
    """Multi-line strings as `|` blocks so embedded JSON, configs and PromQL stay readable in diffs."""

    def ignore_aliases(self, data: object) -> bool:  # noqa: ARG002 - PyYAML's signature
        # A dict reused in several places must be written out each time: Kubernetes and Helm readers of
        # the bundle should never meet YAML anchors (&id001 / *id001).
        return True


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value and not any(c in value for c in "\t\r") and value == value.rstrip(" "):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_BlockDumper.add_representer(str, _str_representer)


def to_yaml(data: Any) -> str:
    # width: never fold long lines (PromQL, URLs); folding makes diffs noisy.
    return yaml.dump(
        data,
        Dumper=_BlockDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 16,
    )


def fluentbit_conf(sections: list[tuple[str, list[tuple[str, str]]]]) -> str:
    """Fluent Bit's classic configuration format: `[SECTION]`, then indented `Key  value` lines, values aligned per
    section two spaces past its longest key (docs.fluentbit.io, configuration file, classic mode)."""
    blocks = []
    for name, entries in sections:
        width = max(len(key) for key, _ in entries) + 2
        blocks.append("\n".join([f"[{name}]", *(f"    {key.ljust(width)}{value}" for key, value in entries)]))
    return "\n\n".join(blocks) + "\n"


def number(value: float) -> str:
    """A number as people write it: integers without a point, others as Python's shortest round-trip repr."""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def sh_quote(value: object) -> str:
    return shlex.quote(str(value))


def hcl_str(value: object) -> str:
    """An HCL quoted string; `${` and `%{` are escaped so a value can never become an interpolation. JSON's string
    escapes are HCL's but for `\\b` and `\\f`, written `\\u0008` and `\\u000c` (hashicorp/hcl hclsyntax spec.md,
    "Template Literals")."""
    text = _JSON_ESCAPE.sub(_hcl_escape, json.dumps(str(value), ensure_ascii=False))
    return text.replace("${", "$${").replace("%{", "%%{")


_JSON_ESCAPE = re.compile(r"\\.")  # each escape, left to right: the `b` of `\\b` is not an escape


def _hcl_escape(match: re.Match[str]) -> str:
    return {"\\b": "\\u0008", "\\f": "\\u000c"}.get(match.group(), match.group())


def hcl_value(value: object) -> str:
    """Python bool/int/float/str/list/dict as an HCL expression (strings always quoted)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value, allow_nan=False)  # NaN and the infinities have no HCL literal
    if isinstance(value, str):
        return hcl_str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(hcl_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        width = max(len(hcl_str(k)) for k in value)
        body = "".join(f"  {hcl_str(k).ljust(width)} = {hcl_value(v)}\n" for k, v in value.items())
        return "{\n" + body + "}"
    raise TypeError(f"no HCL form for {type(value).__name__}")


def hcl_attributes(data: Mapping[str, object], comments: Mapping[str, str] | None = None) -> str:
    """Top-level `key = value` lines, as `terraform fmt` lays them out (hashicorp/hcl hclwrite format.go): `=`
    aligned across runs of one-line attributes. With `comments` (attribute -> its comment), every attribute is a
    paragraph of its own (a blank line, its `# ` comment lines, the attribute), so no `=` is aligned across them."""
    if comments is not None:
        return "".join(
            f"\n{comment_lines(comments.get(key, ''))}{key} = {hcl_value(value)}\n" for key, value in data.items()
        )
    rendered = [(k, hcl_value(v)) for k, v in data.items()]
    out = []
    for multiline, run in itertools.groupby(rendered, key=lambda kv: "\n" in kv[1]):
        pairs = list(run)
        width = 0 if multiline else max(len(k) for k, _ in pairs)  # each multi-line one stands alone
        out += [f"{k.ljust(width)} = {v}\n" for k, v in pairs]
    return "".join(out)


def comment_lines(text: str) -> str:
    """`text` as `#` comment lines (an empty line as a bare `#`, with no trailing space)."""
    return "".join(f"# {line}\n" if line else "#\n" for line in text.splitlines())


def py_str(value: object) -> str:
    """A Python string literal, double-quoted where that needs no extra escapes (as `ruff format` writes it)."""
    text = repr(str(value))
    # repr() picks single quotes unless the value holds a ' and no "; with no " inside, swapping them keeps it valid.
    if text.startswith("'") and '"' not in text:
        text = '"' + text[1:-1] + '"'
    return text


def py_items(pairs: Mapping[object, object] | Iterable[tuple[object, object]]) -> list[str]:
    """`"key": value` Python literals of (key, value) pairs, for dict displays laid out by a template."""
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    return [f"{py_str(k)}: {py_str(v)}" for k, v in items]


# Characters that must not reach a Markdown file raw: C0/C1 controls and DEL (terminal escapes, and CR/LF would
# end the code span's line or a table row), Unicode line/paragraph separators, and format characters such as the
# bidirectional overrides (U+202E) that make a reader see other text than the file holds.
_MD_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]"
)


def _md_escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char) or (
        f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
    )


def md_code(value: object) -> str:
    """Inline Markdown code that shows the value literally, whatever it holds (CommonMark 0.31.2, "Code spans"): the
    fence is one backtick longer than the longest run inside; the content is padded with a space on each side when
    it starts or ends with a backtick or with spaces at both ends (the parser strips one from each end then).
    Control and invisible characters are shown as `\\xNN` / `\\uNNNN` (a code span has no backslash escapes)."""
    text = _MD_UNSAFE.sub(_md_escape_char, str(value))
    if not text:
        return "` `"  # CommonMark has no empty code span; one space is the closest a reader can see
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " " and text.strip(" ") != "")
    return f"{fence} {text} {fence}" if pad else f"{fence}{text}{fence}"


def md_cell_code(value: object) -> str:
    """`md_code` for a GFM table cell: a `|` would end the cell even inside a code span unless written `\\|`, which
    the table parser turns back into `|` before it reads the span (GitHub Flavored Markdown spec 0.29, "Tables")."""
    return md_code(value).replace("|", "\\|")


FILTERS = {
    "to_yaml": to_yaml,
    "to_json": to_json,
    "sh": sh_quote,
    "hcl": hcl_str,
    "hcl_value": hcl_value,
    "py": py_str,
    "py_items": py_items,
    "md_code": md_code,
    "md_cell_code": md_cell_code,
}
