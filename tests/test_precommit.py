"""The project's .pre-commit-hooks.yaml, run by the real pre-commit against a throwaway GitOps repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from testing.helpers import REPO, tool

pytestmark = pytest.mark.slow


def test_hook_definition_runs_the_check_over_the_quick_start_layout() -> None:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "rlobs-check" and hook["entry"] == "rlobs render --check"
    assert hook["args"] == ["rlobs.yaml", "--output", "observability"]
    assert hook["pass_filenames"] is False and hook["language"] == "python"


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=600)


def test_pre_commit_passes_a_rendered_bundle_and_fails_drift(tmp_path: Path) -> None:
    pre_commit = tool("pre-commit", "runs the hook as a GitOps repository would (pip install pre-commit)")
    git = tool("git", "pre-commit works on git repositories")
    if not (REPO / ".git").exists():
        pytest.skip("the project is not a git checkout, so pre-commit cannot use it as a hook repository")
    rlobs = shutil.which("rlobs", path=str(Path(sys.executable).parent)) or "rlobs"
    who = {"GIT_AUTHOR_NAME": "ci", "GIT_AUTHOR_EMAIL": "ci@example.com"}
    env = {
        **os.environ,
        **who,
        "GIT_COMMITTER_NAME": "ci",
        "GIT_COMMITTER_EMAIL": "ci@example.com",
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "NO_COLOR": "1",
    }
    gitops = tmp_path / "gitops"
    gitops.mkdir()
    for cmd in (
        [git, "init", "-q"],
        [rlobs, "init", "--blueprint", "eks-jark", "-o", "rlobs.yaml"],
        [rlobs, "render", "rlobs.yaml", "-o", "observability"],
        [git, "add", "-A"],
    ):
        assert _run(cmd, gitops, env).returncode == 0, cmd
    # try-repo installs the hook from the project checkout (uncommitted changes included) into its own venv.
    hook = [pre_commit, "try-repo", str(REPO), "rlobs-check", "--all-files"]
    ok = _run(hook, gitops, env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "rlobs bundle matches its profile" in ok.stdout and "Passed" in ok.stdout

    # A profile change committed without a render is drift: the hook fails and names the files.
    profile = gitops / "rlobs.yaml"
    profile.write_text(profile.read_text(encoding="utf-8").replace("namespace: rl\n", "namespace: rl-2\n", 1))
    _run([git, "add", "-A"], gitops, env)
    drift = _run(hook, gitops, env)
    assert drift.returncode == 1, drift.stdout + drift.stderr
    assert "Failed" in drift.stdout and "would update" in drift.stdout, drift.stdout
