"""The attribute-file reader takes exactly the HCL rlobs writes in that shape, reads it as python-hcl2 does, and
never calls valid what python-hcl2 refuses."""

from __future__ import annotations

import random

import pytest

from rlobs.bundle import hclread
from rlobs.bundle.check import hcl_for_parser
from rlobs.bundle.filters import hcl_attributes
from testing.bundles import build
from testing.helpers import all_profiles, profile


def _hcl2(text: str) -> dict[str, object] | None:
    """python-hcl2's reading (without its comment list), or None when it refuses the text."""
    import hcl2

    try:
        data = hcl2.loads(hcl_for_parser(text))
    except Exception:
        return None
    data.pop("__comments__", None)
    return dict(data)


def _ours(text: str) -> dict[str, object] | None:
    try:
        return hclread.read(text)
    except hclread.NotOurs:
        return None


def _same(text: str) -> bool:
    """The reader takes `text` and reads what python-hcl2 reads (given the text as check.py gives it, with `$${`
    spelt `$\\u007b{`: the quoted source text python-hcl2 returns is that)."""
    return _ours(text) is not None and _ours(hcl_for_parser(text)) == _hcl2(text)


def _every_hcl_file() -> dict[str, str]:
    return {f"{name}/{r.path}": r.text for name in all_profiles() for r in build(profile(name)) if r.fmt == "hcl"}


def test_every_tfvars_rlobs_writes_is_read_as_python_hcl2_reads_it() -> None:
    files = _every_hcl_file()
    tfvars = {k: v for k, v in files.items() if k.endswith(".tfvars")}
    assert len(tfvars) >= 3 and any(k.endswith(".tf") for k in files)
    for name, text in tfvars.items():
        assert _same(text), name


def test_the_terraform_templates_are_left_to_python_hcl2() -> None:
    for name, text in _every_hcl_file().items():
        if name.endswith(".tf"):
            assert _ours(text) is None, name


@pytest.mark.parametrize(
    "value",
    [
        "",
        "a b",
        'quo"te',
        "back\\slash",
        "tab\there",
        "new\nline",
        "${x}",
        "%{x}",
        "é✓",
        7,
        -2.5,
        True,
        [],
        ["a", 1, False],
        {},
        {"k": "v", "n": {"m": [1, "2"]}},
    ],
)
def test_each_value_rlobs_writes_is_read_as_python_hcl2_reads_it(value: object) -> None:
    text = hcl_attributes({"a": value, "long_name": "x"})
    assert _same(text)


@pytest.mark.parametrize(
    "text",
    [
        'a = "${x}"\n',  # an interpolation
        'a = "x" # trailing\n',
        "a = b\n",  # an expression
        'a = upper("x")\n',
        "a = null\n",
        'resource "x" "y" {\n}\n',
        'a = "\\b"\n',  # JSON has \\b, HCL does not
        "a = 1\na = 2\n",
        'a = "x"',  # no final newline
        "// a comment\n",
        'a = "x"\r\n',
        "a = 1.\n",
        "a = 01\n",
        'a = "$$${"\n',  # `$` before an escape: python-hcl2 and Terraform decide
        "a = 1e+21\n",  # python-hcl2 reads an exponent as an expression
    ],
)
def test_any_other_shape_is_left_to_python_hcl2(text: str) -> None:
    assert _ours(text) is None


def test_no_mutation_is_called_valid_that_python_hcl2_refuses() -> None:
    """Random edits of real tfvars: whatever the reader takes, python-hcl2 takes too, with the same values."""
    rng = random.Random(14)
    seeds = [t for k, t in _every_hcl_file().items() if k.endswith(".tfvars")]
    alphabet = ['"', "\\", "$", "{", "}", "[", "]", "=", ",", "\n", " ", "#", "a", "1", "-", ".", "%", "u"]
    taken = 0
    for _ in range(400):
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text))
            text = text[:at] + rng.choice(["", *alphabet]) + text[at + rng.randint(0, 2) :]
        ours = _ours(text)
        if ours is not None:
            taken += 1
            assert _same(text), repr(text)
    assert taken > 20  # some mutations stay in the shape (a changed string or comment), and are compared
