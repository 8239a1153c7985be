"""The target registry: profile `target` -> the function that plans its bundle."""

from __future__ import annotations

from collections.abc import Callable

from rlobs.catalog import Catalog
from rlobs.model import Profile
from rlobs.plan import Plan
from rlobs.targets import eks, gke

TARGETS: dict[str, Callable[[Profile, Catalog], Plan]] = {
    "gke": gke.plan,
    "eks": eks.plan,
}
