"""The bundle paths the gke target produces, apart from its planner: the writer asks every target whether it can
produce a path before deleting it, and a render must not import the other target's planner for that."""

from __future__ import annotations

# Every path this target's bundles can hold (`*` stays within one folder); the writer deletes nothing else.
PATHS: tuple[str, ...] = (
    "README.md",
    "app/*.py",
    "app/requirements.txt",
    "docs/*.md",
    "monitoring/alert-policies/*.json",
    "monitoring/dashboards/*.json",
    "scripts/*.sh",
    "terraform/*.tf",
    "terraform/*.tf.json",
    "terraform/terraform.tfvars",
    "tests/*.yaml",
    "workload/*.yaml",
    "workload/openapi.json",
)
