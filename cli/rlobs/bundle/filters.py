"""Serialisers and escaping filters; every profile value that reaches a text format goes through one."""

from __future__ import annotations

import functools
import io
import json
import re
import shlex
from collections.abc import Mapping
from typing import Any

import yaml

from rlobs.bundle import memo, yamlemit

# libyaml's emitter when PyYAML was built with it (every manylinux wheel is): ~30x faster than pure Python.
_SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class CachedResolve:
    """A YAML loader's or dumper's implicit tag resolution, remembered per scalar: PyYAML asks it for every scalar it
    reads or writes, and the answer depends only on the node kind, the text and the implicit flags (no path
    resolvers are registered), so a remembered answer is the one it would compute again. Mixed in before the
    loader or dumper class; each subclass that mixes it in keeps its own table."""

    _resolved: dict[tuple[type[yaml.Node], str | None, Any], str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._resolved = {}

    def resolve(self, kind: type[yaml.Node], value: str | None, implicit: Any) -> str:
        key = (kind, value, implicit)
        try:
            return self._resolved[key]
        except KeyError:
            tag: str = super().resolve(kind, value, implicit)  # type: ignore[misc]
            if value is None or len(value) <= _RESOLVE_CACHED_LEN:
                memo.put(self._resolved, key, tag)
            return tag
        except TypeError:  # an unhashable `implicit` (PyYAML passes tuples)
            return super().resolve(kind, value, implicit)  # type: ignore[misc,no-any-return]


_RESOLVE_CACHED_LEN = 200  # longer scalars (embedded JSON, scripts) are rare and would only fill the table


class _BlockDumper(CachedResolve, _SafeDumper):  # type: ignore[valid-type,misc]
    """Multi-line strings as `|` blocks so embedded JSON, configs and PromQL stay readable in diffs."""

    def ignore_aliases(self, data: object) -> bool:  # noqa: ARG002 - PyYAML's signature
        # A dict reused in several places must be written out each time: Kubernetes and Helm readers of
        # the bundle should never meet YAML anchors (&id001 / *id001).
        return True

    def represent_data(self, data: Any) -> yaml.Node:
        """The nodes PyYAML's represent_data builds for plain dicts, lists and strings, without its per-value
        lookups (the type's representer, and alias bookkeeping, which ignore_aliases turns off); anything else as
        PyYAML does it. Mappings in insertion order and block style, as to_yaml asks (sort_keys=False,
        default_flow_style=False)."""
        kind = type(data)
        if kind is str:
            return _str_representer(self, data)
        if kind is dict:
            pairs = [(self.represent_data(k), self.represent_data(v)) for k, v in data.items()]
            return yaml.MappingNode(_MAP, pairs, flow_style=False)
        if kind is list:
            return yaml.SequenceNode(_SEQ, [self.represent_data(v) for v in data], flow_style=False)
        return super().represent_data(data)  # type: ignore[no-any-return]


_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value and not any(c in value for c in "\t\r") and value == value.rstrip(" "):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_BlockDumper.add_representer(str, _str_representer)


@functools.cache
def _dumper() -> _BlockDumper:
    """One dumper, only asked for tag resolution (its emitter never runs)."""
    return _BlockDumper(io.StringIO())


def _implicit_str(text: str) -> bool:
    """Whether the dumper's resolver reads `text` written plain back as a string: PyYAML's serialiser compares
    this tag with the node's to decide whether the scalar may be written plain (`plain_implicit`)."""
    return _dumper().resolve(yaml.ScalarNode, text, (True, False)) == _STR


_STR = "tag:yaml.org,2002:str"
_DIRECT = yamlemit.Writer(_implicit_str)


def to_yaml(data: Any) -> str:
    """PyYAML's text of `data` (to_yaml_pyyaml); plain data is written by yamlemit, which gives the same text
    without PyYAML's per-value nodes and events, and leaves anything it is not sure of to PyYAML."""
    try:
        return _DIRECT.dump(data)
    except yamlemit.NotPlain:
        return to_yaml_pyyaml(data)


def to_yaml_direct(data: Any) -> str:
    """The direct writer's text alone: yamlemit.NotPlain where to_yaml falls back to PyYAML."""
    return _DIRECT.dump(data)


def to_yaml_pyyaml(data: Any) -> str:
    """The reference text: block style, insertion order, multi-line strings as `|` blocks, no aliases."""
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
    """`json.dumps(data, indent=2, ensure_ascii=False)` and a newline; plain data is written by _indented, which
    gives the same text without the per-value generators of json's pure-Python indenting encoder."""
    out: list[str] = []
    try:
        _indented(data, out, "\n")
    except _NotPlain:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    out.append("\n")
    return "".join(out)


class _NotPlain(Exception):
    """A value _indented leaves to json.dumps (a subclass, a non-string key, anything not JSON's own types)."""


_json_str = json.encoder.encode_basestring  # the C encoder's string escaping when built with it, as json.dumps uses


def _indented(value: Any, out: list[str], newline: str) -> None:
    kind = type(value)
    if kind is str:
        out.append(_json_str(value))
    elif kind is dict:
        _indented_object(value, out, newline)
    elif kind is list or kind is tuple:
        _indented_array(value, out, newline)
    else:
        out.append(_json_scalar(value))


def _indented_object(value: dict[Any, Any], out: list[str], newline: str) -> None:
    if not value:
        out.append("{}")
        return
    inner = newline + "  "
    sep = "{" + inner
    for key, item in value.items():
        if type(key) is not str:
            raise _NotPlain
        out.append(sep)
        out.append(_json_str(key))
        out.append(": ")
        _indented(item, out, inner)
        sep = "," + inner
    out.append(newline + "}")


def _indented_array(value: list[Any] | tuple[Any, ...], out: list[str], newline: str) -> None:
    if not value:
        out.append("[]")
        return
    inner = newline + "  "
    sep = "[" + inner
    for item in value:
        out.append(sep)
        _indented(item, out, inner)
        sep = "," + inner
    out.append(newline + "]")


_INFINITIES = (float("inf"), float("-inf"))


def _json_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float and value == value and value not in _INFINITIES:  # NaN and infinities: as json.dumps has them
        return float.__repr__(value)
    raise _NotPlain


def sh_quote(value: object) -> str:
    """A single shell word, whatever the value holds."""
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
    aligned across runs of one-line attributes, while an attribute whose value spans lines stands alone.

    With `comments` (attribute -> its comment, none where absent or empty), every attribute is a paragraph of its
    own: a blank line, the comment as `# ` lines, the attribute; a comment line or a blank line ends a run, so no
    `=` is aligned across paragraphs."""
    if comments is not None:
        return "".join(
            f"\n{comment_lines(comments.get(key, ''))}{key} = {hcl_value(value)}\n" for key, value in data.items()
        )
    rendered = [(k, hcl_value(v)) for k, v in data.items()]
    out: list[str] = []
    run: list[tuple[str, str]] = []

    def flush() -> None:
        width = max((len(k) for k, _ in run), default=0)
        out.extend(f"{k.ljust(width)} = {v}\n" for k, v in run)
        run.clear()

    for key, value in rendered:
        if "\n" in value:
            flush()
            out.append(f"{key} = {value}\n")
        else:
            run.append((key, value))
    flush()
    return "".join(out)


def comment_lines(text: str) -> str:
    """`text` as `#` comment lines (an empty line as a bare `#`, with no trailing space)."""
    return "".join(f"# {line}\n" if line else "#\n" for line in text.splitlines())


def py_str(value: object) -> str:
    """A Python string literal, double-quoted where that needs no extra escapes (as `ruff format` writes it)."""
    text = repr(str(value))
    # repr() picks single quotes unless the value holds a ' and no "; with no " inside, swapping the delimiters
    # keeps every escape valid.
    if text.startswith("'") and '"' not in text:
        text = '"' + text[1:-1] + '"'
    return text


def py_items(pairs: object) -> list[str]:
    """`"key": value` Python literals of (key, value) pairs, for dict displays laid out by a template."""
    items = pairs.items() if isinstance(pairs, dict) else pairs
    return [f"{py_str(k)}: {py_str(v)}" for k, v in items]  # type: ignore[attr-defined]


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
    """Inline Markdown code that shows the value literally, whatever it holds (CommonMark 0.31.2, "Code spans").

    The span ends at the first backtick run as long as the opening one, so the fence is one backtick longer than
    the longest run inside. The parser strips one space from each end when both ends are spaces, so the content is
    padded with one space on each side when it starts or ends with a backtick (else the fence would grow) or itself
    starts and ends with a space. Control and invisible format characters are shown as `\\xNN` / `\\uNNNN` escapes
    (backslash escapes do not work inside a code span, so this is the only way to show them)."""
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
