"""The eks target (its rlobs.targets.Target): EKS with the AI on EKS (JARK) stack, its bundle delivered by Argo CD."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlobs.profile.question import WORKLOAD, Question

if TYPE_CHECKING:
    from rlobs.profile.fleetspec import FleetTarget
    from rlobs.profile.model import ProfileBase
    from rlobs.profile.yamlsource import Path

NAME = "eks"
PATHS: tuple[str, ...] = (
    ".gitignore",
    "README.md",
    "app/*.py",
    "app/requirements.txt",
    "argocd/root-app.yaml",
    "argocd/apps/*.yaml",
    "docs/*.md",
    "rl-layer/*.yaml",
    "stack/*.yaml",
    "terraform/blueprint.tfvars",
    "tests/*.yaml",
    "values/*.yaml",
    "workload/*.yaml",
    "workload/openapi.json",
)
FLEET_PATHS: tuple[str, ...] = (
    "applicationsets/*.yaml",
    "terraform/*.tf.json",
    "values/common/*.yaml",
    "values/env/*/*.yaml",
    "values/clusters/*/*.yaml",
)
# The profile key of the bundle's path in the Git repository Argo CD syncs (rlobs.profile.worktree): set from the
# render's output folder.
REPO_PATH: tuple[str, ...] | None = ("eks", "gitops", "path")
QUESTIONS: tuple[Question, ...] = (
    Question(("eks", "cluster", "name"), "EKS cluster name"),
    Question(("eks", "cluster", "region"), "AWS region"),
    *WORKLOAD,
    Question(("eks", "gitops", "repoUrl"), "Git repository Argo CD syncs the bundle from"),
    Question(("eks", "gitops", "path"), "Folder of the bundle in that repository (`rlobs render -o` it)", folder=True),
)
PLACEHOLDERS: dict[Path, str] = {
    ("eks", "gitops", "repoUrl"): "your own GitOps repository (Argo CD syncs the bundle from it)",
}
BLUEPRINTS: dict[str, str] = {}  # its starter profiles are shipped in blueprints/


def profile_model() -> type[ProfileBase]:
    from rlobs.targets.eks.profile import EksProfile

    return EksProfile


def fleet_file() -> FleetTarget:
    from rlobs.targets.eks import fleetspec

    return fleetspec
