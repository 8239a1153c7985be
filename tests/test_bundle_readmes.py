"""Each bundle README describes that bundle: every file it names is in it, no Ray text without Ray parts, and every
command that creates something is safe to run twice."""

from __future__ import annotations

import re

import pytest

from testing.bundles import build
from testing.helpers import all_profiles, eks_profile, gke_profile, profile

PROFILES = sorted(all_profiles())
# Bundle folders a README points into; a path under one of them must be a file (or folder) of that bundle.
_FOLDERS = ("app", "docs", "workload", "scripts", "terraform", "monitoring", "argocd", "values", "stack", "rl-layer")
_PATH = re.compile(rf"(?<![\w/.$-])((?:{'|'.join(_FOLDERS)})/[\w.*/-]*[\w*])")
# Paths in the apply steps that are not the bundle's: ai-on-eks's own working copy (infra/jark-stack/terraform/...).
# And the collector's namespace/Service as the EKS data-flow diagram writes it; and the files the user's Terraform
# run or the user makes beside the rendered ones (the lock file to commit, a backend override).
_NOT_BUNDLE_PATHS = {
    "terraform/_LOCAL",
    "monitoring/otel-collector",
    "terraform/.terraform.lock.hcl",
    "terraform/backend_override.tf",
}


def _readme(name: str) -> tuple[str, set[str]]:
    files = {r.path: r.text for r in build(profile(name))}
    return files["README.md"], set(files)


def _exists(path: str, files: set[str]) -> bool:
    if "*" in path:
        prefix = path.split("*", 1)[0]
        return any(f.startswith(prefix) for f in files)
    return path in files or any(f.startswith(path.rstrip("/") + "/") for f in files)


@pytest.mark.parametrize("name", PROFILES)
def test_readme_names_only_files_the_bundle_has(name: str) -> None:
    text, files = _readme(name)
    named = set(_PATH.findall(text)) - _NOT_BUNDLE_PATHS
    assert named, "the README names the bundle's files"
    assert sorted(p for p in named if not _exists(p, files)) == []


@pytest.mark.parametrize("name", PROFILES)
def test_ray_text_only_with_ray_parts(name: str) -> None:
    text, files = _readme(name)
    if "workload/ray-logs-patch.yaml" not in files:
        assert not re.search(r"(?i)sidecar", text), "Ray log sidecar text without the sidecar"
    if not any("ray-head" in f for f in files):
        assert "ray-head ServiceMonitor" not in text and "ray-head-servicemonitor" not in text
    if profile(name).workload.kind not in ("RayJob", "RayCluster", "RayService"):
        assert "served by Ray Serve" not in text


@pytest.mark.parametrize("name", PROFILES)
def test_commands_are_safe_to_run_twice(name: str) -> None:
    text, _ = _readme(name)
    commands = _joined(text)
    for line in commands:
        if re.search(r"\bkubectl\b.*\bcreate (secret|namespace|serviceaccount)\b", line):
            assert "--dry-run=client -o yaml" in line and "kubectl apply -f -" in line, line
        if re.search(r"\bkubectl\b.*\bannotate\b", line):
            assert "--overwrite" in line, line
    secret = re.compile(r"--from-literal=[\w-]*(password|token|key|webhook[\w-]*)=(?![\"']?\$)")
    assert [c for c in commands if secret.search(c)] == [], "a literal secret value (values come from a prompt)"


def _joined(text: str) -> list[str]:
    """Shell lines with their backslash continuations and trailing pipes joined."""
    out: list[str] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        current = f"{current} {line}" if current else line
        if line.endswith(("\\", "|")):
            current = current.rstrip("\\").rstrip()
            continue
        out.append(current)
        current = ""
    return out


def test_private_gitops_repo_credentials_by_reference() -> None:
    text, _ = _readme("eks-jark")
    assert "argocd.argoproj.io/secret-type=repository" in text
    assert "read -rsp 'Read-only access token: '" in text  # https URL: a token from the prompt
    ssh = all_profiles()["eks-jark"].replace("https://github.com/acme/gitops.git", "git@github.com:acme/gitops.git")
    from rlobs.targets import parse_profile

    files = {r.path: r.text for r in build(parse_profile(ssh, "ssh.yaml"))}
    assert "--from-file=sshPrivateKey=" in files["README.md"]


def test_ai_on_eks_install_is_planned_before_it_auto_approves() -> None:
    text, _ = _readme("eks-jark")
    assert text.index("terraform plan -var-file=../blueprint.tfvars") < text.index("./install.sh\n")


@pytest.mark.parametrize("name", [n for n in PROFILES if "\ntarget: gke" in all_profiles()[n]])
def test_policies_without_channels_say_they_notify_nobody(name: str) -> None:
    text, files = _readme(name)
    policies = any(f.startswith(("monitoring/alert-policies/", "monitoring/slos/")) for f in files)
    assert ("notify nobody" in text) == (policies and not gke_profile(name).gke.notification_channels)


def test_readme_shows_a_backticked_value_as_one_code_span_and_no_link() -> None:
    """A value with a run of two backticks (what broke out of the old fence) stays one code span in the README as a
    CommonMark parser reads it. The value is put past the profile validator (which refuses it in repoUrl) to test
    the escaping on its own."""
    from markdown_it import MarkdownIt

    from rlobs.pipeline import build as build_bundle
    from testing.bundles import checker

    hostile = "https://x``[click](https://evil.example)``/``"
    base = eks_profile("eks-jark")
    gitops = base.eks.gitops.model_copy(update={"repo_url": hostile})
    forged = base.model_copy(update={"eks": base.eks.model_copy(update={"gitops": gitops})})
    readme = {r.path: r.text for r in build_bundle(forged, checker())}["README.md"]
    tokens = [
        c
        for t in MarkdownIt("commonmark").enable("table").parse(readme)
        if t.type == "inline"
        for c in t.children or []
    ]
    assert ("code_inline", hostile) in [(c.type, c.content) for c in tokens]
    assert not [c for c in tokens if c.type == "link_open" and "evil" in str(c.attrGet("href"))]
