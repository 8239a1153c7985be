"""Escaping filters: a profile value can never break out of the string it is placed in."""

from __future__ import annotations

import ast
import json
import subprocess

import hcl2
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


def test_hcl_value_types() -> None:
    text = "".join(f"{k} = {hcl_value(v)}\n" for k, v in {"a": True, "b": 3, "c": ["x"], "d": {"k": "v"}}.items())
    assert hcl2.loads(text)["a"] is True
    assert 'c = ["x"]' in text


def test_python_literal_round_trips() -> None:
    assert ast.literal_eval(py_str(NASTY)) == NASTY


def test_markdown_code_is_not_closed_by_backticks() -> None:
    assert md_code("a`b") == "`` a`b ``"
    assert md_code("ab") == "`ab`"


def test_yaml_block_strings_round_trip() -> None:
    data = {"text": "line one\nline two\n", "plain": "x: y"}
    assert yaml.safe_load(to_yaml(data)) == data
    assert "text: |" in to_yaml(data)


def test_hcl_attributes_align_like_terraform_fmt() -> None:
    from rlobs.bundle.filters import hcl_attributes

    text = hcl_attributes({"a": 1, "long_name": {"k": True}, "b": ["q"], "cc": 2})
    assert text == 'a = 1\nlong_name = {\n  "k" = true\n}\nb  = ["q"]\ncc = 2\n'


def test_fluentbit_conf_aligns_each_section() -> None:
    from rlobs.bundle.filters import fluentbit_conf

    text = fluentbit_conf([("SERVICE", [("Flush", "5"), ("Log_Level", "info")]), ("INPUT", [("Name", "tail")])])
    assert text == "[SERVICE]\n    Flush      5\n    Log_Level  info\n\n[INPUT]\n    Name  tail\n"


def test_py_items_are_python_literals() -> None:
    from rlobs.bundle.filters import py_items

    items = py_items([("a", "it's"), ("b", 'say "hi"')])
    assert eval("{" + ", ".join(items) + "}") == {"a": "it's", "b": 'say "hi"'}
