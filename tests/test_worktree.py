"""One source for where an EKS bundle lives in its Git repository: the folder `render -o` writes, when it is in a git
work tree, is eks.gitops.path; the root Application, every runbook link and the pre-commit hook's arguments follow
it, and a profile stating another path is refused with one located line."""

from __future__ import annotations

import os
import re
import select
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from testing.helpers import REPO, tool

RLOBS = Path(sys.executable).parent / "rlobs"
BLUEPRINT = (REPO / "blueprints" / "eks-jark.yaml").read_text(encoding="utf-8")
REPO_URL = "https://github.com/rl-team/gitops.git"


def _git_repo(root: Path) -> Path:
    git = tool("git", "the new-user run starts in a real git repository")
    subprocess.run([git, "init", "-q", str(root)], check=True)
    return root


def _on_terminal(argv: list[str], cwd: Path, answers: list[tuple[str, str]]) -> str:
    """Run `argv` on a pseudo-terminal, typing each answer once its prompt is shown; the whole transcript."""
    master, slave = os.openpty()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    seen, pending = "", list(answers)
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 120)  # a guard against a hang, not a timing assertion
            assert ready, f"no output for 120 s; so far:\n{seen}"
            try:
                chunk = os.read(master, 4096).decode()
            except OSError:  # EIO: the process closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            if pending and pending[0][0] in seen.rsplit("\n", 1)[-1]:
                os.write(master, (pending.pop(0)[1] + "\n").encode())
    finally:
        os.close(master)
    assert proc.wait(timeout=120) == 0, seen
    assert not pending, seen
    return seen.replace("\r\n", "\n")


