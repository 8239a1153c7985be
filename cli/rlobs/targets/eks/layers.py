"""Split each cluster's Helm values into layers common, env/<env>, clusters/<name> that merge back into them."""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce
from typing import Any

from rlobs.targets.eks.helmvalues import deep_merge as merge

Values = dict[str, Any]


def _shared(a: Values, b: Values) -> Values:
    out: Values = {}
    for key in a.keys() & b.keys():
        if isinstance(a[key], dict) and isinstance(b[key], dict):
            sub = _shared(a[key], b[key])
            if sub or (not a[key] and not b[key]):
                out[key] = sub
        elif a[key] == b[key]:
            out[key] = a[key]
    return {k: out[k] for k in a if k in out}  # the first tree's key order


def without(full: Values, base: Values) -> Values:
    """What `full` has beyond `base` (where base is part of full): merged over base it gives back full."""
    out: Values = {}
    for key, value in full.items():
        if key not in base:
            out[key] = value
        elif isinstance(value, dict) and isinstance(base[key], dict):
            sub = without(value, base[key])
            if sub:
                out[key] = sub
    return out


def split(values: Mapping[str, Values], environments: Mapping[str, str]) -> dict[str, Values]:
    """The layers in merge order: common, env/<environment> (what its clusters share beyond common), clusters/<name>."""
    common = reduce(_shared, values.values())
    env: dict[str, Values] = {}
    for e in sorted({environments[c] for c in values}):
        members = [v for c, v in values.items() if environments[c] == e]
        env[e] = without(reduce(_shared, members), common)
    clusters = {c: without(v, merge(common, env[environments[c]])) for c, v in values.items()}
    return {
        "common": common,
        **{f"env/{e}": v for e, v in env.items()},
        **{f"clusters/{c}": v for c, v in clusters.items()},
    }
