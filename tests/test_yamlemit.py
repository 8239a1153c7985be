"""The direct YAML writer gives PyYAML's text byte for byte wherever it writes at all, and writes every YAML file of
the shipped bundles itself. Hypothesis runs through its plain `@given` API (the pytest plugin is off, see
pyproject)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlobs.bundle import render, yamlemit
from rlobs.bundle.filters import to_yaml, to_yaml_direct, to_yaml_pyyaml
from rlobs.bundle.spec import DataFile, FileSpec, Rendered
from rlobs.pipeline import plan_bundle
from testing.fleet import example_build
from testing.helpers import all_profiles, profile


def _direct(data: Any) -> str | None:
    try:
        return to_yaml_direct(data)
    except yamlemit.NotPlain:
        return None


def _same_as_pyyaml(data: Any) -> bool:
    """Whether the direct writer wrote `data`; fails when what it wrote differs from PyYAML's text."""
    got, want = _direct(data), to_yaml_pyyaml(data)
    assert got is None or got == want, f"{data!r}:\n{got!r}\n!=\n{want!r}"
    assert to_yaml(data) == want
    return got is not None


# YAML indicators, reserved words and other implicit tags, document markers, comments, quotes, and line breaks and
# spaces in every place: ASCII the direct writer decides itself.
PIECES = [
    *"-?:#,[]{}&*!|>'\"%@`~=<. \n\\/_+aZ09",
    *("true", "False", "YES", "no", "on", "OFF", "null", "NULL", "Null", "~", "<<", "y", "n"),
    *("0", "1", "-1", "+1", "007", "0x1F", "0o17", "0b101", "1_000", "1:20", "1.5", ".5", "1e3", "1.0e+3", "-.inf"),
    *(".NaN", "2024-01-01", "2024-01-01 10:00:00", "2001-12-14t21:59:43.10-05:00"),
    *("---", "...", "- ", ": ", " #", "? ", "\n\n", " \n", "\n ", "  "),
]
# And what makes PyYAML double-quote or weigh Unicode: tab, CR, other controls, NEL, BOM, line separators, non-ASCII.
FORCING = ["\t", "\r", "\x00", "\x1b", "\x7f", "\x85", "\u2028", "\ufeff", "\u00e9", "\u65e5", "\U0001f600"]
TEXT = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=8).map("".join),
    st.lists(st.sampled_from(PIECES + FORCING), max_size=6).map("".join),
    st.text(alphabet="ab :-#'\n", max_size=12),
    st.sampled_from(PIECES),
    st.text(max_size=6),
    st.text(alphabet="ab :", min_size=120, max_size=140),  # around the 128-character limit of a simple key
)
LEAF = st.one_of(
    TEXT,
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False),  # NaN never equals itself, so the round trip is checked apart
)
PLAIN = st.recursive(
    LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=16,
)
DOCUMENT = st.one_of(st.dictionaries(TEXT, PLAIN, max_size=5), st.lists(PLAIN, max_size=5))


def _strings(data: Any) -> list[str]:
    if type(data) is str:
        return [data]
    if type(data) is list:
        return [text for item in data for text in _strings(item)]
    if type(data) is dict:
        return [text for key, value in data.items() for text in (key, *_strings(value))]
    return []


def _property(examples: int) -> None:
    written = []

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(DOCUMENT)
    def check(data: dict[str, Any] | list[Any]) -> None:
        written.append(_same_as_pyyaml(data))
        assert yaml.safe_load(to_yaml(data)) == data
        for text in _strings(data):  # one string left to PyYAML sends the whole document there: each alone too
            _same_as_pyyaml({text: [text, {"k": text}]})

    check()
    # Most generated documents hold a string left to PyYAML somewhere; enough must still be written directly for the
    # property to test the direct writer at all.
    assert sum(written) >= examples // 10, f"{sum(written)} of {len(written)} written directly"


def test_generated_plain_data_is_pyyamls_text() -> None:
    _property(200)


@pytest.mark.slow
def test_generated_plain_data_is_pyyamls_text_at_length() -> None:
    _property(2000)


