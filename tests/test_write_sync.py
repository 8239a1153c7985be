"""The writer's durability order: every staged file on disk (one syncfs, or an fsync each) before the journal."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from rlobs.bundle import write
from rlobs.bundle.spec import Rendered


def _any(_: str) -> bool:
    return True


FILES = [Rendered(f"f{i}.yaml", f"a: {i}\n", "yaml") for i in range(5)]


def _write_recording(monkeypatch: pytest.MonkeyPatch, out: Path, *, syncfs: bool) -> list[str]:
    events: list[str] = []
    real_write = write._write_new

    def recording_write(dir_fd: int, name: str, data: bytes, mode: int, *, sync: bool = True) -> None:
        events.append(f"{name}{' fsync' if sync else ''}")
        real_write(dir_fd, name, data, mode, sync=sync)

    monkeypatch.setattr(write, "_write_new", recording_write)
    monkeypatch.setattr(write, "_syncfs", _syncfs_recording(events) if syncfs else lambda: None)
    with write.open_bundle(out, _any, write=True) as bundle:
        bundle.write(FILES, bundle.plan(FILES))
    assert sorted(p.name for p in out.iterdir()) == [write.MANIFEST, *(r.path for r in FILES)]
    return events


def test_one_syncfs_puts_every_staged_file_on_disk_before_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = _write_recording(monkeypatch, tmp_path / "out", syncfs=True)
    assert events == ["0", "1", "2", "3", "4", "manifest", "syncfs", "journal fsync"]


def test_without_syncfs_each_file_is_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = _write_recording(monkeypatch, tmp_path / "out", syncfs=False)
    assert events == ["0 fsync", "1 fsync", "2 fsync", "3 fsync", "4 fsync", "manifest fsync", "journal fsync"]


def test_a_failing_syncfs_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing() -> Any:
        def syncfs(fd: int) -> None:
            raise OSError(5, "Input/output error")

        return syncfs

    monkeypatch.setattr(write, "_syncfs", failing)
    out = tmp_path / "out"
    with write.open_bundle(out, _any, write=True) as bundle, pytest.raises(write.RlobsError, match="untouched"):
        bundle.write(FILES, bundle.plan(FILES))
    assert [p.name for p in out.iterdir()] == []


def _syncfs_recording(events: list[str]) -> Any:
    """write._syncfs, with each flush noted in `events`."""
    real_syncfs = write._syncfs

    def recording_syncfs() -> Any:
        call = real_syncfs()
        assert call is not None, "this C library has syncfs"

        def syncfs(fd: int) -> None:
            events.append("syncfs")
            call(fd)

        return syncfs

    return recording_syncfs


def _recording_syncfs(monkeypatch: pytest.MonkeyPatch, events: list[str]) -> None:
    real_replace = write.os.replace

    def recording_replace(src: str, dst: str, **kwargs: Any) -> None:
        if dst == write.JOURNAL:
            events.append("commit")
        real_replace(src, dst, **kwargs)

    monkeypatch.setattr(write, "_syncfs", _syncfs_recording(events))
    monkeypatch.setattr(write.os, "replace", recording_replace)


def test_many_bundles_are_committed_step_by_step_with_one_flush_per_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    _recording_syncfs(monkeypatch, events)
    dirs = [tmp_path / f"b{i}" for i in range(3)]
    with contextlib.ExitStack() as stack:
        bundles = [stack.enter_context(write.open_bundle(d, _any, write=True)) for d in dirs]
        staged = [(b, b.stage(FILES, b.plan(FILES), durable=False)) for b in bundles]
        assert events == []  # nothing flushed while staging
        with pytest.raises(ValueError, match="commit_all"):
            bundles[0].commit(staged[0][1])  # a deferred stage is never committed unflushed
        write.commit_all(staged)
    # One filesystem: one flush per step for all bundles, the staged files before any commit point, the commit
    # points before any roll forward, the roll forwards before any journal is removed, and the removals.
    assert events == ["syncfs", "commit", "commit", "commit", "syncfs", "syncfs", "syncfs"]
    for d in dirs:
        assert sorted(p.name for p in d.iterdir()) == [write.MANIFEST, *(r.path for r in FILES)]


def test_a_failing_flush_of_deferred_stages_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing() -> Any:
        def syncfs(fd: int) -> None:
            raise OSError(5, "Input/output error")

        return syncfs

    dirs = [tmp_path / f"b{i}" for i in range(2)]
    with contextlib.ExitStack() as stack:
        bundles = [stack.enter_context(write.open_bundle(d, _any, write=True)) for d in dirs]
        staged = [(b, b.stage(FILES, b.plan(FILES), durable=False)) for b in bundles]
        monkeypatch.setattr(write, "_syncfs", failing)
        with pytest.raises(write.RlobsError, match="untouched"):
            write.commit_all(staged)
    assert [p for p in tmp_path.rglob("*")] == []  # no bundle file, staging folder or created folder left


def test_a_failure_after_the_commit_points_is_finished_by_the_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dirs = [tmp_path / f"b{i}" for i in range(3)]
    real_apply = write.Bundle._apply
    calls: list[Path] = []

    def failing_apply(self: write.Bundle, journal: dict[str, Any]) -> None:
        calls.append(self.path)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        real_apply(self, journal)

    monkeypatch.setattr(write.Bundle, "_apply", failing_apply)
    with contextlib.ExitStack() as stack:
        bundles = [stack.enter_context(write.open_bundle(d, _any, write=True)) for d in dirs]
        staged = [(b, b.stage(FILES, b.plan(FILES), durable=False)) for b in bundles]
        with pytest.raises(write.RlobsError, match="records the rest"):
            write.commit_all(staged)
    monkeypatch.setattr(write.Bundle, "_apply", real_apply)
    for d in dirs:  # every bundle committed: the next writer's recovery finishes each one
        with write.open_bundle(d, _any, write=True):
            pass
        assert sorted(p.name for p in d.iterdir()) == [write.MANIFEST, *(r.path for r in FILES)]


def test_write_behind_flushes_while_running_and_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    flushes: list[int] = []
    monkeypatch.setattr(write, "_syncfs", lambda: flushes.append)
    with write.open_bundle(tmp_path / "out", _any, write=True) as bundle:
        with write.WriteBehind(bundle, interval=0.01):
            deadline = time.monotonic() + 5
            while len(flushes) < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
        done = len(flushes)
        time.sleep(0.05)
    assert done >= 3 and len(flushes) == done  # flushed while running, never after stop()


def test_a_big_stage_flushes_behind_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []
    monkeypatch.setattr(write.WriteBehind, "start", lambda self: started.append(1))
    many = [Rendered(f"d/f{i}.yaml", f"a: {i}\n", "yaml") for i in range(write.WRITE_BEHIND_FILES)]
    for files in (FILES, many):
        with write.open_bundle(tmp_path / f"out{len(files)}", _any, write=True) as bundle:
            bundle.write(files, bundle.plan(files))
    assert started == [1]  # the big stage only
