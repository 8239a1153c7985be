"""The compiled profile (rlobs.profile.records) is what tools/profile_records.py writes from the current model, and
its strict checks accept a profile only where the pydantic model accepts it, into the same values."""

from __future__ import annotations

import importlib.util
import math
import pickle
import random
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel as pydantic_to_camel

from hostile_corpus import corpus
from rlobs.profile import records, strict
from rlobs.profile.checks import to_camel
from rlobs.profile.load import _MEMBERS, PROFILES, _tuples, as_record
from rlobs.profile.yamlsource import YamlSyntaxError, load_located
from testing.helpers import REPO, all_profiles

# Values put in place of each value of a valid profile, one at a time: every type YAML can give, and strings that
# are near a valid one.
_ODD: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1,
    7,
    1.5,
    0.0,
    math.inf,
    math.nan,
    10**12,
    "",
    "x",
    "X Y",
    "15",
    "30s",
    "1.34",
    "a" * 300,
    (),
    ("x",),
    ({"name": "x"},),
    {},
    {"name": "x", "key": "y"},
)


def _compiler() -> Any:
    spec = importlib.util.spec_from_file_location("profile_records", REPO / "tools" / "profile_records.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_records_are_compiled_from_the_current_model() -> None:
    text = _compiler().compile_records()
    assert (REPO / "cli" / "rlobs" / "profile" / "records.py").read_text(encoding="utf-8") == text, "run `make records`"


def _models(root: type[BaseModel], seen: set[type[BaseModel]]) -> Iterator[type[BaseModel]]:
    if root in seen:
        return
    seen.add(root)
    yield root
    stack = [f.annotation for f in root.model_fields.values()]
    while stack:
        ann = stack.pop()
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            yield from _models(ann, seen)
        stack.extend(getattr(ann, "__args__", ()) or ())
        stack.extend((getattr(ann, "__origin__", None) and [ann.__origin__]) or [])


def test_the_profile_keys_are_pydantics_camel_case() -> None:
    # The model's alias generator, and the alert table of the app's README (rl/app.py: each alert's key is a field
    # of Alerts), use rlobs' own to_camel.
    seen: set[type[BaseModel]] = set()
    names = {
        n
        for target in PROFILES
        for m in _models(_MEMBERS[target], seen)
        for n, f in m.model_fields.items()
        if f.alias_priority != 2  # not an alias of its own (`for`)
    }
    assert len(names) > 100
    assert {n: to_camel(n) for n in names} == {n: pydantic_to_camel(n) for n in names}


def _shape(value: Any) -> Any:
    """A value with its types spelled out (3 and 3.0 differ) and each record's set fields."""
    if isinstance(value, strict.Record):
        fields = tuple((attr, _shape(getattr(value, attr))) for attr, *_ in value.record_fields)
        return (type(value).__name__, tuple(sorted(value.model_fields_set)), fields)
    if isinstance(value, tuple):
        return ("tuple", tuple(_shape(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((_shape(k), _shape(v)) for k, v in value.items()))
    return (type(value).__name__, repr(value))


def _compare(data: Any) -> str:
    """'both' (accepted alike), 'model' (only the model accepts), 'neither'; fails when the checks accept more."""
    tag = data.get("target") if isinstance(data, dict) else None
    cls = records.PROFILES.get(tag) if isinstance(tag, str) else None
    model = _MEMBERS[tag] if cls is not None else None
    try:
        fast = strict.build(cls, data) if cls is not None else None
    except strict.Bail:
        fast = None
    try:
        slow = as_record(model.model_validate(data)) if model is not None else None
    except ValidationError:
        slow = None
    if fast is not None:
        assert slow is not None, f"the checks accepted what the model refuses: {data!r}"
        assert _shape(fast) == _shape(slow)
        return "both"
    return "model" if slow is not None else "neither"


def _data(text: str) -> Any:
    return _tuples(load_located(text).data)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The key path of every value below `value`."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, tuple) else ()
    for key, inner in items:
        yield (*path, key)
        yield from _paths(inner, (*path, key))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """`value` with the value at `path` replaced by `new` (or removed, for _REMOVE)."""
    head, rest = path[0], path[1:]
    out: Any = dict(value) if isinstance(value, dict) else list(value)
    if not rest and new is _REMOVE:
        del out[head]
    else:
        out[head] = _replaced(value[head], rest, new) if rest else new
    return out if isinstance(value, dict) else tuple(out)


def _variants(data: Any, rng: random.Random) -> Iterator[Any]:
    """`data` with one value replaced (or one key removed), for every value in it."""
    for path in _paths(data):
        old: Any = data
        for part in path:
            old = old[part]
        news = [_REMOVE, *rng.sample(_ODD, 8)]
        if isinstance(old, str):
            news += [old + "!", old.upper(), old + "\n", "-" + old]
        for new in news:
            yield _replaced(data, path, new)


_REMOVE = object()


def test_every_shipped_and_test_profile_is_accepted_by_the_checks() -> None:
    # The point of the checks: a valid profile never needs pydantic.
    for name, text in all_profiles().items():
        assert _compare(_data(text)) == "both", name


@pytest.mark.slow  # ~4,000 profiles through the pydantic model
def test_the_checks_agree_with_the_model_on_every_variant_of_every_profile() -> None:
    rng = random.Random(14)
    outcomes = {"both": 0, "model": 0, "neither": 0}
    for text in all_profiles().values():
        for variant in _variants(_data(text), rng):
            outcomes[_compare(variant)] += 1
    # Both kinds of outcome occur, and the checks give up only on what is rare in real profiles.
    assert outcomes["both"] > 500 and outcomes["neither"] > 1000, outcomes
    assert outcomes["model"] <= outcomes["both"] // 20, outcomes


@pytest.mark.slow  # ~2,000 profiles through the pydantic model
def test_the_checks_agree_with_the_model_on_the_hostile_corpus() -> None:
    count = 0
    for _, text in corpus(all_profiles()):
        try:
            data = _data(text)
        except (YamlSyntaxError, RecursionError, ValueError):
            continue
        if isinstance(data, dict):
            _compare(data)
            count += 1
    assert count > 1000


def test_a_record_is_frozen_picklable_and_copied_as_pydantic_copies() -> None:
    from testing.helpers import eks_profile

    p = eks_profile("eks-jark")
    with pytest.raises(AttributeError):
        p.kind = "x"  # type: ignore[misc]
    again = pickle.loads(pickle.dumps(p))
    assert again == p and _shape(again) == _shape(p) and hash(again.workload) == hash(p.workload)
    off = p.model_copy(update={"alerts": p.alerts.model_copy(update={"enabled": False})})
    assert off.alerts.enabled is False and p.alerts.enabled is True
    assert "alerts" in off.model_fields_set and off.workload is p.workload


def test_records_of_like_profiles_share_their_fields_sets() -> None:
    # A render of 1,000 copies of a blueprint holds 15,000 records: a frozenset each was 4 MiB of its peak memory.
    from rlobs.profile.load import parse_profile

    text = (REPO / "blueprints" / "eks-jark.yaml").read_text(encoding="utf-8")
    one, two = parse_profile(text), parse_profile(text.replace("name: rl-eks\n", "name: rl-eks-2\n", 1))
    assert one.metadata.name != two.metadata.name
    assert one.workload.model_fields_set is two.workload.model_fields_set
    assert one.metadata.model_fields_set is two.metadata.model_fields_set
    again = pickle.loads(pickle.dumps(one))
    assert again.workload.model_fields_set is one.workload.model_fields_set
