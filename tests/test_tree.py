"""tree.parts: the writer's path rule, the same as pathlib's normal form for every path; Tree.unlink: a file and
the folders it leaves empty, also when a killed run removed part of them."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlobs.bundle.tree import Tree, parts
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


def _unlink(root: Path, rel: str) -> None:
    tree = Tree.open(root, create=False)
    try:
        tree.unlink(rel)
    finally:
        tree.close()


def test_unlink_removes_the_folders_it_empties_and_keeps_the_rest(tmp_path: Path) -> None:
    (tmp_path / "m" / "x").mkdir(parents=True)
    (tmp_path / "m" / "x" / "x.yaml").write_text("x\n")
    (tmp_path / "m" / "keep.txt").write_text("mine\n")
    _unlink(tmp_path, "m/x/x.yaml")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["keep.txt", "m"]


@pytest.mark.parametrize("left", [("m",), ("m", "x")], ids=["folder-gone", "file-gone"])
def test_a_replayed_unlink_still_removes_the_folders_left_empty(tmp_path: Path, left: tuple[str, ...]) -> None:
    # What a kill leaves between removing m/x/ (or x.yaml) and removing m/: the replay must finish the job.
    tmp_path.joinpath(*left).mkdir(parents=True)
    _unlink(tmp_path, "m/x/x.yaml")
    assert list(tmp_path.iterdir()) == []


def test_unlink_below_a_file_where_a_folder_was_does_nothing(tmp_path: Path) -> None:
    # A replayed deletion whose folder a user replaced by a file: nothing is at the path, and the file stays.
    (tmp_path / "m").write_text("mine\n")
    _unlink(tmp_path, "m/x/x.yaml")
    assert (tmp_path / "m").read_text() == "mine\n"
