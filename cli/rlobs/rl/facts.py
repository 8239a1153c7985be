"""The facts every RL builder of one bundle reads, computed once per plan and passed down."""

from __future__ import annotations

from dataclasses import dataclass

from rlobs.profile.model import ProfileBase
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

    @property
    def name(self) -> str:
        return self.profile.metadata.name

    def runbook_url(self, alert: Alert) -> str:
        return f"{self.runbook}#{alert.anchor}"


def rl_facts(profile: ProfileBase, catalog: Catalog, pipeline: Pipeline, runbook: str = RUNBOOK_PATH) -> RlFacts:
    return RlFacts(profile, catalog, pipeline, alerts(profile.alerts, catalog, pipeline), runbook)
