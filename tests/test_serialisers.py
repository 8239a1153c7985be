"""What the serialisers write (filters.to_yaml, to_json, hcl_attributes) reads back as the data, by the real parsers
(PyYAML, json, python-hcl2), for generated data full of hostile strings and for every data file of the shipped
bundles and the example fleet: the proof that lets the run-time check leave those files unparsed (bundle/check.py).
Hypothesis runs through its plain `@given` API (the pytest plugin is off, see pyproject)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlobs.bundle.filters import hcl_attributes, to_json, to_yaml
from rlobs.bundle.spec import DataFile
from rlobs.pipeline import plan_bundle
from testing.bundles import build
from testing.fleet import example_build
from testing.helpers import all_profiles, profile
from testing.readback import hcl_values, read_back, typed

# Quotes, escapes, template sequences of YAML, HCL, Jinja and shell, comment and document markers, every kind of
# line break and space, controls, bidi and format characters, and astral code points.
PIECES = [
    *"-?:#,[]{}&*!|>'\"%@`~=<.\\/_+$ aZ09",
    *("${", "%{", "$${", "%%{", "}", "{{", "}}", "${x}", "%{ if true }", "\\n", "\\u0041", "\\b"),
    *("true", "no", "NULL", "~", "0x1F", "1e3", ".inf", "2024-01-01", "<<", "---", "...", "- ", ": ", " #"),
    *("\n", "\r", "\r\n", "\t", "\x00", "\x08", "\x0c", "\x1b", "\x7f", "\x85", "\u2028", "\u2029", "\ufeff"),
    *("\u202e", "\u00e9", "\u65e5", "\U0001f600", "  ", "\n\n", " \n"),
]
TEXT = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=8).map("".join),
    st.text(max_size=8),
    st.text(alphabet="ab :-#'\"\n", max_size=12),
    st.text(alphabet="ab ", min_size=120, max_size=140),  # around libyaml's 128-character limit of a simple key
)
NUMBER = st.one_of(st.integers(min_value=-(10**30), max_value=10**30), st.floats(allow_nan=False, allow_infinity=False))
LEAF = st.one_of(TEXT, st.booleans(), NUMBER)


def _data(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaf,
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
        max_leaves=12,
    )


DOCUMENT = st.one_of(st.dictionaries(TEXT, _data(st.one_of(LEAF, st.none())), max_size=5), st.lists(LEAF, max_size=5))
NAME = st.from_regex(r"[a-z_][a-z0-9_-]{0,12}", fullmatch=True).map(lambda s: f"v_{s}")
ATTRIBUTES = st.dictionaries(NAME, _data(LEAF), max_size=6)
# What Terraform reads after a backslash in a quoted string (hashicorp/hcl hclsyntax spec.md, "Template Literals").
HCL_ESCAPES = re.compile(r'\\(?:[nrt"\\]|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})')
_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_ESCAPE = re.compile(r"\\(?:u.{4}|U.{8}|.)", re.S)


def _examples(count: int) -> Any:
    return settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _yaml_and_json(data: Any) -> None:
    assert typed(yaml.safe_load(to_yaml(data))) == typed(data)
    assert typed(json.loads(to_json(data))) == typed(data)


def _hcl(data: dict[str, Any], comments: dict[str, str]) -> None:
    for text in (hcl_attributes(data), hcl_attributes(data, comments)):
        assert typed(hcl_values(text)) == typed(data), text
        # python-hcl2 takes any backslash escape; Terraform only HCL's (JSON's \b and \f are not among them).
        strings = [q for line in text.splitlines() if not line.startswith("#") for q in _QUOTED.findall(line)]
        for string in strings:
            assert all(HCL_ESCAPES.fullmatch(e) for e in _ESCAPE.findall(string)), string


def _property(count: int) -> None:
    @_examples(count)
    @given(DOCUMENT)
    def yaml_and_json(data: Any) -> None:
        _yaml_and_json(data)

    @_examples(count)
    @given(ATTRIBUTES, st.dictionaries(NAME, TEXT))
    def hcl(data: dict[str, Any], comments: dict[str, str]) -> None:
        _hcl(data, comments)

    yaml_and_json()
    hcl()


def test_generated_data_reads_back_as_itself() -> None:
    _property(100)


@pytest.mark.slow
def test_generated_data_reads_back_as_itself_at_length() -> None:
    _property(400)


HOSTILE = ['q"uote', "back\\slash", "${var.x}", "%{ if true }x%{ endif }", "$${", "%%{", "a\nb\r\nc", "é✓\U0001f600"]


@pytest.mark.parametrize("value", [*HOSTILE, "\x08\x0c", "tab\there", "\u2028\x85", ""])
def test_each_hostile_string_reads_back_from_every_format(value: str) -> None:
    _yaml_and_json({value: [value, {value: value}]})
    _hcl({"v": value, "m": {value: [value]}}, {"v": value})


def test_every_data_file_of_every_bundle_reads_back_as_its_data() -> None:
    formats = set()
    for name in all_profiles():
        p = profile(name)
        build(p)  # rendered and read back once per session, shared with every other test of the bundle
        formats |= {f.fmt for f in plan_bundle(p).files if isinstance(f, DataFile)}
    assert formats == {"yaml", "json", "hcl"}


def test_every_serialised_file_of_the_example_fleet_reads_back() -> None:
    files = [r for r in example_build().files if r.serialised]
    assert {r.fmt for r in files} >= {"yaml", "json"}
    for r in files:
        assert read_back(r.text, r.fmt) is not None, r.path


# ---- the layout the project asks of each library ------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ({"list": ["x", {"k": [1, [2, []]]}], "empty": {}}, "list:\n- x\n- k:\n  - 1\n  - - 2\n    - []\nempty: {}\n"),
        ({"b": 1, "a": 2}, "b: 1\na: 2\n"),  # insertion order
        ({"a": "x\ny\n", "b": "x\ny"}, "a: |\n  x\n  y\nb: |-\n  x\n  y\n"),  # multi-line strings as blocks
        ({"a": "true", "b": "1.5", "c": "it's"}, "a: 'true'\nb: '1.5'\nc: it's\n"),  # quoted where not strings
        ({"k": "caf\u00e9 \u65e5"}, "k: caf\u00e9 \u65e5\n"),  # Unicode as is
    ],
)
def test_yaml_layout(data: Any, text: str) -> None:
    assert to_yaml(data) == text


def test_yaml_never_uses_aliases_or_folds_long_lines() -> None:
    shared = {"k": ["v"]}
    long = "word " * 4000 + "end"
    text = to_yaml({"a": shared, "b": shared, "c": long})
    assert "&" not in text and "*" not in text
    assert text.count("\n") == 7 and f"c: {long}\n" in text


def test_json_layout() -> None:
    assert (
        to_json({"a": [1, {"b": "é"}], "c": {}})
        == '{\n  "a": [\n    1,\n    {\n      "b": "é"\n    }\n  ],\n  "c": {}\n}\n'
    )
