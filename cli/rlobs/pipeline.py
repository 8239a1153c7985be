"""The pipeline: profile -> target plan -> render -> check. Pure; the writer is called by the command."""

from __future__ import annotations

from rlobs.bundle.check import Checker
from rlobs.bundle.render import render
from rlobs.bundle.spec import Plan, Rendered
from rlobs.profile.model import Profile
from rlobs.rl.catalog import load_catalog
from rlobs.targets import TARGETS


def plan_bundle(profile: Profile) -> Plan:
    return TARGETS[profile.target].plan(profile, load_catalog())


def build(profile: Profile, checker: Checker) -> tuple[Rendered, ...]:
    rendered = render(plan_bundle(profile))
    checker.check(rendered)
    return rendered
