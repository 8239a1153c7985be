"""Typed validator problems: each carries the key path it belongs to, so load.py can point at the right line."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import TypeVar

KeyPath = tuple[str | int, ...]
T = TypeVar("T", bound=Hashable)


class ProblemAt(ValueError):
    """One problem at `path` (camelCase keys, relative to the object whose validator raised it)."""

    def __init__(self, path: KeyPath, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


class Problems(ValueError):
    """Every problem one validator found: pydantic keeps one error per validator, this carries them all."""

    def __init__(self, problems: Iterable[ProblemAt]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(p.message for p in self.problems))


def raise_all(problems: Iterable[ProblemAt]) -> None:
    found = tuple(problems)
    if found:
        raise Problems(found)


def repeats(items: Iterable[T]) -> Iterator[tuple[int, T]]:
    seen: set[T] = set()
    for i, item in enumerate(items):
        if item in seen:
            yield i, item
        seen.add(item)


def article(word: str) -> str:
    return "an" if word[:1] in "aeiouAEIOU" else "a"
