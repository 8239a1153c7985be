"""The real CLI killed with SIGKILL while it writes many bundles (several profiles, rlobs.batch) or a fleet's one
bundle: at renames across the write and at random instants, the next render's recovery leaves each bundle exactly
old or new, and a killed render's workers end with it (tests/test_write.py has the one-bundle trials)."""

from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from testing import kills
from testing.helpers import REPO
from testing.trees import copy_bundle, snapshot

pytestmark = pytest.mark.slow  # renders in subprocesses, dozens of times

_NAMES = ("rl-0", "rl-1", "rl-2")
_RENAME_TRIALS = 4  # kills at renames spread evenly over the write (every one would take minutes)
_RANDOM_TRIALS = 4


def _profiles(folder: Path, blueprint: str) -> list[str]:
    """One profile of `blueprint` per name in _NAMES: a render of each blueprint's set over the other's is a
    target switch in every bundle (files created, updated and deleted, and folders emptied)."""
    folder.mkdir(parents=True)
    text = (REPO / "blueprints" / f"{blueprint}.yaml").read_text(encoding="utf-8")
    paths = []
    for name in _NAMES:
        path = folder / f"{name}.yaml"
        path.write_text(re.sub(r"(?m)^  name: rl-\w+$", f"  name: {name}", text, count=1), encoding="utf-8")
        paths.append(str(path))
    return paths


