"""The writer: idempotent, keeps hand-written files, prunes only its own untouched files, never follows a link,
writes each bundle as one locked transaction that an interrupted render's successor finishes or undoes."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rlobs.bundle.manifest import JOURNAL, MANIFEST, STAGING
from rlobs.bundle.owner import Owner
from rlobs.bundle.spec import Rendered
from rlobs.bundle.write import Bundle, Changes, open_bundle
from rlobs.errors import OutputConflictError, RlobsError
from rlobs.targets import producible
from testing import kills
from testing.helpers import REPO
from testing.trees import copy_bundle, snapshot


def _any(_: str) -> bool:
    return True


ME = Owner("profile", "rl", "eks")


def _write(files: list[Rendered], out: Path, *, force: bool = False, ours: Callable[[str], bool] = _any) -> Changes:
    with open_bundle(out, ours, write=True) as bundle:
        changes = bundle.plan(files, owner=ME, force=force, with_diff=True)
        bundle.write(changes)
    return changes


def _plan(files: list[Rendered], out: Path, *, force: bool = True) -> Changes:
    with open_bundle(out, _any, write=False) as bundle:
        return bundle.plan(files, owner=ME, force=force, with_diff=True)


# OLD's e/ is not in NEW: a render of NEW over OLD deletes e/e.yaml and then the folder it leaves empty.
OLD = [
    Rendered("a.yaml", "a: 1\n", "text"),
    Rendered("b/b.yaml", "b: 1\n", "text"),
    Rendered("c.yaml", "c\n", "text"),
    Rendered("e/e.yaml", "e: 1\n", "text"),
]
NEW = [Rendered("a.yaml", "a: 2\n", "text"), Rendered("b/b.yaml", "b: 2\n", "text"), Rendered("d/d.sh", "d\n", "sh")]


def test_second_render_touches_nothing(tmp_path: Path) -> None:
    files = [Rendered("a.yaml", "a: 1\n", "text"), Rendered("sub/run.sh", "#!/bin/sh\n", "text", executable=True)]
    first = _write(files, tmp_path)
    assert sorted(first.created) == [".gitignore", "a.yaml", "sub/run.sh"]  # .gitignore: the writer's own
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
    drift = _plan(files, tmp_path)
    assert drift.updated == ("a.yaml",)
    assert "-a: 2\n+a: 1\n" in drift.diff
    with pytest.raises(OutputConflictError, match="edited since rlobs wrote it"):
        _write(files, tmp_path)
    assert (tmp_path / "a.yaml").read_text() == "a: 2\n"
    _write(files, tmp_path, force=True)
    assert (tmp_path / "a.yaml").read_text() == "a: 1\n"


def test_edited_stale_file_is_never_deleted_not_even_with_force(tmp_path: Path) -> None:
    _write([Rendered("a.yaml", "a: 1\n", "text"), Rendered("old.yaml", "o: 1\n", "text")], tmp_path)
    (tmp_path / "old.yaml").write_text("o: mine\n")
    with pytest.raises(OutputConflictError, match=r"old\.yaml"):
        _write([Rendered("a.yaml", "a: 1\n", "text")], tmp_path)
    changes = _write([Rendered("a.yaml", "a: 1\n", "text")], tmp_path, force=True)
    assert changes.kept == ("old.yaml",)
    assert (tmp_path / "old.yaml").read_text() == "o: mine\n"
    assert "old.yaml" not in json.loads((tmp_path / MANIFEST).read_text())["files"]  # the user's file now


def test_forged_manifest_entry_for_a_users_file_deletes_nothing(tmp_path: Path) -> None:
    """A manifest entry with the file's real digest is not enough: the path must be one a target can produce."""
    import hashlib

    out = tmp_path / "out"
    readme = Rendered("README.md", "bundle\n", "md")
    _write([readme], out, ours=producible)
    for rel in ("notes.md", "docs/../../x", "terraform/secrets.auto.tfvars"):
        target = out / "notes.md" if ".." in rel else out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("mine\n")
    digest = hashlib.sha256(b"mine\n").hexdigest()
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"].update({"notes.md": digest, "docs/../../x": digest, "terraform/secrets.auto.tfvars": digest})
    (out / MANIFEST).write_text(json.dumps(manifest))
    changes = _write([readme], out, ours=producible, force=True)
    assert changes.deleted == ()
    assert (out / "notes.md").read_text() == (out / "terraform/secrets.auto.tfvars").read_text() == "mine\n"


