"""Cloud locations checked against the pinned lists in cli/rlobs/data (each built by a tools/ script from the copy of
its source kept in tests/upstream): a region that does not exist passes the pattern and fails only at apply time."""

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
    """`value` if the list has it, else the error naming the nearest entry and where the list comes from."""
    if value in names:
        return value
    near = difflib.get_close_matches(value, list(names), n=1)
    hint = f": did you mean {near[0]}?" if near else ""
    raise ValueError(
        f"expected {expected}, got {value!r}{hint} (the {what} {source['distribution']} lists, {source['date']})"
    )