def _fleets(folder: Path) -> tuple[str, str]:
    """The example fleet, and a next version of it: a cluster dropped, a shared default changed."""
    folder.mkdir(parents=True)
    text = (REPO / "blueprints" / "fleet" / "rl-fleet.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    data["clusters"] = [c for c in data["clusters"] if c["name"] != "prod-usw2-b"]
    data["defaults"]["alerts"]["mfuLow"]["threshold"] = 0.3
    (folder / "old.yaml").write_text(text, encoding="utf-8")
    (folder / "new.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(folder / "old.yaml"), str(folder / "new.yaml")


class _Case:
    """A write of `new` over what `old` rendered into a folder, and the bundles it holds."""

    def __init__(self, old: list[str], new: list[str], bundles: tuple[str, ...]) -> None:
        self.old, self.new, self.bundles = old, new, bundles

    def render(self, args: list[str], out: Path, *, kill_at: int = 0) -> list[tuple[int, str]]:
        """Render `args` into `out`: the renames at each step of its write and their kinds (kills.steps; the last is
        its last rename), or none when killed at rename `kill_at`."""
        done = kills.rlobs("render", *args, "-o", str(out), "--force", kill_at=kill_at)
        if kill_at:
            assert done.returncode == -signal.SIGKILL, done.stderr
            return []
        return kills.steps(done)

    def snapshots(self, out: Path) -> dict[str, dict[str, bytes | str | None]]:
        return {b: snapshot(out / b) for b in self.bundles}


def _trials(case: _Case, tmp_path: Path, seconds: float) -> None:
    old_dir, new_dir, switch = tmp_path / "old", tmp_path / "new", tmp_path / "switch"
    case.render(case.old, old_dir)
    case.render(case.new, new_dir)
    copy_bundle(old_dir, switch)
    renames = case.render(case.new, switch)[-1][0]
    old, new = case.snapshots(old_dir), case.snapshots(new_dir)
    assert case.snapshots(switch) == new
    rng = random.Random(15)
    at_renames = {1 + round(i * (renames - 1) / (_RENAME_TRIALS - 1)) for i in range(_RENAME_TRIALS)}
    plans = [(n, 0.0) for n in sorted(at_renames)] + [(0, rng.uniform(0.1, seconds)) for _ in range(_RANDOM_TRIALS)]

    def trial(index: int) -> Path:
        out = tmp_path / f"trial-{index}"
        copy_bundle(old_dir, out)
        kill_at, delay = plans[index]
        if kill_at:
            case.render(case.new, out, kill_at=kill_at)
        else:
            kills.killed_after(delay, "render", *case.new, "-o", str(out), "--force")
        return out

    sides: dict[str, int] = {"old": 0, "new": 0}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for out in pool.map(trial, range(len(plans))):
            for bundle in case.bundles:
                kills.recover(out / bundle, timeout=1)  # no worker holds its lock
                sides[kills.side(snapshot(out / bundle), old[bundle], new[bundle])] += 1
    assert sides["old"] and sides["new"], sides  # kills before and after the commit points were both tried


def test_a_killed_render_of_many_profiles_leaves_each_bundle_old_or_new(tmp_path: Path) -> None:
    old = _profiles(tmp_path / "gke", "gke-managed-otel")
    new = _profiles(tmp_path / "eks", "eks-jark")
    _trials(_Case(old, new, _NAMES), tmp_path, seconds=1.5)


def test_a_killed_fleet_render_leaves_the_old_or_the_new_fleet_bundle(tmp_path: Path) -> None:
    old, new = _fleets(tmp_path / "fleets")
    _trials(_Case([old], [new], (".",)), tmp_path, seconds=2.0)


def test_the_workers_of_a_killed_render_end_with_it(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    from rlobs.bundle import pool

    if pool.workers_for(len(_NAMES)) < 2:
        pytest.skip("renders without a pool here (one core, or no fork)")
    paths = _profiles(tmp_path / "eks", "eks-jark")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlobs", "render", *paths, "-o", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    expected = pool.workers_for(len(_NAMES))
    deadline = time.monotonic() + 30
    workers: list[str] = []
    while len(workers) < expected and proc.poll() is None and time.monotonic() < deadline:
        if not children.exists():  # a kernel without CONFIG_PROC_CHILDREN
            proc.kill()
            pytest.skip("needs /proc/<pid>/task/<pid>/children to find the workers")
        workers = children.read_text().split()
        time.sleep(0.002)
    assert len(workers) == expected, f"found workers {workers} of {expected}"
    proc.send_signal(signal.SIGKILL)  # as the OOM killer ends it: no handler runs, no pool shutdown
    proc.wait()
    deadline = time.monotonic() + 10
    while (alive := [w for w in workers if _state(w) not in ("gone", "Z")]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive, f"workers {alive} outlived the render (they would hold its bundles' locks)"
    for name in _NAMES:  # and the next render goes ahead at once, not after the lock's timeout
        if (tmp_path / "out" / name).exists():
            kills.recover(tmp_path / "out" / name, timeout=1)


def _state(pid: str) -> str:
    """The process's state letter (Z: ended, not reaped yet), or "gone"."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


# -- Ctrl-C and SIGTERM at the commit point, and before it ----------------------------------------------------------


def _signal_cases(tmp_path: Path) -> dict[str, _Case]:
    gke, eks = _profiles(tmp_path / "gke", "gke-managed-otel"), _profiles(tmp_path / "eks", "eks-jark")
    old, new = _fleets(tmp_path / "fleets")
    return {
        "profile": _Case(gke[:1], eks[:1], (".",)),
        "profiles": _Case(gke, eks, _NAMES),
        "fleet": _Case([old], [new], (".",)),
    }


# (case, signal, where): `commit` is the first commit point (a render of several profiles commits every bundle
# after it), `1` the first rename, made while staging (this machine's record of the journal).
_SIGNAL_TRIALS = [
    ("profile", "INT", "commit"),
    ("profile", "TERM", "1"),
    ("profiles", "TERM", "commit"),
    ("profiles", "INT", "1"),
    ("fleet", "INT", "1"),
    ("fleet", "TERM", "commit"),
]


def test_ctrl_c_and_sigterm_finish_a_committed_write_and_discard_an_uncommitted_one(tmp_path: Path) -> None:
    cases = _signal_cases(tmp_path)
    refs = {name: (tmp_path / f"{name}-old", tmp_path / f"{name}-new") for name in cases}
    renders = [(c.old, refs[n][0], c) for n, c in cases.items()] + [(c.new, refs[n][1], c) for n, c in cases.items()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda r: r[2].render(r[0], r[1]), renders))

    def trial(index: int) -> tuple[int, subprocess.CompletedProcess[str], Path]:
        name, sig, where = _SIGNAL_TRIALS[index]
        out = tmp_path / f"signal-{index}"
        copy_bundle(refs[name][0], out)
        return index, kills.rlobs("render", *cases[name].new, "-o", str(out), "--force", kill_at=f"{sig}:{where}"), out

    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(trial, range(len(_SIGNAL_TRIALS))))
    for index, proc, out in done:
        name, sig, where = _SIGNAL_TRIALS[index]
        case, (old_dir, new_dir) = cases[name], refs[name]
        committed = where == "commit"
        expected = "interrupted after the commit: finished" if committed else "interrupted, nothing written"
        assert proc.returncode == 130, (name, sig, where, proc.stderr)
        assert f"error: {expected}" in proc.stderr.splitlines(), proc.stderr
        assert "Traceback" not in proc.stderr
        # Nothing left to recover: exactly the new bundles, or exactly the old ones, with no journal or staging.
        assert case.snapshots(out) == case.snapshots(new_dir if committed else old_dir), (name, sig, where)
    index, _, out = done[2]  # several profiles, finished after a SIGTERM: rendering the old ones back is the old
    cases["profiles"].render(cases["profiles"].old, out)
    assert cases["profiles"].snapshots(out) == cases["profiles"].snapshots(refs["profiles"][0])


def _signalled_after(delay: float, sig: signal.Signals, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlobs", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    time.sleep(delay)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["profile", "profiles", "fleet"])
def test_ctrl_c_and_sigterm_at_every_step_of_the_write_and_at_random_instants_leave_old_or_new(
    tmp_path: Path, name: str
) -> None:
    """Written down first: whenever SIGINT or SIGTERM arrives, in a render of one profile, of several or of a fleet,
    each bundle folder holds exactly the old or the new bundle; the render exits 130 (0: done before it; ended by
    it: Python was starting or exiting) with a message saying which: nothing written (old) or finished after the
    commit (new); and rendering the old input back gives the old bundles. The signal comes at each step of the
    write over the old bundles (kills.steps: the first, middle and last rename of each kind, in every bundle) and
    at random instants."""
    case = _signal_cases(tmp_path)[name]
    old_dir, new_dir, switch = tmp_path / "old", tmp_path / "new", tmp_path / "switch"
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(case.render, (case.old, case.new), (old_dir, new_dir)))
    copy_bundle(old_dir, switch)
    points = case.render(case.new, switch)  # the write each trial interrupts: the new bundles over the old
    old, new = case.snapshots(old_dir), case.snapshots(new_dir)
    assert case.snapshots(switch) == new
    rng = random.Random(25)
    at_steps = [(("INT", "TERM")[i % 2], n) for i, (n, _) in enumerate(points)]
    outs = [tmp_path / f"t{i}" for i in range(len(at_steps) + 4)]
    for out in outs:
        copy_bundle(old_dir, out)
    args = [["render", *case.new, "-o", str(out), "--force"] for out in outs]
    warm = ["render", *case.new, "-o", str(tmp_path / "warm"), "--force"]
    runs = kills.forked(warm, [(f"{sig}:{n}", a) for (sig, n), a in zip(at_steps, args, strict=False)], tmp_path)
    instants = [(rng.uniform(0.05, 0.8), rng.choice((signal.SIGINT, signal.SIGTERM))) for _ in outs[len(at_steps) :]]
    with ThreadPoolExecutor(max_workers=2) as pool:  # at random instants, from a fresh interpreter's start
        signalled = pool.map(lambda i: _signalled_after(*instants[i], *args[len(at_steps) + i]), range(len(instants)))
        runs += [(done.returncode, done.stderr) for done in signalled]
    sides = []
    for out, (code, stderr) in zip(outs, runs, strict=True):
        found = case.snapshots(out)
        assert found in (old, new), (out.name, kills.mix(found, old, new), stderr[-500:])  # type: ignore[arg-type]
        side = "new" if found == new else "old"
        sides.append(side)
        if code == 0:  # done before the signal
            assert side == "new", out.name
            continue
        if code < 0:  # Python starting or exiting, before or after rlobs's handler: ended by a signal
            continue
        assert code == 130 and "Traceback" not in stderr, (out.name, stderr[-500:])
        if side == "old" and not stderr.strip():
            continue  # in Typer's own parsing, before any command ran: it exits 130 and prints nothing
        said = "interrupted after the commit: finished" if side == "new" else "interrupted, nothing written"
        assert f"error: {said}" in stderr.splitlines(), (out.name, stderr[-500:])
    assert {"old", "new"} <= set(sides), sides
    back = next(out for out, side in zip(outs, sides, strict=True) if side == "new")
    case.render(case.old, back)
    assert case.snapshots(back) == old
