"""Bundles built in memory through the real pipeline, with one checker for the whole test session; every file
serialised from data is read back by its format's real parser as that data (testing.readback), which the run-time
check leaves to the test suite."""

from __future__ import annotations

from typing import ClassVar

from rlobs.bundle.check import Checker
from rlobs.bundle.render import render
from rlobs.bundle.spec import DataFile, Plan, Rendered
from rlobs.pipeline import plan_bundle
from rlobs.profile.model import ProfileBase as Profile
from rlobs.rl.catalog import for_profile, load_catalog
from rlobs.rl.facts import RlFacts, rl_facts
from rlobs.rl.naming import Pipeline
from rlobs.targets import TARGETS
from testing.readback import read_back, typed


class _Session:
    """The session's checker, and the bundles built so far (a profile's bundle is the same bytes every time:
    test_golden proves it)."""

    checker: Checker | None = None
    built: ClassVar[dict[tuple[str, str], tuple[Rendered, ...]]] = {}


def checker() -> Checker:
    if _Session.checker is None:
        _Session.checker = Checker()
    return _Session.checker


def build(profile: Profile) -> tuple[Rendered, ...]:
    """The profile's bundle, rendered, checked and read back once per session."""
    key = (profile.target, repr(profile))
    if key not in _Session.built:
        plan = plan_bundle(profile)
        files = render(plan)
        checker().check(files)
        assert_reads_back(plan, files)
        _Session.built[key] = files
    return _Session.built[key]


def assert_reads_back(plan: Plan, files: tuple[Rendered, ...]) -> None:
    """Each of the plan's data files reads back, by its format's parser, as the data it was serialised from."""
    texts = {r.path: r.text for r in files}
    for spec in plan.files:
        if isinstance(spec, DataFile):
            assert typed(read_back(texts[spec.path], spec.fmt)) == typed(spec.data), f"{plan.name}: {spec.path}"


def pipeline_of(profile: Profile) -> Pipeline:
    return TARGETS[profile.target].pipeline(profile)


def facts(profile: Profile, pipeline: Pipeline | None = None) -> RlFacts:
    """The RL facts of a profile's bundle as its target computes them, on another pipeline if one is named."""
    own = TARGETS[profile.target].facts(profile, for_profile(load_catalog(), profile))
    if pipeline is None:
        return own
    cluster = own.alert_labels.get("cluster", "")
    return rl_facts(profile, own.catalog, pipeline, runbook=own.runbook, scope=own.scope, cluster=cluster)
