"""The writer's path rule: the paths any render may write, delete or replay in a bundle folder."""

from __future__ import annotations

from rlobs.profile.kind import CLUSTERS_DIR
from rlobs.targets import fleet_producible
from rlobs.targets import producible as target_producible

# The fleet's own files (rlobs.fleet.plan); each target adds its own (Target.FLEET_PATHS), and a cluster's folder
# holds its target's bundle.
FLEET_PATHS = ("README.md", "profiles/*.yaml")


# One rule for every command, so a render taking over the other kind's folder (--force) removes that bundle's files,
# and an interrupted write's journal is replayed in full whichever render finds it.
def producible(path: str) -> bool:
    if target_producible(path) or fleet_producible(path, FLEET_PATHS):
        return True
    head, _, rest = path.partition("/")
    name, _, inner = rest.partition("/")
    return head == CLUSTERS_DIR and bool(name) and target_producible(inner)
