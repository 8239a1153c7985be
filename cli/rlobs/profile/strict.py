"""What the compiled profile (rlobs.profile.records) is made of: frozen records, and checks that accept exactly what
the pydantic model accepts in its strict mode, or give up.

A check either returns the value the pydantic model would hold, or raises Bail: it never decides that input is
wrong. The loader then validates the same data with the pydantic model, which says what is wrong, every problem at
its key path, as it always has (or holds the data valid after all, for a shape the checks do not cover). So the
checks need to be exact only where they accept, and tests/test_records.py compares them with the model on every
profile the tests know, valid and invalid."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Self

Check = Callable[[Any], Any]


class Bail(Exception):
    """The checks cannot vouch for this input: the pydantic model decides."""


REQUIRED = object()  # a field without a default


class Factory:
    """A default made afresh for each record (pydantic's default_factory)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class Record:
    """A frozen profile object: the fields of its pydantic model class, with the same names and values."""

    __slots__ = ("model_fields_set",)
    # (attribute, profile key, check, default), in the model's field order; set by rlobs.profile.records.
    record_fields: ClassVar[tuple[tuple[str, str, Check, Any], ...]] = ()
    record_keys: ClassVar[frozenset[str]] = frozenset()
    record_rules: ClassVar[tuple[str, ...]] = ()  # the model's after-validators, methods of the record too
    model_fields_set: frozenset[str]

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, attr) for attr, *_ in self.record_fields)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__, *self._values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{attr}={getattr(self, attr)!r}" for attr, *_ in self.record_fields)
        return f"{type(self).__name__}({inner})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickling (the render's worker processes) goes around the frozen __setattr__.
        return (make, (type(self), self._values(), self.model_fields_set))

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Self:
        """A copy with `update`'s attributes replaced, unchecked, as pydantic's model_copy."""
        values = {attr: getattr(self, attr) for attr, *_ in self.record_fields} | (update or {})
        copy: Self = make(type(self), tuple(values.values()), self.model_fields_set | set(update or ()))
        return copy


def make(cls: type[Record], values: Iterable[Any], fields_set: Iterable[str]) -> Any:
    """A record of `values` in field order, unchecked (a default, a copy, an unpickled one)."""
    record = object.__new__(cls)
    for (attr, *_), value in zip(cls.record_fields, values, strict=True):
        object.__setattr__(record, attr, value)
    object.__setattr__(record, "model_fields_set", _fields_set(fields_set))
    return record


def _fields_set(names: Iterable[str]) -> frozenset[str]:
    """One frozenset for each set of given fields: the records of many profiles share a few (a blueprint's copies
    give the same keys), and a frozenset of a record's field names is larger than the record itself."""
    found = frozenset(names)
    return _FIELDS_SETS.setdefault(found, found)


_FIELDS_SETS: dict[frozenset[str], frozenset[str]] = {}  # immutable values only: sharing them is invisible


def build(cls: type[Record], data: Any) -> Any:
    """`data` as a record of `cls`, as the model class validates it (unknown keys and missing ones bail)."""
    if type(data) is not dict or not data.keys() <= cls.record_keys:
        raise Bail
    record = object.__new__(cls)
    given = []
    for attr, key, check, default in cls.record_fields:
        if key in data:
            value = check(data[key])
            given.append(attr)
        elif default is REQUIRED:
            raise Bail
        else:
            value = default.make() if isinstance(default, Factory) else default
        object.__setattr__(record, attr, value)
    object.__setattr__(record, "model_fields_set", _fields_set(given))
    try:
        for rule in cls.record_rules:
            getattr(record, rule)()
    except Exception:  # a rule that finds a problem: the model reports it
        raise Bail from None
    return record


def record(cls: type[Record]) -> Check:
    return lambda value: build(cls, value)


def text(value: Any) -> Any:
    if type(value) is not str:
        raise Bail
    return value


def integer(value: Any) -> Any:
    if type(value) is not int:
        raise Bail
    return value


def number(value: Any) -> Any:
    # Strict floats take ints too, and hold them as floats; never booleans, NaN or infinities (allow_inf_nan=False).
    if type(value) not in (int, float) or not math.isfinite(value):
        raise Bail
    return float(value)


def boolean(value: Any) -> Any:
    if type(value) is not bool:
        raise Bail
    return value


def anything(value: Any) -> Any:
    return value


def literal(*allowed: object) -> Check:
    kinds = {(type(a), a) for a in allowed}

    def check(value: Any) -> Any:
        if type(value) not in _SCALAR_TYPES or (type(value), value) not in kinds:  # a mapping is unhashable
            raise Bail
        return value

    return check


_SCALAR_TYPES = (str, int, float, bool, type(None))


def optional(inner: Check) -> Check:
    return lambda value: None if value is None else inner(value)


def tuple_of(inner: Check) -> Check:
    def check(value: Any) -> Any:
        if type(value) is not tuple:
            raise Bail
        return tuple(inner(item) for item in value)

    return check


def dict_of(key: Check, inner: Check) -> Check:
    def check(value: Any) -> Any:
        if type(value) is not dict:
            raise Bail
        return {key(k): inner(v) for k, v in value.items()}

    return check


def union(*members: Check) -> Check:
    """The first member that accepts the value (the unions here take one member per Python type)."""

    def check(value: Any) -> Any:
        for member in members:
            try:
                return member(value)
            except Bail:
                pass
        raise Bail

    return check


def before(function: Callable[[Any], Any], inner: Check) -> Check:
    def check(value: Any) -> Any:
        try:
            value = function(value)
        except Exception:  # the validator's error: the model reports it
            raise Bail from None
        return inner(value)

    return check


def after(inner: Check, function: Callable[[Any], Any]) -> Check:
    def check(value: Any) -> Any:
        value = inner(value)
        try:
            return function(value)
        except Exception:  # the validator's error: the model reports it
            raise Bail from None

    return check


def bounded(inner: Check, op: str, limit: Any) -> Check:
    """annotated_types' Gt, Ge, Lt, Le, MinLen and MaxLen, as pydantic applies them."""
    test = _BOUNDS[op]

    def check(value: Any) -> Any:
        value = inner(value)
        if not test(value, limit):
            raise Bail
        return value

    return check


_BOUNDS: dict[str, Callable[[Any, Any], bool]] = {
    "gt": lambda v, limit: v > limit,
    "ge": lambda v, limit: v >= limit,
    "lt": lambda v, limit: v < limit,
    "le": lambda v, limit: v <= limit,
    "min_length": lambda v, limit: len(v) >= limit,
    "max_length": lambda v, limit: len(v) <= limit,
}
