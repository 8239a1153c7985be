"""Helpers of the GKE target's tests: the GKE profiles, their rendered bundles on disk, the dry-run output."""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

from helpers import all_profiles, profile
from rlobs.bundle import build

GKE_PROFILES = sorted(name for name, text in all_profiles().items() if "\ntarget: gke" in text)


def write_bundle(name: str, root: Path) -> Path:
    """Render profile `name` and write it under root/name, executable bits included."""
    out = root / name
    for r in build(profile(name)):
        path = out / r.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(r.text, encoding="utf-8")
        if r.executable:
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return out


def run_script(script: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {})}
    return subprocess.run(
        ["bash", str(script), *args], capture_output=True, text=True, check=False, env=full, timeout=60
    )


def commands(stdout: str) -> list[list[str]]:
    """The commands a --dry-run printed (`+ word word...` lines), split back into words."""
    return [shlex.split(line[2:]) for line in stdout.splitlines() if line.startswith("+ ")]


def bare_path(root: Path) -> str:
    """A PATH with only the tools the scripts use besides gcloud and kubectl, so a dry run must not need them."""
    bin_dir = root / "bare-bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("bash", "cat", "dirname", "head", "sort"):
        found = shutil.which(name)
        assert found, name
        if not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(found)
    return str(bin_dir)
