"""Bounded memo tables: what the emitters and the checker remember per string or text, in a process that may build
any number of bundles (a pool worker of a render of many profiles).

A full table is emptied before the next entry goes in. Most of what a render remembers recurs in every bundle (a
blueprint's keys, fixed texts and shared files), and is back in the table after one bundle; what is unique to one
bundle (its names, its digests) would otherwise pile up: measured, ~25 checker entries and ~20 emitter and resolver
entries per bundle, 9 MiB in a process that built 1,000 bundles of the EKS blueprint.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

LIMIT = 4096  # entries a table holds: a bundle has a few hundred distinct strings, a table of this size ~1 MiB


def put(table: dict[K, V], key: K, value: V, limit: int = LIMIT) -> None:
    """Remember `value` for `key`, emptying the table first when it is full."""
    if len(table) >= limit:
        table.clear()
    table[key] = value


def add(found: set[K], items: Iterable[K], limit: int = LIMIT) -> None:
    """Remember every item, emptying the set first when it is full."""
    if len(found) >= limit:
        found.clear()
    found.update(items)
