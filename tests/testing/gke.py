"""Helpers of the GKE target's tests: the GKE profiles, their rendered bundles on disk, the dry-run output."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

from rlobs.targets.gke import project
from rlobs.targets.gke.profile import GkeProfile
from testing.bundles import build
from testing.helpers import all_profiles, gke_profile, profile

GKE_PROFILES = sorted(name for name, text in all_profiles().items() if "\ntarget: gke" in text)
SCOPE_FLAG = f"--managed-otel-scope={project.OTEL_SCOPE}"


def managed_by(p: GkeProfile, manage: str, *, deletion_protection: bool = False) -> GkeProfile:
    """The profile with gke.manage set; deletionProtection as the profile rules want it for that mode."""
    creates = manage == "terraform" and p.gke.cluster_mode != "existing"
    update = {"manage": manage, "deletion_protection": deletion_protection if creates else None}
    return p.model_copy(update={"gke": p.gke.model_copy(update=update)})


def scripts_profile(name: str) -> GkeProfile:
    """GKE profile `name` with the scripts owning the set-up (every script rendered)."""
    return managed_by(gke_profile(name), "scripts")


def terraform_profiles() -> dict[str, GkeProfile]:
    """Every GKE profile with Terraform owning the set-up, named `<profile>@terraform`."""
    return {f"{n}@terraform": managed_by(gke_profile(n), "terraform") for n in GKE_PROFILES} | {
        n: gke_profile(n) for n in GKE_PROFILES if gke_profile(n).gke.manage == "terraform"
    }


def write_bundle(name: str, root: Path, p: GkeProfile | None = None) -> Path:
    """Render profile `name` (or `p`, written under that name) under root/name, executable bits included."""
    out = root / name
    for r in build(p or profile(name)):
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


def gcloud_run(gcloud: str, cmd: list[str], config: Path) -> subprocess.CompletedProcess[str]:
    """Run a printed gcloud command line with a real gcloud and an empty config (so no account)."""
    env = {"CLOUDSDK_CONFIG": str(config), "CLOUDSDK_CORE_DISABLE_PROMPTS": "1", "PATH": "/usr/bin:/bin"}
    return subprocess.run([gcloud, *cmd[1:]], capture_output=True, text=True, check=False, env=env, timeout=60)


def gcloud_usage_error(proc: subprocess.CompletedProcess[str]) -> str | None:
    """None when gcloud accepted the command line (rc 2 = usage error, found before any login); else the reason.
    Tolerates only --managed-otel-scope."""
    if proc.returncode != 2:
        return None
    found = re.search(r"unrecognized arguments: (.*)", proc.stderr)
    # gcloud before 576.0.0 lacks --managed-otel-scope; it lists every unknown argument (plus a "did you mean"
    # hint), so an error naming only that flag means the rest of the line parsed.
    if found and re.sub(r"\(did you mean [^)]*\)", "", found.group(1)).split() == [SCOPE_FLAG]:
        return None
    return proc.stderr.strip().splitlines()[0]
