"""The run identity every metric point and span carries, and the env that sets it and the export interval."""

from __future__ import annotations

from typing import Any

from rlobs.profile.model import ProfileBase, Workload
from rlobs.rl.catalog import Catalog


def identity_env(key: str) -> str:
    return "RL_" + key.upper()


def identity_values(profile: ProfileBase, catalog: Catalog) -> dict[str, str | None]:
    run = profile.workload.run
    by_key: dict[str, str | None] = {
        "system": run.system,
        "system_version": run.system_version,
        # Only a run id the profile names: the workload name would be one id for every run of the workload.
        "run_id": run.id,
        "algorithm": run.algorithm,
        "environment": run.environment,
        "model": run.model,
    }
    return {a.name: by_key.get(a.key) for a in catalog.identity}


# The env the app module takes a run id and a restart count from when the profile sets no run id.
OWNER_ENV = "RLOBS_OWNER_UID"
RESTART_ENV = "RLOBS_RESTART_COUNT"
# The pod label that names the object owning one run, by workload kind, read through the downward API: one value per
# experiment, the same for every pod and retry of it. Job: the Job's uid (Kubernetes >= 1.27); JobSet: its uid
# (JobSet's labels on jobs and pods); RayJob: its RayCluster's name, which KubeRay makes unique (the RayJob's name
# plus a random suffix; KubeRay puts no RayJob uid on the pods). Deployments, StatefulSets and long-lived Ray
# clusters host many runs: no owner id.
OWNER_LABELS = {
    "Job": "batch.kubernetes.io/controller-uid",
    "JobSet": "jobset.sigs.k8s.io/jobset-uid",
    "RayJob": "ray.io/cluster",
}
# Where the owner id is not the same for every attempt: KubeRay makes a new RayCluster for each retry of a RayJob.
OWNER_CAVEATS = {"RayJob": "a retry under `backoffLimit` runs on a new RayCluster, so it is a new run id"}
# JobSet counts its restarts of the whole set on each pod; elsewhere torchrun's TORCHELASTIC_RESTART_COUNT is read.
RESTART_LABELS = {"JobSet": "jobset.sigs.k8s.io/restart-attempt"}


def _label(name: str, label: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{label}']"}}}


def rl_env(profile: ProfileBase, catalog: Catalog) -> list[dict[str, Any]]:
    values = identity_values(profile, catalog)
    env: list[dict[str, Any]] = [
        {"name": identity_env(a.key), "value": value} for a in catalog.identity if (value := values[a.name]) is not None
    ]
    kind = profile.workload.kind
    from_labels = ((OWNER_ENV, OWNER_LABELS), (RESTART_ENV, RESTART_LABELS))
    return env + [_label(name, labels[kind]) for name, labels in from_labels if kind in labels]


def run_id_ref(profile: ProfileBase) -> str | None:
    """$(VAR) of the container's run id (rl_env defines it earlier), or None when the app module picks the id itself."""
    if profile.workload.run.id is not None:
        return f"$({identity_env('run_id')})"
    return f"$({OWNER_ENV})" if profile.workload.kind in OWNER_LABELS else None


def identity_rows(profile: ProfileBase, catalog: Catalog) -> list[dict[str, Any]]:
    values = identity_values(profile, catalog)
    return [{"name": a.name, "env": identity_env(a.key), "default": values[a.name]} for a in catalog.identity]


def export_interval_env(workload: Workload) -> dict[str, str]:
    return {"name": "OTEL_METRIC_EXPORT_INTERVAL", "value": str(workload.export_interval_ms)}


def run_identity(profile: ProfileBase, catalog: Catalog) -> dict[str, Any]:
    """The bundle README's section on the run id: the profile's own id, or where the app module takes one from."""
    kind = profile.workload.kind
    return {
        "attribute": catalog.attribute("run_id").name,
        "state": catalog.metric("run_state").name,
        "restarts": catalog.metric("run_restarts").name,
        "explicit": profile.workload.run.id,
        "env": identity_env("run_id"),
        "kind": kind,
        "owner_env": OWNER_ENV,
        "owner_label": OWNER_LABELS.get(kind),
        "owner_caveat": OWNER_CAVEATS.get(kind),
        "restart_env": RESTART_ENV,
        "restart_label": RESTART_LABELS.get(kind),
        "tracker": profile.workload.tracker.kind if profile.workload.tracker else None,
    }