def test_a_manifest_entry_from_elsewhere_for_a_producible_path_keeps_the_users_file(tmp_path: Path) -> None:
    """A committed manifest naming a hand-written file at a path rlobs can produce, with its real digest, is only
    the folder's word: the render keeps the file and drops the entry, and deletes only what this machine wrote."""
    import hashlib

    out = tmp_path / "out"
    old = [
        Rendered("README.md", "bundle\n", "md"),
        Rendered("docs/x.md", "x\n", "md"),
        Rendered("stack/old.yaml", "o\n", "yaml"),
    ]
    _write(old, out, ours=producible)
    (out / "docs/mine.md").write_text("{}\n")
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"]["docs/mine.md"] = hashlib.sha256(b"{}\n").hexdigest()
    (out / MANIFEST).write_text(json.dumps(manifest))
    assert producible("docs/mine.md")
    changes = _write(old[:2], out, ours=producible)
    assert (changes.deleted, changes.kept) == (("stack/old.yaml",), ("docs/mine.md",))
    assert (out / "docs/mine.md").read_text() == "{}\n"
    assert "docs/mine.md" not in json.loads((out / MANIFEST).read_text())["files"]


def test_a_bundle_copied_from_elsewhere_keeps_its_stale_files(tmp_path: Path) -> None:
    """A fresh checkout (no record of the folder on this machine): what the new render no longer makes is kept,
    listed, and forgotten by the manifest; nothing is deleted on the manifest's word."""
    _write([Rendered("a.yaml", "a: 1\n", "text"), Rendered("old/gone.yaml", "g: 1\n", "text")], tmp_path / "there")
    shutil.copytree(tmp_path / "there", tmp_path / "here")
    changes = _write([Rendered("a.yaml", "a: 1\n", "text")], tmp_path / "here")
    assert (changes.deleted, changes.kept) == ((), ("old/gone.yaml",))
    assert (tmp_path / "here/old/gone.yaml").read_text() == "g: 1\n"


def test_every_blueprint_path_is_producible() -> None:
    from testing.bundles import build
    from testing.helpers import all_profiles, profile

    for name in all_profiles():
        assert [r.path for r in build(profile(name)) if not producible(r.path)] == [], name


def test_a_symbolic_link_at_the_root_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "out").symlink_to(real)
    with pytest.raises(OutputConflictError, match="symbolic link"):
        _write([Rendered("a.yaml", "a: 1\n", "text")], tmp_path / "out")
    assert list(real.iterdir()) == []


@pytest.mark.parametrize("write", [True, False])
def test_a_symbolic_link_below_the_root_is_never_followed(tmp_path: Path, write: bool) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / "docs").symlink_to(elsewhere)
    (out / "README.md").symlink_to(elsewhere / "victim")
    files = [Rendered("docs/runbook.md", "x\n", "md")]
    with pytest.raises(OutputConflictError, match="symbolic link"):
        _write(files, out) if write else _plan(files, out)
    with pytest.raises(OutputConflictError, match="symbolic link"):
        _write([Rendered("README.md", "x\n", "md")], out, force=True)
    assert list(elsewhere.iterdir()) == []


