"""The pipeline: profile -> plan -> render -> check. Pure; the writer is called by the command."""

from __future__ import annotations

from rlobs.catalog import load_catalog
from rlobs.check import check
from rlobs.hclworker import HclWorker
from rlobs.model import Profile
from rlobs.plan import Plan
from rlobs.render import Rendered, render
from rlobs.targets import TARGETS


def plan_bundle(profile: Profile) -> Plan:
    return TARGETS[profile.target](profile, load_catalog())


def build(profile: Profile, hcl: HclWorker | None = None) -> tuple[Rendered, ...]:
    rendered = render(plan_bundle(profile))
    check(rendered, hcl)
    return rendered
