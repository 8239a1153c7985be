"""A fleet file, checked against every registered target (rlobs.profile.fleet does the expanding)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlobs.profile import fleet
from rlobs.profile.fleetspec import FleetModel, fleet_model
from rlobs.targets import PROFILES, fleet_files

if TYPE_CHECKING:
    from pathlib import Path


def targets() -> fleet.Targets:
    return fleet.Targets(fleet_files(), PROFILES)


def model() -> FleetModel:
    """The fleet file's model classes, with every registered target's keys."""
    return fleet_model(fleet_files())


def load_fleet(path: Path) -> fleet.Fleet:
    return fleet.load_fleet(path, targets())


def parse_fleet(text: str, display: str = "<fleet>") -> fleet.Fleet:
    return fleet.parse_fleet(text, targets(), display)
