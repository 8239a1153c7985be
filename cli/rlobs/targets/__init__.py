"""The target registry: profile `target` -> the function that plans its bundle."""

from __future__ import annotations

from collections.abc import Callable

from rlobs.bundle.spec import Plan
from rlobs.profile.model import Profile
from rlobs.rl.catalog import Catalog
from rlobs.targets.eks import plan as eks
from rlobs.targets.gke import plan as gke

TARGETS: dict[str, Callable[[Profile, Catalog], Plan]] = {
    "gke": gke.plan,
    "eks": eks.plan,
}
