"""The writer under real faults, through the installed console script: as an unprivileged user (setpriv) in a read-only
bundle or below an unwritable parent, and on a tmpfs too small for the new bundle (a user and mount namespace). Each
ends in one `error:` line and exit 2 with the old bundle unchanged, and the next render with room leaves no staging
file behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rlobs.bundle.manifest import JOURNAL, STAGING
from testing.helpers import REPO
from testing.trees import snapshot

pytestmark = pytest.mark.slow

RLOBS = Path(sys.executable).with_name("rlobs")  # the venv's console script
NOBODY = 65534
_REQUIRED = os.environ.get("RLOBS_REQUIRE_TOOLS") == "1" or bool(os.environ.get("CI"))


def _blueprint(name: str) -> str:
    return (REPO / "blueprints" / f"{name}.yaml").read_text(encoding="utf-8")


# Old and new bundle: the same profile before and after `rayLogs: false`, which drops files (stale ones to delete) and
# changes others.
OLD = _blueprint("eks-jark")
NEW = OLD.replace("eks:\n", "eks:\n  rayLogs: false\n", 1)
# For the full disk: a new workload name as well, so that nearly every file changes and staging needs real room.
WIDE = NEW.replace("grpo-trainer", "grpo-trainer-b")


def _leftovers(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if STAGING in p.name or p.name == JOURNAL)


def _one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


# ---- as a user without privileges ---------------------------------------------------------------------------------


# Runs Python again from inside, as the render does (its python-hcl2 worker): the interpreter must be reachable too.
_PROBE = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import rlobs'], check=True)"


def _setpriv() -> list[str]:
    """The command prefix that runs as nobody, or a skip (a failure under RLOBS_REQUIRE_TOOLS) saying why not."""
    why = None
    if os.geteuid() != 0:
        why = "needs root to drop to user 65534 with setpriv"
    elif shutil.which("setpriv") is None:
        why = "needs setpriv (util-linux)"
    else:
        user = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        # Where the venv's interpreter sits below a folder only root may search (a pyenv Python under /root), the user
        # also gets CAP_DAC_READ_SEARCH, and only that: it may read and search everywhere but write nowhere it could
        # not before, so the write failures these tests make are still real.
        for prefix in (user, [*user, "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]):
            probe = subprocess.run([*prefix, sys.executable, "-c", _PROBE], capture_output=True, text=True, check=False)
            if probe.returncode == 0:
                return prefix
        why = f"user {NOBODY} cannot run {sys.executable} even with CAP_DAC_READ_SEARCH: {probe.stderr.strip()}"
    if _REQUIRED:
        pytest.fail(why)
    pytest.skip(why)


def _as_nobody(prefix: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1", "HOME": "/nonexistent"}
    return subprocess.run(
        [*prefix, str(RLOBS), *args], capture_output=True, text=True, env=env, check=False, timeout=120
    )


@pytest.fixture
def nobody_dir() -> Iterator[Path]:
    """A folder user 65534 owns, in a folder of its own under /tmp: pytest's base temp folder is private to root, and
    other pytest runs reset its mode at any time."""
    base = Path(tempfile.mkdtemp(prefix="rlobs-nobody-"))
    try:
        base.chmod(0o711)  # traverse only
        home = base / "nobody"
        home.mkdir()
        os.chown(home, NOBODY, NOBODY)
        for name, text in (("old.yaml", OLD), ("new.yaml", NEW)):
            (home / name).write_text(text, encoding="utf-8")
            (home / name).chmod(0o644)
        yield home
    finally:
        for path in [base, *base.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(base)


def test_a_read_only_bundle_holding_a_stale_file_is_one_error_and_stays_as_it_was(nobody_dir: Path) -> None:
    prefix = _setpriv()
    out = nobody_dir / "out"
    assert _as_nobody(prefix, "render", str(nobody_dir / "old.yaml"), "-o", str(out)).returncode == 0
    assert (out / "workload/ray-logs-patch.yaml").exists()  # stale once rayLogs is false
    for path in [out, *out.rglob("*")]:
        path.chmod(path.stat().st_mode & ~0o222)
    before = snapshot(out)
    line = _one_error(_as_nobody(prefix, "render", str(nobody_dir / "new.yaml"), "-o", str(out)))
    assert str(out) in line, line
    assert snapshot(out) == before
    print(line)


def test_an_unwritable_parent_is_one_error_and_creates_nothing(nobody_dir: Path) -> None:
    prefix = _setpriv()
    parent = nobody_dir / "locked"
    parent.mkdir()
    os.chown(parent, NOBODY, NOBODY)
    parent.chmod(0o555)
    line = _one_error(_as_nobody(prefix, "render", str(nobody_dir / "new.yaml"), "-o", str(parent / "out")))
    assert str(parent) in line, line
    assert list(parent.iterdir()) == []
    print(line)


# ---- on a full disk -------------------------------------------------------------------------------------------------

# Runs inside `unshare --user --map-root-user --mount`: mounts a tmpfs that holds the old bundle with little room to
# spare, renders the new bundle into it (out of space while staging), then grows the tmpfs and renders again.
_DRIVER = textwrap.dedent(
    """
    import json, os, subprocess, sys
    rlobs, work, size, more = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    mnt = os.path.join(work, "mnt")
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mnt], check=True)
    out = os.path.join(mnt, "out")

    def render(profile, *extra):
        proc = subprocess.run([rlobs, "render", os.path.join(work, profile), "-o", out, *extra],
                              capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
        return {"rc": proc.returncode, "stderr": proc.stderr}

    def tree():
        found = {}
        for folder, _, files in os.walk(out):
            for name in files:
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    found[os.path.relpath(path, out)] = f.read().hex()
        return found

    steps = {"old": render("old.yaml")}
    steps["old_tree"] = tree()
    steps["full"] = render("new.yaml")
    steps["after_full"] = tree()
    subprocess.run(["mount", "-o", f"remount,size={more}", mnt], check=True)
    steps["with_room"] = render("new.yaml")
    steps["check"] = render("new.yaml", "--check")
    steps["final_tree"] = tree()
    print(json.dumps(steps))
    """
)


def _tmpfs_steps(tmp_path: Path, size: int) -> dict[str, Any]:
    if shutil.which("unshare") is None:
        (pytest.fail if _REQUIRED else pytest.skip)("needs unshare (util-linux)")
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        # A machine capability (kernel.unprivileged_userns_clone, a container's seccomp profile), not a tool.
        pytest.skip(f"the kernel refuses a user and mount namespace here: {probe.stderr.strip()}")
    (tmp_path / "mnt").mkdir()
    (tmp_path / "old.yaml").write_text(OLD, encoding="utf-8")
    (tmp_path / "new.yaml").write_text(WIDE, encoding="utf-8")
    (tmp_path / "driver.py").write_text(_DRIVER, encoding="utf-8")
    cmd = ["unshare", "--user", "--map-root-user", "--mount", sys.executable, str(tmp_path / "driver.py")]
    proc = subprocess.run(
        [*cmd, str(RLOBS), str(tmp_path), str(size), str(64 << 20)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    steps: dict[str, Any] = json.loads(proc.stdout)
    return steps


def _pages(tree: dict[str, str]) -> int:
    """Bytes tmpfs charges for these files: whole 4 KiB pages."""
    return sum(-(-len(hexed) // 2 // 4096) * 4096 for hexed in tree.values())


def test_a_full_disk_mid_bundle_is_one_error_keeps_the_old_bundle_and_leaves_no_staging(tmp_path: Path) -> None:
    # Measure the old bundle on disk first, then give the tmpfs that plus 16 KiB: room for a few staged files only.
    sizing = tmp_path / "sizing"
    sizing.mkdir()
    (sizing / "old.yaml").write_text(OLD, encoding="utf-8")
    done = subprocess.run([str(RLOBS), "render", str(sizing / "old.yaml"), "-o", str(sizing / "out")], check=False)
    assert done.returncode == 0
    old_tree = {
        str(p.relative_to(sizing / "out")): p.read_bytes().hex() for p in (sizing / "out").rglob("*") if p.is_file()
    }
    steps = _tmpfs_steps(tmp_path, _pages(old_tree) + (16 << 10))

    assert steps["old"]["rc"] == 0, steps["old"]
    full = steps["full"]
    lines = full["stderr"].strip().splitlines()
    assert full["rc"] == 2 and len(lines) == 1 and lines[0].startswith("error: "), full
    assert "No space left" in lines[0], lines[0]
    print(lines[0])
    # The old bundle, exactly: nothing of the new one, and the staging files gone with the failed write.
    assert steps["after_full"] == steps["old_tree"]
    assert steps["with_room"]["rc"] == 0 and steps["check"]["rc"] == 0, steps
    final = steps["final_tree"]
    assert not [p for p in final if STAGING in p or p.endswith(JOURNAL)], sorted(final)
    assert "workload/ray-logs-patch.yaml" not in final
