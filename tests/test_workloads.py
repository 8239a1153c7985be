"""The workload section's rules that hold on every target (replicatedJobs of a JobSet)."""

from __future__ import annotations

import re

import pytest

from helpers import all_profiles
from rlobs.errors import ProfileError
from rlobs.profile import parse_profile


def _errors(text: str) -> list[str]:
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    return info.value.lines()


@pytest.mark.parametrize("target", ["gke-managed-otel", "eks-jark"])
def test_replicated_jobs_are_required_for_a_jobset_and_only_there(target: str) -> None:
    text = all_profiles()[target]
    (kind,) = re.findall(r"^  kind: (\w+)", text, flags=re.MULTILINE)
    jobset = text.replace(f"  kind: {kind}", "  kind: JobSet")
    (line,) = _errors(jobset)
    assert "workload.kind: kind is JobSet, so expected `replicatedJobs:`" in line and line.endswith(", got none")
    parse_profile(jobset.replace("kind: JobSet", "kind: JobSet\n  replicatedJobs: [driver, rollout]"))
    (line,) = _errors(text.replace(f"kind: {kind}", f"kind: {kind}\n  replicatedJobs: [driver]"))
    assert f"workload.replicatedJobs: expected no replicatedJobs for a {kind}, got some" in line
    (line,) = _errors(jobset.replace("kind: JobSet", "kind: JobSet\n  replicatedJobs: [driver, driver]"))
    assert "workload.replicatedJobs: expected each replicatedJob once" in line
    (line,) = _errors(jobset.replace("kind: JobSet", "kind: JobSet\n  replicatedJobs: [Driver]"))
    assert "workload.replicatedJobs[0]: expected a Kubernetes name" in line