def test_a_stale_path_through_a_link_is_not_deleted(tmp_path: Path) -> None:
    """A forged manifest naming docs/x.md, with docs/ a link to a folder holding a matching x.md: kept."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    _write([Rendered("docs/x.md", "x\n", "md"), Rendered("a.yaml", "a\n", "text")], out)
    (out / "docs/x.md").unlink()
    (out / "docs").rmdir()
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("x\n")
    (out / "docs").symlink_to(elsewhere)
    changes = _write([Rendered("a.yaml", "a\n", "text")], out, force=True)
    assert changes.deleted == ()
    assert (elsewhere / "x.md").read_text() == "x\n"


def test_planted_symlink_in_the_staging_folder_is_not_followed(tmp_path: Path) -> None:
    out, victim = tmp_path / "out", tmp_path / "victim"
    _write([Rendered("README.md", "v1\n", "text")], out)
    victim.write_text("precious\n")
    (out / STAGING).mkdir()
    for name in ("0", "manifest", "journal"):
        (out / STAGING / name).symlink_to(victim)
    _write([Rendered("README.md", "v2\n", "text")], out)
    assert victim.read_text() == "precious\n"
    assert (out / "README.md").read_text() == "v2\n"
    assert not (out / "README.md").is_symlink()


@pytest.mark.parametrize("bad", ["../escape.yaml", "/abs.yaml", "a/../../b.yaml", "./a.yaml", "a\0b"])
def test_paths_stay_inside_the_output_directory(tmp_path: Path, bad: str) -> None:
    with pytest.raises(RlobsError, match="refusing"):
        _plan([Rendered(bad, "x: 1\n", "yaml")], tmp_path / "out")


class _Killed(BaseException):
    """Stands for SIGKILL in the in-process trials (the slow CLI trials use the real signal)."""


def _mutations_of(monkeypatch: pytest.MonkeyPatch, kill_at: int | None) -> list[str]:
    """Count (and at call `kill_at`, die in) every call that changes the directory, and every write of a staged
    file (a kill there leaves the staging half written)."""
    calls: list[str] = []
    for name in ("replace", "unlink", "rmdir", "mkdir", "write"):
        real = getattr(os, name)

        def dying(*args: object, _real: Callable[..., object] = real, _name: str = name, **kw: object) -> object:
            calls.append(_name)
            if len(calls) == kill_at:
                raise _Killed
            return _real(*args, **kw)

        monkeypatch.setattr(os, name, dying)
    return calls


# m/ holds only folders, each emptied by one deletion: a kill after the last of them is removed and before m/ is
# leaves a replay whose files and their folders are all gone already (the CLI kill trial's gke monitoring/).
_DEEP_OLD = [*OLD, Rendered("m/x/x.yaml", "x\n", "text"), Rendered("m/y/y.yaml", "y\n", "text")]


@pytest.mark.parametrize("before", [OLD, _DEEP_OLD], ids=["flat", "deep"])
def test_killed_at_every_step_the_next_render_finds_old_or_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: list[Rendered]
) -> None:
    write = _write
    _write(before, tmp_path / "ref-old")
    _write(NEW, tmp_path / "ref-new")
    old, new = snapshot(tmp_path / "ref-old"), snapshot(tmp_path / "ref-new")
    _write(before, tmp_path / "count")
    with monkeypatch.context() as m:
        calls = _mutations_of(m, None)
        write(NEW, tmp_path / "count")
    steps = len(calls)
    assert steps >= 10  # staging, commit, deletes, renames, manifest, clean-up
    seen = set()
    for kill_at in range(1, steps + 1):
        out = tmp_path / f"trial-{kill_at}"
        _write(before, out)
        with monkeypatch.context() as m:
            _mutations_of(m, kill_at)
            with pytest.raises(_Killed):
                write(NEW, out)
        with open_bundle(out, _any, write=False) as bundle:
            assert bundle.plan(NEW, owner=ME).leftovers or snapshot(out) in (old, new), kill_at
        with open_bundle(out, _any, write=True):
            pass  # what the next render does first
        after = snapshot(out)
        assert after in (old, new), (kill_at, sorted(set(after) ^ set(new)), sorted(set(after) ^ set(old)))
        seen.add("old" if after == old else "new")
        _write(NEW, out)
        assert snapshot(out) == new
    assert seen == {"old", "new"}  # kills before and after the commit point were both tried


def test_check_reports_an_unfinished_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(OLD, tmp_path)
    with monkeypatch.context() as m:
        _mutations_of(m, 12)
        with pytest.raises(_Killed):
            _write(NEW, tmp_path)
    changes = _plan(NEW, tmp_path)
    assert set(changes.leftovers) & {JOURNAL, STAGING}
    assert set(changes.leftovers) <= set(changes.changed)


@pytest.mark.parametrize(
    ("fault", "raised"),
    [
        (OSError(28, "No space left on device"), "No space left on device; the previous bundle is untouched"),
        (KeyboardInterrupt(), None),  # Ctrl-C
    ],
    ids=["disk full", "ctrl-c"],
)
def test_a_staging_that_fails_leaves_the_previous_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: BaseException, raised: str | None
) -> None:
    _write(OLD, tmp_path)
    before = snapshot(tmp_path)
    real_write = os.write
    calls = []

    def failing_write(fd: int, data: bytes) -> int:
        calls.append(fd)
        if len(calls) == 2:  # the second staged file
            raise fault
        return real_write(fd, data)

    with monkeypatch.context() as m:
        m.setattr(os, "write", failing_write)
        with pytest.raises(RlobsError if raised else KeyboardInterrupt, match=raised):
            _write(NEW, tmp_path)
    assert snapshot(tmp_path) == before  # no staging folder either


def test_a_failure_after_the_commit_is_finished_by_the_next_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    _write(OLD, out)
    real = os.replace

    def refusing(src: str, dst: str, **kw: object) -> None:
        if dst == "b.yaml":
            raise PermissionError(13, "Permission denied")
        real(src, dst, **kw)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.setattr(os, "replace", refusing)
        with pytest.raises(RlobsError, match=r"Permission denied; \.rlobs-journal\.json records the rest"):
            _write(NEW, out)
    _write(NEW, tmp_path / "ref")
    with open_bundle(out, _any, write=True):
        pass
    assert snapshot(out) == snapshot(tmp_path / "ref")


def test_a_second_writer_waits_for_the_lock_then_gives_up(tmp_path: Path) -> None:
    with open_bundle(tmp_path, _any, write=True):
        with (
            pytest.raises(RlobsError, match="another rlobs render is writing this directory"),
            open_bundle(tmp_path, _any, write=True, timeout=0.1),
        ):
            pass
        with (
            pytest.raises(RlobsError, match="another rlobs render"),
            open_bundle(tmp_path, _any, write=False, timeout=0.1),
        ):
            pass
    with open_bundle(tmp_path, _any, write=True, timeout=0.1) as bundle:
        assert isinstance(bundle, Bundle)


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        ("{not json", "expected an rlobs manifest"),
        ('{"files": []}', "expected an rlobs manifest"),
        ("\0\0", "expected an rlobs manifest"),
        ('{"files": {}}', "expected an rlobs manifest"),  # no owner
        ('{"files": {}, "owner": {"kind": "user", "name": "x"}}', "expected an rlobs manifest"),
        ('{"files": {"a\\u0000b": "x", "/etc/passwd": "y"}, "owner": {"kind": "profile", "name": "rl"}}', None),
    ],
)
def test_an_unreadable_manifest_is_one_error(tmp_path: Path, manifest: str, expected: str | None) -> None:
    (tmp_path / MANIFEST).write_text(manifest)
    if expected is None:
        assert _plan([Rendered("a.yaml", "a: 1\n", "text")], tmp_path).deleted == ()
        return
    with pytest.raises(RlobsError, match=expected):
        _plan([Rendered("a.yaml", "a: 1\n", "text")], tmp_path)


def test_a_manifest_that_is_a_folder_is_one_error(tmp_path: Path) -> None:
    (tmp_path / MANIFEST).mkdir()
    with pytest.raises(RlobsError, match="expected a file, got a folder"):
        _plan([Rendered("a.yaml", "a: 1\n", "text")], tmp_path)


def test_a_journal_this_machine_did_not_stage_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    out = tmp_path / "out"
    _write(OLD, out)
    forged = {"files": [{"path": "../outside.txt", "staged": None, "digest": None, "replaces": "x"}]}
    for text in ("[1, 2]", json.dumps(forged), json.dumps({"files": []})):
        (out / JOURNAL).write_text(text)
        before = snapshot(out)
        for write in (True, False):
            with pytest.raises(RlobsError, match="did not start") as exc, open_bundle(out, _any, write=write):
                pass
            assert len(exc.value.lines()) == 1 and f"remove {JOURNAL} and {STAGING}/" in str(exc.value)
            assert snapshot(out) == before
    assert outside.read_text() == "x\n"


# -- the real CLI, killed with SIGKILL and run concurrently --------------------------------------------------------

# A target switch: files created, updated and deleted. Another owner's folder, so each render takes it over (--force).
_OLD_BP, _NEW_BP = "gke-managed-otel", "eks-jark"


def _bp(name: str) -> str:
    return str(REPO / "blueprints" / f"{name}.yaml")


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """The old and the new bundle's folders, and how many renames writing the new over the old takes."""
    root = tmp_path_factory.mktemp("ref")
    assert kills.rlobs("render", _bp(_OLD_BP), "-o", str(root / "old")).returncode == 0
    assert kills.rlobs("render", _bp(_NEW_BP), "-o", str(root / "new")).returncode == 0
    copy_bundle(root / "old", root / "switch")
    done = kills.rlobs("render", _bp(_NEW_BP), "-o", str(root / "switch"), "--force")
    assert done.returncode == 0, done.stderr
    renames = kills.renames(done)
    assert snapshot(root / "switch") == snapshot(root / "new")
    return root / "old", root / "new", renames


