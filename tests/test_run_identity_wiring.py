"""The workload wiring of the run identity: the owner uid and restart count from the pod labels each workload kind
carries (downward API), RL_RUN_ID only when the profile names a run, and the W&B run id that follows the same id."""

from __future__ import annotations

from typing import Any

import pytest

from rlobs.profile.model import ProfileBase as Profile
from rlobs.rl.catalog import load_catalog
from rlobs.rl.identity import rl_env
from rlobs.rl.tracker import tracker_env
from testing.helpers import profile

CATALOG = load_catalog()


def _with(kind: str, run_id: str | None = None, tracker: Any = None) -> Profile:
    p = profile("eks-jark")
    run = p.workload.run.model_copy(update={"id": run_id})
    update: dict[str, Any] = {"kind": kind, "run": run}
    if tracker is not None:
        update["tracker"] = tracker
    return p.model_copy(update={"workload": p.workload.model_copy(update=update)})


def _labels(env: list[dict[str, Any]]) -> dict[str, str]:
    return {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in env if e["name"].startswith("RLOBS_")}


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        # Job pods: the Job controller's label (Kubernetes >= 1.27; `controller-uid` before it).
        ("Job", {"RLOBS_OWNER_UID": "metadata.labels['batch.kubernetes.io/controller-uid']"}),
        # JobSet's labels on its jobs and pods: the JobSet's uid and how often the whole set was restarted.
        (
            "JobSet",
            {
                "RLOBS_OWNER_UID": "metadata.labels['jobset.sigs.k8s.io/jobset-uid']",
                "RLOBS_RESTART_COUNT": "metadata.labels['jobset.sigs.k8s.io/restart-attempt']",
            },
        ),
        # KubeRay labels every pod with its RayCluster, named after the RayJob plus a random suffix.
        ("RayJob", {"RLOBS_OWNER_UID": "metadata.labels['ray.io/cluster']"}),
        # Long-lived workloads host many runs: no owner id (the app module's per-process id).
        ("Deployment", {}),
        ("RayCluster", {}),
    ],
)
def test_owner_uid_from_the_pod_labels(kind: str, expected: dict[str, str]) -> None:
    env = rl_env(_with(kind), CATALOG)
    assert _labels(env) == expected
    assert "RL_RUN_ID" not in {e["name"] for e in env}


def test_a_run_id_the_profile_names_is_set_and_followed_by_wandb() -> None:
    from rlobs.profile.model import Tracker

    wandb = Tracker.model_validate({"kind": "wandb", "entity": "rl-team", "project": "grpo"})
    named = _with("Job", run_id="grpo-7b-lr3", tracker=wandb)
    env = rl_env(named, CATALOG)
    assert {"name": "RL_RUN_ID", "value": "grpo-7b-lr3"} in env
    assert {"name": "WANDB_RUN_ID", "value": "$(RL_RUN_ID)"} in tracker_env(named)
    # Nothing names the run of a Deployment: W&B chooses its own id, and the app module reads it.
    names = {e["name"] for e in tracker_env(_with("Deployment", tracker=wandb))}
    assert "WANDB_RUN_ID" not in names and "WANDB_RESUME" not in names
    assert {"name": "WANDB_RUN_ID", "value": "$(RLOBS_OWNER_UID)"} in tracker_env(_with("Job", tracker=wandb))
