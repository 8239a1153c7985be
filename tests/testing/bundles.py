"""Bundles built in memory through the real pipeline, with one parse-back checker for the whole test session."""

from __future__ import annotations

from typing import ClassVar

from rlobs.bundle.check import Checker
from rlobs.bundle.hclworker import HclWorker
from rlobs.bundle.spec import Rendered
from rlobs.pipeline import build as build_bundle
from rlobs.profile.profiles import Profile
from rlobs.rl.catalog import load_catalog
from rlobs.rl.facts import RlFacts, rl_facts
from rlobs.rl.naming import Pipeline
from rlobs.targets import TARGETS


class _Session:
    """The session's checker and HCL worker, made on first use and closed by conftest at the end, and the bundles
    built so far (a profile's bundle is the same bytes every time: test_golden proves it)."""

    checker: Checker | None = None
    worker: HclWorker | None = None
    built: ClassVar[dict[tuple[str, str], tuple[Rendered, ...]]] = {}


class SharedWorker:
    """Stands in for HclWorker inside the rlobs commands that tests run in-process: every Checker they make parses
    with the session's one python-hcl2 process instead of starting its own (~250 ms each)."""

    def parse(self, files: dict[str, str]) -> list[str]:
        if _Session.worker is None:
            _Session.worker = HclWorker()
        return _Session.worker.parse(files)

    def close(self) -> None:
        """The session's worker outlives each Checker."""


def checker() -> Checker:
    if _Session.checker is None:
        _Session.checker = Checker()
    return _Session.checker


def close() -> None:
    if _Session.checker is not None:
        _Session.checker.close()
        _Session.checker = None
    if _Session.worker is not None:
        _Session.worker.close()
        _Session.worker = None


def build(profile: Profile) -> tuple[Rendered, ...]:
    """The profile's bundle, rendered and parse-checked once per session."""
    key = (profile.target, repr(profile))
    if key not in _Session.built:
        _Session.built[key] = build_bundle(profile, checker())
    return _Session.built[key]


def pipeline_of(profile: Profile) -> Pipeline:
    return TARGETS[profile.target].pipeline(profile)


def facts(profile: Profile, pipeline: Pipeline | None = None) -> RlFacts:
    """The RL facts of a profile's bundle as its target computes them, on another pipeline if one is named."""
    own = TARGETS[profile.target].facts(profile, load_catalog())
    if pipeline is None:
        return own
    cluster = own.alert_labels.get("cluster", "")
    return rl_facts(profile, own.catalog, pipeline, runbook=own.runbook, scope=own.scope, cluster=cluster)
