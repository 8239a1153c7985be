"""Helpers of the fleet tests: the shipped example fleet, parsed and built once per session."""

from __future__ import annotations

import functools

from rlobs.fleet.commands import parse_fleet
from rlobs.fleet.plan import FleetBuild, build_fleet
from rlobs.profile.fleet import Fleet
from rlobs.resources import read_text

EXAMPLE = "fleet/rl-fleet.yaml"


def example_text() -> str:
    return read_text("blueprints", EXAMPLE)


@functools.cache
def example() -> Fleet:
    return parse_fleet(example_text(), "fleet.yaml")


@functools.cache
def example_build() -> FleetBuild:
    return build_fleet(example())
