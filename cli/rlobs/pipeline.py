"""The pipeline: profile -> target plan -> render -> check. Pure; the writer is called by the command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rlobs.bundle.check import Checker
from rlobs.bundle.render import render
from rlobs.bundle.spec import Plan, Rendered
from rlobs.errors import CheckError, RlobsError
from rlobs.rl.catalog import for_profile, load_catalog
from rlobs.targets import TARGETS

if TYPE_CHECKING:
    import jinja2

    from rlobs.profile.model import ProfileBase as Profile


def plan_bundle(profile: Profile) -> Plan:
    return TARGETS[profile.target].plan(profile, for_profile(load_catalog(), profile))


def build(profile: Profile, checker: Checker, env: jinja2.Environment | None = None) -> tuple[Rendered, ...]:
    """`env`: a Jinja environment shared by many bundles, so each template is loaded once (rlobs.batch)."""
    rendered = render(plan_bundle(profile), env)
    checker.check(rendered)
    return rendered


def build_named(
    path: Path, profile: Profile, checker: Checker, env: jinja2.Environment | None = None
) -> tuple[Rendered, ...]:
    """build(), its refusals naming the profile file and bundle: with several profiles the user knows which one."""
    try:
        return build(profile, checker, env)
    except RlobsError as exc:
        if type(exc) not in (CheckError, RlobsError):
            raise  # a profile or output error already says where it is
        raise type(exc)(f"{path} ({profile.metadata.name}): {exc}") from None