def _kill_trial(root: Path, old_dir: Path, trial: int, kill_at: int, delay: float | None) -> tuple[Path, bool]:
    """A copy of the old bundle, then the new one rendered over it and killed at rename `kill_at` (or after `delay`
    seconds); returns the folder and whether --check reported drift before the next render."""
    out = root / f"trial-{trial}"
    copy_bundle(old_dir, out)
    if delay is None:
        killed = kills.rlobs("render", _bp(_NEW_BP), "-o", str(out), "--force", kill_at=kill_at)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
    else:
        kills.killed_after(delay, "render", _bp(_NEW_BP), "-o", str(out), "--force")
    drift = kills.rlobs("render", _bp(_NEW_BP), "-o", str(out), "--check", "--force").returncode == 1
    return out, drift


@pytest.mark.slow
def test_sigkill_at_every_rename_and_at_random_instants(tmp_path: Path, references: tuple[Path, Path, int]) -> None:
    old_dir, new_dir, renames = references
    old, new = snapshot(old_dir), snapshot(new_dir)
    rng = random.Random(10)
    # The first rename is the commit point (a kill there: the old bundle), then the files and the manifest (the
    # new one): kills at the first, the second, one in the middle and the last, and at random instants (while
    # building and staging too). The in-process trials above kill at every step.
    trials: list[tuple[int, float | None]] = [(n, None) for n in sorted({1, 2, renames // 2, renames})]
    trials += [(0, rng.uniform(0.05, 0.6)) for _ in range(6)]

    def enumerate_trials(found: list[tuple[int, float | None]]) -> list[tuple[int, int, float | None]]:
        return [(i, n, d) for i, (n, d) in enumerate(found)]

    outcomes = {"old": 0, "new": 0}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for out, drift in pool.map(lambda t: _kill_trial(tmp_path, old_dir, *t), enumerate_trials(trials)):
            before = snapshot(out)
            assert drift or before == new, out  # --check reports a half-written bundle and its journal
            kills.recover(out)
            outcomes[kills.side(snapshot(out), old, new)] += 1  # exactly one bundle: no mix, no staging file
    assert outcomes["old"] and outcomes["new"], outcomes
    assert renames >= 30, renames  # every file, the journal and the manifest are renamed into place


_CONCURRENT_TRIALS = 4


@pytest.mark.slow
def test_concurrent_renders_leave_one_complete_bundle(tmp_path: Path, references: tuple[Path, Path, int]) -> None:
    old, new = snapshot(references[0]), snapshot(references[1])
    env = {**os.environ, "NO_COLOR": "1"}
    winners = {"old": 0, "new": 0}
    for trial in range(_CONCURRENT_TRIALS):
        out = tmp_path / f"t{trial}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "rlobs", "render", _bp(bp), "-o", str(out), "--force"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for bp in ((_OLD_BP, _NEW_BP) if trial % 2 else (_NEW_BP, _OLD_BP))
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
        after = snapshot(out)
        assert after in (old, new), trial
        winner = "old" if after == old else "new"
        winners[winner] += 1
        check = kills.rlobs("render", _bp(_OLD_BP if winner == "old" else _NEW_BP), "-o", str(out), "--check")
        assert check.returncode == 0, check.stdout  # the manifest is right: nothing differs, nothing left over
    assert sum(winners.values()) == _CONCURRENT_TRIALS


# -- the folder's owner and the layout of several bundles ------------------------------------------------------------

EKS, GKE = Owner("profile", "rl", "eks"), Owner("profile", "rl-gke", "gke")


def _owned(files: list[Rendered], out: Path, owner: Owner, *, force: bool = False, write: bool = True) -> Changes:
    with open_bundle(out, _any, write=write) as bundle:
        changes = bundle.plan(files, owner=owner, force=force)
        if write:
            bundle.write(changes)
    return changes


def test_another_owner_is_refused_unless_force(tmp_path: Path) -> None:
    _owned(OLD, tmp_path, EKS)
    assert json.loads((tmp_path / MANIFEST).read_text())["owner"] == {"kind": "profile", "name": "rl", "target": "eks"}
    before = snapshot(tmp_path)
    preview = _owned(NEW, tmp_path, GKE, write=False)
    assert [r.reason for r in preview.refused] == ["owner"]
    assert (
        "holds the bundle of profile rl (target eks), not of profile rl-gke (target gke)" in preview.refused[0].message
    )
    with pytest.raises(OutputConflictError, match=r"pass --force to take this one over") as exc:
        _owned(NEW, tmp_path, GKE)
    assert exc.value.lines() == [preview.refused[0].line(tmp_path)]
    assert snapshot(tmp_path) == before
    assert _owned(NEW, tmp_path, GKE, force=True).deleted == ("c.yaml", "e/e.yaml")
    assert json.loads((tmp_path / MANIFEST).read_text())["owner"]["name"] == "rl-gke"
    # The same profile with another target is another bundle too; a fleet is never a profile's bundle.
    assert _owned(NEW, tmp_path, Owner("profile", "rl-gke", "eks"), write=False).refused
    assert _owned(NEW, tmp_path, Owner("fleet", "rl-gke"), write=False).refused
    assert not _owned(NEW, tmp_path, GKE, write=False).refused


def test_a_folder_of_bundles_is_recognised_by_its_subfolders_manifests(tmp_path: Path) -> None:
    _owned(OLD, tmp_path / "rl", EKS)
    _owned(OLD, tmp_path / "rl-gke", GKE)
    (tmp_path / "linked").symlink_to(tmp_path / "rl")  # never followed: not a bundle of this folder
    (tmp_path / "notes").mkdir()
    with open_bundle(tmp_path, _any, write=False) as bundle:
        (refusal,) = bundle.plan(NEW, owner=EKS, force=True).refused
    assert refusal.reason == "parent" and f"-o {tmp_path / 'rl'}" in refusal.message
    assert "rl/ (profile rl (target eks)), rl-gke/ (profile rl-gke (target gke))" in refusal.message


def test_members_are_refused_inside_a_bundle(tmp_path: Path) -> None:
    _owned(OLD, tmp_path, EKS)
    with open_bundle(tmp_path / "x", _any, write=False) as member:
        (refusal,) = member.plan(NEW, owner=GKE, force=True).refused
    assert refusal.reason == "bundle" and refusal.line(tmp_path / "x").startswith(f"{tmp_path}: holds the bundle of")


def _killed_after_commit(files: list[Rendered], out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write of `files` into `out` killed just after its commit point (the journal's rename), before any of it
    is rolled forward."""
    with kills.stopped_after_commit(), pytest.raises(kills.Stopped):
        _owned(files, out, EKS)
    assert (out / JOURNAL).exists()


def test_a_preview_plans_against_the_write_a_committed_journal_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the commit point: the preview reads through the journal, so it predicts the recovered state."""
    out = tmp_path / "out"
    _owned(OLD, out, EKS)
    _owned(OLD, tmp_path / "out-count", EKS)
    _killed_after_commit(NEW, out, monkeypatch)
    assert (out / "c.yaml").exists()  # nothing rolled forward yet
    before = snapshot(out)
    preview = _owned(NEW, out, EKS, write=False)
    assert snapshot(out) == before
    assert (preview.created, preview.updated, preview.deleted, preview.refused) == ((), (), (), ())
    assert set(preview.leftovers) == {JOURNAL, STAGING}
    done = _owned(NEW, out, EKS)
    assert (done.created, done.updated, done.deleted, done.refused) == ((), (), (), ())
    assert set(done.recovered) == set(preview.leftovers)
    assert not (out / "c.yaml").exists() and (out / "a.yaml").read_text() == "a: 2\n"


def test_a_refused_plan_stages_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.yaml").write_text("mine\n")  # not rlobs's: the plan refuses it
    with open_bundle(out, _any, write=True) as bundle:
        changes = bundle.plan(NEW, owner=ME)
        with pytest.raises(OutputConflictError, match="not generated by rlobs"):
            bundle.stage(changes)
    assert sorted(p.name for p in out.iterdir()) == ["a.yaml"]


def test_a_staged_bundle_is_unchanged_until_committed_and_discard_drops_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write(OLD, out)
    before = snapshot(out)
    with open_bundle(out, _any, write=True) as bundle:
        bundle.stage(bundle.plan(NEW, owner=ME))
        assert {k: v for k, v in snapshot(out).items() if not k.startswith(STAGING)} == before
        bundle.discard()
    assert snapshot(out) == before
    with open_bundle(out, _any, write=True) as bundle:
        bundle.stage(bundle.plan(NEW, owner=ME))
        bundle.commit()
    _write(NEW, tmp_path / "ref")
    assert snapshot(out) == snapshot(tmp_path / "ref")


def test_a_replay_finishes_when_a_deleted_files_folder_became_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed after the commit point, before e/e.yaml was deleted; meanwhile someone put a file where e/ was. The
    # replay has nothing to delete there, keeps that file, and finishes instead of failing on every later render.
    out = tmp_path / "out"
    _owned(OLD, out, EKS)
    _owned(OLD, tmp_path / "out-count", EKS)
    _killed_after_commit(NEW, out, monkeypatch)
    assert (out / "e" / "e.yaml").exists()
    shutil.rmtree(out / "e")
    (out / "e").write_text("mine\n")
    with open_bundle(out, _any, write=True):
        pass
    assert not (out / JOURNAL).exists()
    assert (out / "e").read_text() == "mine\n" and (out / "a.yaml").read_text() == "a: 2\n"
