"""Bundles built in memory through the real pipeline, with one parse-back checker for the whole test session."""

from __future__ import annotations

from rlobs.bundle.check import Checker
from rlobs.bundle.spec import Rendered
from rlobs.pipeline import build as build_bundle
from rlobs.profile.model import Profile
from rlobs.rl.catalog import load_catalog
from rlobs.rl.facts import RlFacts, rl_facts
from rlobs.rl.naming import Pipeline
from rlobs.targets import TARGETS


class _Session:
    """The session's checker, made on first use and closed by conftest at the end (one python-hcl2 process)."""

    checker: Checker | None = None


def checker() -> Checker:
    if _Session.checker is None:
        _Session.checker = Checker()
    return _Session.checker


def close() -> None:
    if _Session.checker is not None:
        _Session.checker.close()
        _Session.checker = None


def build(profile: Profile) -> tuple[Rendered, ...]:
    return build_bundle(profile, checker())


def pipeline_of(profile: Profile) -> Pipeline:
    return TARGETS[profile.target].pipeline(profile)


def facts(profile: Profile, pipeline: Pipeline | None = None) -> RlFacts:
    """The RL facts of a profile's bundle as its target computes them, on another pipeline if one is named."""
    own = TARGETS[profile.target].facts(profile, load_catalog())
    return own if pipeline is None else rl_facts(profile, own.catalog, pipeline, own.runbook)
