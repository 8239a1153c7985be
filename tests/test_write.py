"""The writer: idempotent, keeps hand-written files, prunes its own stale files, stays inside the directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlobs.bundle.spec import Rendered
from rlobs.bundle.write import MANIFEST, plan_changes, write_tree
from rlobs.errors import OutputConflictError, RlobsError


def _write(files: list[Rendered], out: Path, *, force: bool = False):  # type: ignore[no-untyped-def]
    changes = plan_changes(files, out, force=force, with_diff=True)
    out.mkdir(parents=True, exist_ok=True)
    write_tree(files, out, changes)
    return changes


def test_second_render_touches_nothing(tmp_path: Path) -> None:
    files = [Rendered("a.yaml", "a: 1\n", "text"), Rendered("sub/run.sh", "#!/bin/sh\n", "text", executable=True)]
    first = _write(files, tmp_path)
    assert first.created == ("a.yaml", "sub/run.sh")
    assert os.access(tmp_path / "sub/run.sh", os.X_OK)
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    os.utime(tmp_path / "a.yaml", ns=(1, 1))
    stamps[tmp_path / "a.yaml"] = 1
    second = _write(files, tmp_path)
    assert second.changed == ()
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == stamps


def test_hand_written_file_is_never_touched(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("mine\n")
    _write([Rendered("a.yaml", "a: 1\n", "text")], tmp_path)
    _write([Rendered("b.yaml", "b: 1\n", "text")], tmp_path)
    assert (tmp_path / "notes.md").read_text() == "mine\n"


def test_refuses_to_overwrite_a_file_it_did_not_generate(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("mine: 1\n")
    with pytest.raises(OutputConflictError, match=r"a\.yaml"):
        _write([Rendered("a.yaml", "a: 1\n", "text")], tmp_path)
    assert (tmp_path / "a.yaml").read_text() == "mine: 1\n"
    _write([Rendered("a.yaml", "a: 1\n", "text")], tmp_path, force=True)
    assert (tmp_path / "a.yaml").read_text() == "a: 1\n"


def test_stale_generated_files_are_removed_with_their_empty_folders(tmp_path: Path) -> None:
    _write([Rendered("keep.yaml", "k: 1\n", "text"), Rendered("old/gone.yaml", "g: 1\n", "text")], tmp_path)
    changes = _write([Rendered("keep.yaml", "k: 1\n", "text")], tmp_path)
    assert changes.deleted == ("old/gone.yaml",)
    assert not (tmp_path / "old").exists()
    assert '"old/gone.yaml"' not in (tmp_path / MANIFEST).read_text()


def test_edited_generated_file_is_drift_and_is_only_overwritten_with_force(tmp_path: Path) -> None:
    files = [Rendered("a.yaml", "a: 1\n", "text")]
    _write(files, tmp_path)
    (tmp_path / "a.yaml").write_text("a: 2\n")
    drift = plan_changes(files, tmp_path, with_diff=True, force=True)
    assert drift.updated == ("a.yaml",)
    assert "-a: 2\n+a: 1\n" in drift.diff
    with pytest.raises(OutputConflictError, match="edited since rlobs wrote them"):
        _write(files, tmp_path)
    assert (tmp_path / "a.yaml").read_text() == "a: 2\n"
    _write(files, tmp_path, force=True)
    assert (tmp_path / "a.yaml").read_text() == "a: 1\n"


def test_edited_stale_file_is_not_deleted_without_force(tmp_path: Path) -> None:
    _write([Rendered("a.yaml", "a: 1\n", "text"), Rendered("old.yaml", "o: 1\n", "text")], tmp_path)
    (tmp_path / "old.yaml").write_text("o: mine\n")
    with pytest.raises(OutputConflictError, match=r"old\.yaml"):
        _write([Rendered("a.yaml", "a: 1\n", "text")], tmp_path)
    assert (tmp_path / "old.yaml").read_text() == "o: mine\n"


def test_planted_symlink_at_a_staging_name_is_not_followed(tmp_path: Path) -> None:
    out, victim = tmp_path / "out", tmp_path / "victim"
    _write([Rendered("README.md", "v1\n", "text")], out)
    victim.write_text("precious\n")
    for name in (".README.md.rlobs-new", ".README.md.x.rlobs-new"):
        (out / name).symlink_to(victim)
    _write([Rendered("README.md", "v2\n", "text")], out)
    assert victim.read_text() == "precious\n"
    assert (out / "README.md").read_text() == "v2\n"
    assert not (out / "README.md").is_symlink()


def test_interrupted_write_is_still_recognised_as_ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write([Rendered("a.yaml", "a: 1\n", "text"), Rendered("b.yaml", "b: 1\n", "text")], tmp_path)
    new = [Rendered("a.yaml", "a: 2\n", "text"), Rendered("b.yaml", "b: 2\n", "text")]
    changes = plan_changes(new, tmp_path)
    real_replace = os.replace
    replaced: list[str] = []

    def dying_replace(src: str, dst: str) -> None:
        if str(dst).endswith(".yaml"):
            replaced.append(str(dst))
            if len(replaced) == 2:
                raise KeyboardInterrupt  # killed between two files
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        write_tree(new, tmp_path, changes)
    monkeypatch.setattr(os, "replace", real_replace)
    assert (tmp_path / "a.yaml").read_text() == "a: 2\n"
    assert (tmp_path / "b.yaml").read_text() == "b: 1\n"
    # The next render finishes the job without --force: neither file counts as foreign or hand-edited.
    _write(new, tmp_path)
    assert (tmp_path / "b.yaml").read_text() == "b: 2\n"
    assert "pending" not in (tmp_path / MANIFEST).read_text()


@pytest.mark.parametrize("bad", ["../escape.yaml", "/abs.yaml", "a/../../b.yaml", "./a.yaml"])
def test_paths_stay_inside_the_output_directory(tmp_path: Path, bad: str) -> None:
    with pytest.raises(RlobsError, match="refusing"):
        plan_changes([Rendered(bad, "x: 1\n", "yaml")], tmp_path / "out")


def test_symlink_out_of_the_directory_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(tmp_path)
    with pytest.raises(RlobsError, match="link"):
        plan_changes([Rendered("link/x.yaml", "x: 1\n", "text")], out)


def test_failed_staging_leaves_the_previous_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write([Rendered("a.yaml", "a: 1\n", "text"), Rendered("b.yaml", "b: 1\n", "text")], tmp_path)
    new = [Rendered("a.yaml", "a: 2\n", "text"), Rendered("b.yaml", "b: 2\n", "text")]
    changes = plan_changes(new, tmp_path)
    real_fsync = os.fsync
    calls = []

    def failing_fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(RlobsError, match="previous bundle is untouched"):
        write_tree(new, tmp_path, changes)
    assert (tmp_path / "a.yaml").read_text() == "a: 1\n"
    assert (tmp_path / "b.yaml").read_text() == "b: 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST, "a.yaml", "b.yaml"]
    assert "pending" not in (tmp_path / MANIFEST).read_text()


def test_unreadable_manifest_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / MANIFEST).write_text("{not json")
    with pytest.raises(RlobsError, match="expected an rlobs manifest"):
        plan_changes([Rendered("a.yaml", "a: 1\n", "text")], tmp_path)
