"""Escaping filters: a profile value can never break out of the string it is placed in."""

from __future__ import annotations

import ast
import json
import math
import subprocess

import hcl2
import pytest
import yaml

from rlobs.bundle.filters import hcl_str, hcl_value, md_code, py_str, sh_quote, to_yaml

NASTY = "a'b\"c $(rm -rf /) ${var.x} %{if} `x` \\ \n end"


def test_shell_quote_survives_bash() -> None:
    out = subprocess.run(["bash", "-c", f"printf %s {sh_quote(NASTY)}"], capture_output=True, text=True, check=True)
    assert out.stdout == NASTY


def test_hcl_string_is_literal() -> None:
    parsed = hcl2.loads(f"x = {hcl_str(NASTY)}\n")
    # python-hcl2 keeps the quotes and the $$ / %% escapes; the value is one literal string, not an interpolation.
    assert json.loads(parsed["x"].replace("$${", "${").replace("%%{", "%{")) == NASTY


def test_hcl_strings_never_interpolate_and_use_only_hcl_escapes() -> None:
    assert hcl_str("${x}%{y}") == '"$${x}%%{y}"'
    assert hcl_str("\x08\x0c\n") == '"\\u0008\\u000c\\n"'


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, object()])
def test_values_without_an_hcl_literal_are_refused(value: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        hcl_value(value)


def test_hcl_value_types() -> None:
    text = "".join(f"{k} = {hcl_value(v)}\n" for k, v in {"a": True, "b": 3, "c": ["x"], "d": {"k": "v"}}.items())
    assert hcl2.loads(text)["a"] is True
    assert 'c = ["x"]' in text


def test_python_literal_round_trips() -> None:
    assert ast.literal_eval(py_str(NASTY)) == NASTY


def _code_spans(markdown: str) -> list[tuple[str, str]]:
    """(type, content) of every inline token CommonMark (with GFM tables) reads from `markdown`."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table")
    return [(c.type, c.content) for t in parser.parse(markdown) if t.type == "inline" for c in t.children or []]


# Values that broke the old two-backtick fence or its padding: runs of 2 and 3 backticks, backticks at either end,
# spaces at both ends, a link and an autolink that must stay literal, a pipe for table cells.
CODE_VALUES = [
    "ab",
    "a`b",
    "a``b",
    "x``[link](https://evil.example)``y",
    "```",
    "`start",
    "end`",
    " both ",
    "   ",
    "<https://evil.example>",
    "a|b",
    "\\|",
    "https://github.com/acme/gitops.git",
]


@pytest.mark.parametrize("value", CODE_VALUES)
def test_markdown_code_comes_back_as_one_code_span(value: str) -> None:
    assert _code_spans(f"see {md_code(value)} here") == [
        ("text", "see "),
        ("code_inline", value),
        ("text", " here"),
    ]


@pytest.mark.parametrize("value", CODE_VALUES)
def test_markdown_table_cell_code_comes_back_as_one_code_span(value: str) -> None:
    from rlobs.bundle.filters import md_cell_code

    table = f"| a | b |\n|---|---|\n| {md_cell_code(value)} | z |\n"
    assert _code_spans(table) == [("text", "a"), ("text", "b"), ("code_inline", value), ("text", "z")]


def test_markdown_code_fence_is_one_backtick_longer_than_the_longest_run() -> None:
    assert md_code("ab") == "`ab`"
    assert md_code("a`b") == "``a`b``"
    assert md_code("a``b") == "```a``b```"
    assert md_code("`x") == "`` `x ``"


def test_markdown_code_escapes_control_and_bidi_characters() -> None:
    value = "a\nb\x1b[31m\u202ec\x7f"
    text = md_code(value)
    assert text.isprintable()
    assert _code_spans(text) == [("code_inline", "a\\nb\\x1b[31m\\u202ec\\x7f")]


def test_yaml_block_strings_round_trip() -> None:
    data = {"text": "line one\nline two\n", "plain": "x: y"}
    assert yaml.safe_load(to_yaml(data)) == data
    assert "text: |" in to_yaml(data)


def test_hcl_attributes_align_like_terraform_fmt() -> None:
    from rlobs.bundle.filters import hcl_attributes

    text = hcl_attributes({"a": 1, "long_name": {"k": True}, "b": ["q"], "cc": 2})
    assert text == 'a = 1\nlong_name = {\n  "k" = true\n}\nb  = ["q"]\ncc = 2\n'


def test_hcl_attributes_with_comments_are_paragraphs() -> None:
    from rlobs.bundle.filters import hcl_attributes

    text = hcl_attributes({"a": 1, "long_name": {"k": True}, "b": "x"}, {"a": "first\n\nsecond", "b": ""})
    assert text == '\n# first\n#\n# second\na = 1\n\nlong_name = {\n  "k" = true\n}\n\nb = "x"\n'


def test_fluentbit_conf_aligns_each_section() -> None:
    from rlobs.bundle.filters import fluentbit_conf

    text = fluentbit_conf([("SERVICE", [("Flush", "5"), ("Log_Level", "info")]), ("INPUT", [("Name", "tail")])])
    assert text == "[SERVICE]\n    Flush      5\n    Log_Level  info\n\n[INPUT]\n    Name  tail\n"


def test_py_items_are_python_literals() -> None:
    from rlobs.bundle.filters import py_items

    items = py_items([("a", "it's"), ("b", 'say "hi"')])
    assert eval("{" + ", ".join(items) + "}") == {"a": "it's", "b": 'say "hi"'}