def test_a_new_user_run_renders_where_argo_cd_the_runbook_links_and_the_hook_look(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "gitops")
    here = repo / "clusters" / "prod"
    here.mkdir(parents=True)
    answers = [
        ("Target (name or number)", "eks"),
        ("EKS cluster name", ""),
        ("AWS region", ""),
        ("Namespace of the workload", ""),
        ("Kind of the workload", ""),
        ("Name of that workload object", ""),
        ("Git repository Argo CD syncs the bundle from", REPO_URL),
        ("Folder of the bundle in that repository", "clusters/prod/rlobs"),
    ]
    transcript = _on_terminal([str(RLOBS), "init"], here, answers)
    # Proposed: the blueprint's folder, as its path in the repository from where init runs.
    assert "Folder of the bundle in that repository (`rlobs render -o` it) [clusters/prod/observability]:" in transcript
    (command,) = re.findall(r"next: edit rlobs\.yaml, then run `([^`]+)`", transcript)
    assert command == "rlobs render rlobs.yaml -o rlobs"
    rendered = subprocess.run([str(RLOBS), *shlex.split(command)[1:]], cwd=here, capture_output=True, text=True)
    assert rendered.returncode == 0, rendered.stderr
    bundle = here / "rlobs"

    root_app = yaml.safe_load((bundle / "argocd" / "root-app.yaml").read_text(encoding="utf-8"))
    assert root_app["spec"]["source"]["path"] == "clusters/prod/rlobs/argocd/apps"
    link = re.compile(r"https://github\.com/rl-team/gitops/blob/main/([^\s\"'#)]*?)/docs/runbook\.md")
    links = [m for f in bundle.rglob("*") if f.is_file() for m in link.findall(f.read_text(encoding="utf-8"))]
    assert len(links) > 10 and set(links) == {"clusters/prod/rlobs"}

    (args,) = re.findall(r"pre-commit hook rlobs-check for this layout: args: \[([^]]+)\]", transcript)
    hook = [a.strip() for a in args.split(",")]
    assert hook == ["clusters/prod/rlobs.yaml", "--output", "clusters/prod/rlobs"]
    # The hook runs `rlobs render --check` with its args from the repository's top: the bundle is what it checks.
    checked = subprocess.run([str(RLOBS), "render", "--check", *hook], cwd=repo, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _profile(folder: Path, path: str | None) -> Path:
    text = BLUEPRINT if path is None else BLUEPRINT.replace("path: observability", f"path: {path}")
    if path is None:
        text = re.sub(r"(?m)^    path: .*\n", "", text)
    profile = folder / "rlobs.yaml"
    profile.write_text(text, encoding="utf-8")
    return profile


def test_a_stated_path_other_than_the_folder_is_refused_with_one_located_line(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "gitops")
    profile = _profile(repo, "clusters/prod/rlobs")
    done = subprocess.run(
        [str(RLOBS), "render", "rlobs.yaml", "-o", "observability"], cwd=repo, capture_output=True, text=True
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr
    lines = profile.read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.startswith("    path: clusters/prod/rlobs"))
    assert errors[0].startswith(f"error: rlobs.yaml:{line}:11: eks.gitops.path: expected observability (")
    assert "set it to observability or remove it" in errors[0] and "-o clusters/prod/rlobs" in errors[0]
    assert sorted(p.name for p in repo.iterdir()) == [".git", "rlobs.yaml"]  # nothing written


@pytest.mark.parametrize("git_file", [False, True])
def test_without_a_stated_path_it_follows_the_folder(tmp_path: Path, git_file: bool) -> None:
    # A linked worktree or a submodule has a `.git` file; only its presence is read, never its content.
    repo = tmp_path / "gitops"
    repo.mkdir()
    (repo / ".git").write_text("gitdir: /nowhere\n") if git_file else (repo / ".git").mkdir()
    _profile(repo, None)
    out = repo / "eks" / "prod"
    done = subprocess.run([str(RLOBS), "render", "rlobs.yaml", "-o", str(out)], cwd=repo, capture_output=True)
    assert done.returncode == 0, done.stderr
    root_app = yaml.safe_load((out / "argocd" / "root-app.yaml").read_text(encoding="utf-8"))
    assert root_app["spec"]["source"]["path"] == "eks/prod/argocd/apps"
    # The same profile into another folder is another bundle, not an up-to-date answer from the first.
    other = repo / "eks" / "dev"
    again = subprocess.run([str(RLOBS), "render", "rlobs.yaml", "-o", str(other)], cwd=repo, capture_output=True)
    assert again.returncode == 0, again.stderr
    root_app = yaml.safe_load((other / "argocd" / "root-app.yaml").read_text(encoding="utf-8"))
    assert root_app["spec"]["source"]["path"] == "eks/dev/argocd/apps"


def test_outside_a_work_tree_the_profile_path_is_kept(tmp_path: Path) -> None:
    _profile(tmp_path, "clusters/prod/rlobs")
    done = subprocess.run([str(RLOBS), "render", "rlobs.yaml", "-o", "out"], cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    root_app = yaml.safe_load((tmp_path / "out" / "argocd" / "root-app.yaml").read_text(encoding="utf-8"))
    assert root_app["spec"]["source"]["path"] == "clusters/prod/rlobs/argocd/apps"


@pytest.mark.parametrize(("out", "expected"), [(".", "got its top"), ("a b", "expected a relative path")])
def test_a_folder_argo_cd_cannot_sync_is_refused_in_one_line(tmp_path: Path, out: str, expected: str) -> None:
    repo = tmp_path / "gitops"
    (repo / ".git").mkdir(parents=True)
    _profile(repo, None)
    done = subprocess.run([str(RLOBS), "render", "rlobs.yaml", "-o", out], cwd=repo, capture_output=True, text=True)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1 and expected in errors[0], done.stderr
    assert sorted(p.name for p in repo.iterdir()) == [".git", "rlobs.yaml"]


# A fleet's ApplicationSets point Argo CD at <gitops.path>/clusters/<cluster>/...: the same rule keeps them on the
# folder the fleet bundle is written to.
FLEET = (REPO / "blueprints" / "fleet" / "rl-fleet.yaml").read_text(encoding="utf-8")


def test_a_fleet_stating_a_path_other_than_the_folder_is_refused_with_one_located_line(tmp_path: Path) -> None:
    repo = tmp_path / "gitops"
    (repo / ".git").mkdir(parents=True)
    (repo / "fleet.yaml").write_text(FLEET, encoding="utf-8")
    done = subprocess.run([str(RLOBS), "render", "fleet.yaml", "-o", "out"], cwd=repo, capture_output=True, text=True)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr
    line = FLEET.splitlines().index("  path: fleets/rl") + 1
    assert errors[0].startswith(f"error: fleet.yaml:{line}:9: gitops.path: expected out (")
    assert "set it to out or remove it" in errors[0] and "-o fleets/rl" in errors[0]
    assert sorted(p.name for p in repo.iterdir()) == [".git", "fleet.yaml"]  # nothing written


def test_a_fleet_without_a_stated_path_points_argo_cd_at_the_folder(tmp_path: Path) -> None:
    repo = tmp_path / "gitops"
    (repo / ".git").mkdir(parents=True)
    (repo / "fleet.yaml").write_text(FLEET.replace("  path: fleets/rl\n", ""), encoding="utf-8")
    out = repo / "deploy" / "rl"
    done = subprocess.run([str(RLOBS), "render", "fleet.yaml", "-o", "deploy/rl"], cwd=repo, capture_output=True)
    assert done.returncode == 0, done.stderr
    paths, values = [], []
    for appset in (out / "applicationsets").glob("*.yaml"):
        template = yaml.safe_load(appset.read_text(encoding="utf-8"))["spec"]["template"]["spec"]
        for src in template.get("sources") or [template["source"]]:
            paths += [src["path"]] if "path" in src else []
            values += [f.removeprefix("$values/") for f in src.get("helm", {}).get("valueFiles", [])]
    assert paths and values and all(p.startswith("deploy/rl/") for p in paths + values), paths + values
    # The folder each ApplicationSet syncs for a cluster is one the fleet bundle wrote (for the clusters it selects).
    for path in paths:
        written = [
            n for n in ("dev-use2", "prod-usw2-a", "prod-usw2-b") if (repo / re.sub("{{.*?}}", n, path)).is_dir()
        ]
        assert written, path
