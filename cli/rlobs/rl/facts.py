"""The facts every RL builder of one bundle reads, computed once per plan and passed down."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic.alias_generators import to_camel

from rlobs.profile.model import ProfileBase
from rlobs.rl import naming
from rlobs.rl.alerts import RUNBOOK_PATH, Alert, alerts
from rlobs.rl.catalog import Catalog
from rlobs.rl.naming import Pipeline


@dataclass(frozen=True, slots=True)
class RlFacts:
    profile: ProfileBase
    catalog: Catalog
    pipeline: Pipeline  # how the bundle's metrics reach its backend (rlobs.rl.naming)
    alerts: tuple[Alert, ...]  # the enabled alerts, built once
    runbook: str  # where alerts link docs/runbook.md: the bundle-relative path, or its URL in the GitOps repository
    # label -> value every alert query matches, so a bundle alerts on its own workload only (two bundles in one
    # cluster or project never see each other's runs): the labels the target's pipeline really stores.
    scope: Mapping[str, str] = field(default_factory=dict)
    # Static labels every RL alert carries: which bundle, cluster, namespace and workload it is about.
    alert_labels: Mapping[str, str] = field(default_factory=dict)
    # Alerts left out, each with the catalog metrics it reads that the framework's adapter does not supply: they
    # could never fire (the profile's alerts.recordedInCode keeps one whose signals the training code records).
    left_out: tuple[tuple[Alert, tuple[str, ...]], ...] = ()

    @property
    def name(self) -> str:
        return self.profile.metadata.name


def rl_facts(
    profile: ProfileBase,
    catalog: Catalog,
    pipeline: Pipeline,
    *,
    runbook: str = RUNBOOK_PATH,
    scope: Mapping[str, str] | None = None,
    cluster: str = "",
) -> RlFacts:
    w = profile.workload
    labels = {"rlobs_bundle": profile.metadata.name, "cluster": cluster, "namespace": w.namespace, "workload": w.name}
    framework = catalog.framework(w.run.system)
    kept = profile.alerts.recorded_in_code
    built = alerts(profile.alerts, catalog, pipeline, scope or {})
    gaps = {
        a.key: tuple(m for m in a.metrics if framework and framework.coverage(m) == "not available")
        for a in built
        if to_camel(a.key) not in kept
    }
    return RlFacts(
        profile,
        catalog,
        pipeline,
        tuple(a for a in built if not gaps.get(a.key)),
        runbook,
        dict(scope or {}),
        {k: v for k, v in labels.items() if v},
        tuple((a, gaps[a.key]) for a in built if gaps.get(a.key)),
    )


def workload_job(profile: ProfileBase) -> str:
    """The series' `job`, as OTel's Prometheus translation forms it (opentelemetry-collector-contrib#9115)."""
    return f"{profile.workload.namespace}/{profile.workload.otel_service_name}"


def run_series(rl: RlFacts, key: str) -> str:
    """Metric `key`'s series of the profile's run, or of every run of the workload when its id is picked at run time."""
    run_id = rl.profile.workload.run.id
    run = {rl.catalog.attribute("run_id").name: run_id} if run_id else {}
    return naming.selector(rl.catalog.metric(key), rl.pipeline, "", {**rl.scope, **run})
