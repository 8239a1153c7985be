"""Which kind of input file an argument is: a fleet (`kind: Fleet`) or a profile. Light on imports: a render of
profiles asks this of every argument and never needs the fleet model (rlobs.profile.fleet)."""

from __future__ import annotations

FLEET_KIND = "Fleet"
# The folder of a fleet bundle that holds each cluster's bundle, `clusters/<name>/` (here, light on imports: the
# writer's path rule, rlobs.fleet.paths, reads it on every render).
CLUSTERS_DIR = "clusters"


def is_fleet(text: str) -> bool:
    """Whether a YAML file is a fleet (kind: Fleet) rather than a profile; unparseable text is left to the loader."""
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
