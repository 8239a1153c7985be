"""Cloud locations checked against the lists pinned in cli/rlobs/data: a made-up region fails only at apply time."""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection
from functools import cache
from typing import Any

from rlobs.resources import read_text


@cache
def pinned(name: str) -> dict[str, Any]:
    table: dict[str, Any] = json.loads(read_text("data", name))
    return table


def listed(value: str, names: Collection[str], expected: str, what: str, source: dict[str, str]) -> str:
    if value in names:
        return value
    near = difflib.get_close_matches(value, list(names), n=1)
    hint = f": did you mean {near[0]}?" if near else ""
    raise ValueError(
        f"expected {expected}, got {value!r}{hint} (the {what} {source['distribution']} lists, {source['date']})"
    )
