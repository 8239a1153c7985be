"""tree.parts: the writer's path rule, the same as pathlib's normal form for every path."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlobs.bundle.tree import parts
from rlobs.errors import RlobsError


def _pathlib_rule(rel: str) -> tuple[str, ...] | None:
    """The rule as pathlib states it: relative, not empty, no `..`, no NUL, and already in normal form."""
    pure = PurePosixPath(rel)
    if "\0" in rel or pure.is_absolute() or ".." in pure.parts or not pure.parts or rel != pure.as_posix():
        return None
    return pure.parts


def _parts(rel: str) -> tuple[str, ...] | None:
    try:
        return parts(rel)
    except RlobsError:
        return None


@pytest.mark.parametrize(
    "rel",
    ["", "/", "a", "a/b", "/a", "a/", "a//b", ".", "./a", "a/.", "a/./b", "..", "a/..", "../a", "a\0b", ".a", "a..b"],
)
def test_each_edge_case_follows_pathlibs_rule(rel: str) -> None:
    assert _parts(rel) == _pathlib_rule(rel)


@settings(max_examples=500)
@given(st.lists(st.sampled_from(["a", "b.yaml", ".", "..", "", "/", "\0", ".rlobs", "x y"]), max_size=6).map("".join))
def test_any_path_follows_pathlibs_rule(rel: str) -> None:
    assert _parts(rel) == _pathlib_rule(rel)
