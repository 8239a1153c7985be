"""Which kind of input file an argument is, a fleet or a profile; light on imports, as a render asks of every one."""

from __future__ import annotations

FLEET_KIND = "Fleet"
# A fleet bundle's folder of cluster bundles, `clusters/<name>/`: here, as rlobs.fleet.paths reads it on every render.
CLUSTERS_DIR = "clusters"


def is_fleet(text: str) -> bool:
    # Any YAML spelling of the value Fleet has the letters `Fleet` in it, or an escape (a backslash) in a
    # double-quoted string: text with neither is not a fleet, and is not parsed twice (the loader parses it).
    if FLEET_KIND not in text and "\\" not in text:
        return False
    from rlobs.profile.yamlsource import load_yaml

    try:
        data = load_yaml(text)
    except Exception:  # any parse error is reported by the fleet loader, with its position
        return False
    return isinstance(data, dict) and data.get("kind") == FLEET_KIND
