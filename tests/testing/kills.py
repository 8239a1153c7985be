"""The real CLI killed with SIGKILL, at its Nth rename or after a delay, and what the next render's recovery then
leaves: the kill trials of tests/test_write.py (one bundle) and tests/test_write_kills.py (many, a fleet)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from rlobs.bundle.manifest import JOURNAL, LOCK_TIMEOUT
from rlobs.bundle.write import open_bundle
from rlobs.fleet.paths import producible
from testing.helpers import TESTS


def rlobs(*args: str, kill_at: int | str = 0) -> subprocess.CompletedProcess[str]:
    """The CLI, killed at its rename `kill_at`, or signalled as it says (testing.killer: `INT:commit`, `TERM:1`; 0:
    run to the end and count them on stderr)."""
    env = {**os.environ, "PYTHONPATH": str(TESTS), "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "testing.killer", str(kill_at), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, timeout=120)


def forked(warm: list[str], trials: list[tuple[str, list[str]]], logs: Path) -> list[tuple[int, str]]:
    """Each trial (WHEN as rlobs() takes it, rlobs args) run by a child forked from one process that rendered `warm`
    first (testing.killer --many): its exit status (negative: ended by that signal) and stderr."""
    import json

    logs.mkdir(parents=True, exist_ok=True)
    spec = {"warm": warm, "trials": [[when, args, str(logs / f"{i}.err")] for i, (when, args) in enumerate(trials)]}
    (logs / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(TESTS), "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "testing.killer", "--many", str(logs / "spec.json")]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, timeout=600)
    codes = json.loads(done.stdout.strip().splitlines()[-1])
    return [(code, (logs / f"{i}.err").read_text(encoding="utf-8")) for i, code in enumerate(codes)]


def renames(done: subprocess.CompletedProcess[str]) -> int:
    """How many renames a run of rlobs() to its end made."""
    assert done.returncode == 0, done.stderr
    return int(done.stderr.strip().splitlines()[-1].removeprefix("renames: "))


def steps(done: subprocess.CompletedProcess[str]) -> list[tuple[int, str]]:
    """The renames (1-based) a run of rlobs() to its end made at each step of its write: the first, the middle and
    the last of every run of renames of one kind (testing.killer: a user-cache record, the commit point, the manifest,
    a bundle file), so every change from one step to the next, in every bundle, is tried; each with its kind. The
    renames inside a run of one kind are the same step on another file (one loop in rlobs.bundle.tree)."""
    renames(done)
    kinds = done.stderr.strip().splitlines()[-2].removeprefix("kinds: ").split()
    runs: list[list[int]] = []
    for n, kind in enumerate(kinds, 1):
        if runs and kinds[runs[-1][0] - 1] == kind:
            runs[-1].append(n)
        else:
            runs.append([n])
    return [(n, kinds[n - 1]) for n in sorted({n for run in runs for n in (run[0], run[len(run) // 2], run[-1])})]


def killed_after(delay: float, *args: str) -> None:
    """The CLI, killed `delay` seconds after it started (only the main process: a pool's workers are orphaned,
    as the OOM killer leaves them)."""
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlobs", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def recover(out: Path, *, timeout: float = LOCK_TIMEOUT) -> None:
    """What the next render does first in the bundle at `out`, waiting up to `timeout` seconds for its lock."""
    with open_bundle(out, producible, write=True, timeout=timeout):
        pass


def mix(found: dict[str, object], old: dict[str, object], new: dict[str, object]) -> list[str]:
    """Where a bundle differs from both the old and the new one: what a failed trial shows."""
    paths = sorted(set(found) | set(old) | set(new))
    return [p for p in paths if found.get(p) != old.get(p) and found.get(p) != new.get(p)][:10]


def side(found: dict[str, object], old: dict[str, object], new: dict[str, object]) -> str:
    """ "old" or "new", whichever `found` is exactly; fails showing how it differs (a mix, or a stray entry)."""
    if found == old:
        return "old"
    assert found == new, {
        "differs from both": mix(found, old, new),
        "not in the new one": sorted(set(found) - set(new))[:10],
        "missing from the new one": sorted(set(new) - set(found))[:10],
        "still old": sorted(p for p in found if p in old and found[p] == old[p] != new.get(p))[:10],
    }
    return "new"


class Stopped(BaseException):
    """Stands for SIGKILL in an in-process render: nothing of the render's own error handling catches it."""


@contextlib.contextmanager
def stopped_after_commit() -> Iterator[None]:
    """A render in the block stops (raises Stopped) right after a write's commit point, the journal's rename, as
    a kill there leaves it: committed, nothing rolled forward yet."""
    real = os.replace

    def replace(src: str, dst: str, **kw: object) -> None:
        real(src, dst, **kw)  # type: ignore[arg-type]
        if dst == JOURNAL:
            raise Stopped

    with mock.patch.object(os, "replace", replace):
        yield
