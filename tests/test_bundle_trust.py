"""A bundle folder is committed to git by many hands, so nothing in it vouches for itself: a forged manifest never
makes `--check` clean, a journal this machine did not stage (or one whose files changed since) is refused in one
line with nothing changed, and a bundle is never written inside another one or over one."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rlobs.bundle.manifest import JOURNAL, MANIFEST, STAGING
from rlobs.bundle.owner import Owner
from rlobs.bundle.spec import Rendered
from rlobs.bundle.write import open_bundle
from rlobs.errors import RlobsError
from testing import kills
from testing.helpers import REPO
from testing.trees import copy_bundle, snapshot

RLOBS = Path(sys.executable).with_name("rlobs")  # the venv's console script: its up-to-date answer runs too
BLUEPRINT = REPO / "blueprints" / "eks-jark.yaml"
ME = Owner("profile", "rl", "eks")


def _rlobs(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([str(RLOBS), *map(str, args)], capture_output=True, text=True, env=env, check=False)


def _any(_: str) -> bool:
    return True


def _write(files: list[Rendered], out: Path) -> None:
    with open_bundle(out, _any, write=True) as bundle:
        bundle.write(bundle.plan(files, owner=ME))


def _preview(files: list[Rendered], out: Path) -> tuple[str, ...]:
    with open_bundle(out, _any, write=False) as bundle:
        return bundle.plan(files, owner=ME).replayed


OLD = [Rendered("a.yaml", "a: 1\n", "text"), Rendered("b.yaml", "b: 1\n", "text"), Rendered("c/c.yaml", "c\n", "text")]
NEW = [Rendered("a.yaml", "a: 2\n", "text"), Rendered("b.yaml", "b: 2\n", "text"), Rendered("d.yaml", "d\n", "text")]


# -- a forged manifest ----------------------------------------------------------------------------------------------


def test_a_forged_manifest_is_drift_and_the_render_rewrites_the_file(tmp_path: Path, rendered_eks_jark: Path) -> None:
    out, target = tmp_path / "out", "argocd/root-app.yaml"
    copy_bundle(rendered_eks_jark, out)  # as `rlobs render BLUEPRINT -o out` leaves it
    original = (out / target).read_bytes()
    # Another repository to sync, its digest in the manifest: everything in the folder agrees with itself.
    forged = original.replace(b"https://github.com/acme/gitops.git", b"https://evil.example/gitops.git")
    assert forged != original
    (out / target).write_bytes(forged)
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"][target] = hashlib.sha256(forged).hexdigest()
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    check = _rlobs("render", BLUEPRINT, "-o", out, "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert f"would update {out / target}" in check.stdout.splitlines()
    done = _rlobs("render", BLUEPRINT, "-o", out)
    assert done.returncode == 0, done.stderr
    assert (out / target).read_bytes() == original
    assert _rlobs("render", BLUEPRINT, "-o", out, "--check").returncode == 0


def test_the_same_bundle_elsewhere_renders_in_full(tmp_path: Path, rendered_eks_jark: Path) -> None:
    """A fresh checkout has no record on this machine: the check renders and compares, and is still right."""
    out = tmp_path / "out"
    copy_bundle(rendered_eks_jark, out)  # as `rlobs render BLUEPRINT -o out` leaves it
    os.rename(out, tmp_path / "clone")
    check = _rlobs("render", BLUEPRINT, "-o", tmp_path / "clone", "--check")
    assert check.returncode == 0 and " 0 would change" in check.stdout


# -- planted and tampered journals ----------------------------------------------------------------------------------


def _interrupted(out: Path) -> None:
    """OLD written, then NEW stopped right after its commit point: a journal this machine staged, not replayed."""
    _write(OLD, out)
    with kills.stopped_after_commit(), pytest.raises(kills.Stopped), open_bundle(out, _any, write=True) as bundle:
        bundle.write(bundle.plan(NEW, owner=ME))
    assert (out / JOURNAL).exists()


def _extra_entry(out: Path) -> None:  # an extra file added to the journal: not the journal this machine staged
    journal = json.loads((out / JOURNAL).read_text())
    journal["files"].append({"path": "zz-evil.yaml", "staged": "0", "digest": None, "replaces": None})
    (out / JOURNAL).write_text(json.dumps(journal))


def _edited_target(out: Path) -> None:
    (out / "a.yaml").write_text("a: mine\n")


def _staged_symlink(out: Path) -> None:
    (out / "elsewhere.yaml").write_text("a: 2\n")
    (out / STAGING / "0").unlink()
    (out / STAGING / "0").symlink_to(out / "elsewhere.yaml")


def _staged_fifo(out: Path) -> None:
    (out / STAGING / "0").unlink()
    os.mkfifo(out / STAGING / "0")


def _staged_bytes(out: Path) -> None:
    (out / STAGING / "0").write_text("a: 3\n")


TAMPERED: dict[str, tuple[Callable[[Path], None], str]] = {
    "an extra entry": (_extra_entry, "this machine did not start"),
    "a hand-edited target": (_edited_target, "entry 0 ('a.yaml'): a.yaml changed since the write began"),
    "a staged symlink": (_staged_symlink, f"entry 0 ('a.yaml'): {STAGING}/0 is not a regular file"),
    "a staged FIFO": (_staged_fifo, f"entry 0 ('a.yaml'): {STAGING}/0 is not a regular file"),
    "other staged bytes": (_staged_bytes, f"entry 0 ('a.yaml'): {STAGING}/0 is not the file staged"),
}


@pytest.mark.parametrize("tamper", TAMPERED.values(), ids=TAMPERED.keys())
def test_a_tampered_journal_is_refused_in_one_line_and_changes_nothing(
    tmp_path: Path, tamper: tuple[Callable[[Path], None], str]
) -> None:
    out = tmp_path / "out"
    _interrupted(out)
    change, expected = tamper
    change(out)
    before = snapshot(out)
    for write in (False, True):  # the previews (--check, --dry-run, --diff) and the render
        with pytest.raises(RlobsError) as exc, open_bundle(out, _any, write=write):
            pass
        [line] = exc.value.lines()
        assert line.startswith(f"{out / JOURNAL}: ") and expected in line, line
        assert line.endswith(f"remove {JOURNAL} and {STAGING}/ to keep the bundle as it is"), line
        assert snapshot(out) == before


def test_every_file_a_replay_changes_is_listed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _interrupted(out)
    listed = ("a.yaml", "b.yaml", "c/c.yaml", "d.yaml")  # replaced, replaced, deleted, created
    assert _preview(NEW, out) == listed
    with open_bundle(out, _any, write=True) as bundle:
        changes = bundle.plan(NEW, owner=ME)
    assert changes.replayed == listed and set(listed) <= set(changes.changed)
    assert not (out / JOURNAL).exists() and (out / "a.yaml").read_text() == "a: 2\n"


def test_the_bundle_ignores_the_journal_and_the_staging_folder(tmp_path: Path) -> None:
    _write(OLD, tmp_path)
    assert (tmp_path / ".gitignore").read_text().splitlines()[1:] == [f"/{JOURNAL}", f"/{STAGING}/"]


# -- nested bundles -------------------------------------------------------------------------------------------------


def test_a_bundle_is_never_written_inside_another_one(tmp_path: Path) -> None:
    outer = tmp_path / "fleet"
    _write(OLD, outer)
    before = snapshot(outer)
    for args in ([], ["--check"], ["--force"]):
        done = _rlobs("render", BLUEPRINT, "-o", outer / "clusters" / "x", *args)
        assert done.returncode == 2, done.stdout + done.stderr
        line = f"{outer}: holds the bundle of profile rl (target eks); a bundle is never written inside another one"
        assert line in (done.stdout if args == ["--check"] else done.stderr), done.stdout + done.stderr
        assert args == ["--check"] or len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert snapshot(outer) == before


def test_a_bundle_never_holds_another_one(tmp_path: Path, rendered_eks_jark: Path) -> None:
    out = tmp_path / "out"
    copy_bundle(rendered_eks_jark, out)  # as `rlobs render BLUEPRINT -o out` leaves it
    _write(OLD, tmp_path / "inner")
    os.rename(tmp_path / "inner", out / "docs" / "inner")  # planted below it (committed there, say)
    before = snapshot(out)
    for args in ([], ["--check"], ["--force"]):
        done = _rlobs("render", BLUEPRINT, "-o", out, *args)
        assert done.returncode == 2, done.stdout + done.stderr
        inner = f"{out / 'docs' / 'inner'}: holds the bundle of profile rl (target eks); a bundle never holds another"
        assert inner in done.stdout + done.stderr
    assert snapshot(out) == before


def test_a_relative_cache_home_is_ignored(tmp_path: Path) -> None:
    """XDG_CACHE_HOME must be absolute (XDG Base Directory spec): a relative one never makes a folder where rlobs
    runs; the record goes under $HOME/.cache instead."""
    env = {**os.environ, "XDG_CACHE_HOME": "cache-here", "HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "rlobs", "render", str(BLUEPRINT), "-o", str(tmp_path / "out")]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "cache-here").exists()
    assert (tmp_path / "home" / ".cache" / "rlobs").is_dir()