# Every string of up to two characters from these, as a key, a value, a sequence item and nested.
ALPHABET = " -?:#.,'\"a1\n[{!|>%@`&*~=<0eyTn_+/\\\t"


@pytest.mark.parametrize("size", [0, 1, 2])
def test_every_short_string_is_pyyamls_text(size: int) -> None:
    for chars in itertools.product(ALPHABET, repeat=size):
        text = "".join(chars)
        for data in ({"k": text}, {text: "v"}, [text], {"k": [text, {"a": text}]}, [[text, [text]]]):
            _same_as_pyyaml(data)


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ({"a": "true", "true": 1, "b": "", "c": "1.5", "d": "2024-01-01", "e": "~", "f": "it's"}, None),
        ({"list": ["x", {"k": [1, [2, []]]}], "empty": {}}, "list:\n- x\n- k:\n  - 1\n  - - 2\n    - []\nempty: {}\n"),
        (
            {"a": "x\ny\n", "b": "x\ny", "c": " x\ny", "d": "\nx"},
            "a: |\n  x\n  y\nb: |-\n  x\n  y\nc: |2-\n   x\n  y\nd: |2-\n\n  x\n",
        ),
        ([{"run": "set -e\n\necho hi\n"}], "- run: |\n    set -e\n\n    echo hi\n"),
        ({}, "{}\n"),
        ([], "[]\n"),
        (
            {"n": None, "t": True, "f": False, "i": -7, "x": 0.25, "z": -0.0},
            "n: null\nt: true\nf: false\ni: -7\nx: 0.25\nz: -0.0\n",
        ),
    ],
)
def test_written_directly(data: Any, text: str | None) -> None:
    assert _same_as_pyyaml(data)
    assert text is None or to_yaml(data) == text


@pytest.mark.parametrize(
    "data",
    [
        "bare",  # a bare scalar document
        7,
        None,
        {"k": "tab\there"},  # double-quoted
        {"k": "caf\u00e9"},  # non-ASCII
        {"k": "a \nb"},  # a space before a line break: double-quoted
        {"k": "x\n\n"},  # |+, and the document then ends with `...`
        {"k": "multi\nline "},  # not a block: single-quoted over two lines
        {"k" * 129: 1},  # a complex `? ` key
        {"a\nb": 1},
        {1: "x"},
        {"k": ("tuple",)},
        {"k": float("inf")},
        {"k": float("nan")},
        {"k": 1e20},
        {"k": "word " * 1000 + "end"},  # long enough to be folded at the emitter's width
    ],
)
def test_left_to_pyyaml(data: Any) -> None:
    assert not _same_as_pyyaml(data)


def test_nan_as_pyyaml_writes_it() -> None:
    assert to_yaml({"k": float("nan")}) == "k: .nan\n"
    assert math.isnan(yaml.safe_load(to_yaml({"k": float("nan")}))["k"])


def _yaml_files(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """(path, data) of every YAML DataFile of every blueprint's and test variant's bundle and the example fleet's."""
    seen: list[tuple[str, Any]] = []
    render_one = render._render_one

    def spy(spec: FileSpec, env: Any) -> Rendered:
        if isinstance(spec, DataFile) and spec.fmt == "yaml":
            seen.append((spec.path, spec.data))
        return render_one(spec, env)

    monkeypatch.setattr(render, "_render_one", spy)
    for name in all_profiles():
        render.render(plan_bundle(profile(name)))
    example_build.__wrapped__()  # the session's cached build would not render again
    return seen


def test_the_bundles_yaml_is_written_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _yaml_files(monkeypatch)
    left = sorted(path for path, data in files if not _same_as_pyyaml(data))
    assert len(files) > 100
    assert left == []


class _Text(str):
    pass


@pytest.mark.parametrize("data", [{"k": _Text("x")}, {_Text("k"): "x"}, [{"k": object()}]])
def test_what_pyyaml_refuses_is_still_refused(data: Any) -> None:
    with pytest.raises(yaml.representer.RepresenterError):
        to_yaml(data)
