"""The pipeline: profile -> plan -> render -> check. Pure; the writer is called by the command."""

from __future__ import annotations

from rlobs.bundle.check import check
from rlobs.bundle.hclworker import HclWorker
from rlobs.bundle.render import Rendered, render
from rlobs.bundle.spec import Plan
from rlobs.profile.model import Profile
from rlobs.rl.catalog import load_catalog
from rlobs.targets import TARGETS


def plan_bundle(profile: Profile) -> Plan:
    return TARGETS[profile.target](profile, load_catalog())


def build(profile: Profile, hcl: HclWorker | None = None) -> tuple[Rendered, ...]:
    rendered = render(plan_bundle(profile))
    check(rendered, hcl)
    return rendered
