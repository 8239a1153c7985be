"""The bundle paths the eks target produces, apart from its planner: the writer asks every target whether it can
produce a path before deleting it, and a render must not import the other target's planner for that."""

from __future__ import annotations

# Every path this target's bundles can hold (`*` stays within one folder); the writer deletes nothing else.
PATHS: tuple[str, ...] = (
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
