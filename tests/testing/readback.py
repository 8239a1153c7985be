"""What the real parsers read back from text rlobs serialised from data: PyYAML, json and python-hcl2. The run-time
check does not parse those files (rlobs.bundle.check); the test suite proves here that they read back as the data."""

from __future__ import annotations

import json
import re
from typing import Any

import hcl2
import yaml

from rlobs.bundle.check import hcl_for_parser

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NUMBER = re.compile(r"\$\{(-?[0-9]+(?:\.[0-9]+)?[eE][-+]?[0-9]+)\}")


def read_back(text: str, fmt: str) -> Any:
    """The data a YAML (one document), JSON or HCL attribute file holds, as its format's parser reads it."""
    if fmt == "yaml":
        return yaml.load(text, Loader=_Loader)
    if fmt == "json":
        return json.loads(text)
    if fmt == "hcl":
        return hcl_values(text)
    raise ValueError(f"no parser for {fmt}")


def hcl_values(text: str) -> dict[str, Any]:
    """python-hcl2's reading of an attribute file, its values as Terraform reads them. python-hcl2 returns a string
    as its quoted source text (escapes included, JSON's but for `$${` and `%%{`, which hcl_for_parser spells as
    `$\\u007b`: JSON's too), a map's keys so too, a number with an exponent as the expression `${1e-07}`, and the
    comments under `__comments__`."""
    parsed = hcl2.loads(hcl_for_parser(text))
    return {key: _hcl(value) for key, value in parsed.items() if key != "__comments__"}


def _hcl(value: Any) -> Any:
    if isinstance(value, dict):
        return {_hcl(k): _hcl(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_hcl(v) for v in value]
    if isinstance(value, str):
        if len(value) >= 2 and value[0] == value[-1] == '"':
            return json.loads(value)
        number = _NUMBER.fullmatch(value)
        if number is not None:
            return float(number.group(1))
        raise AssertionError(f"not a literal value: {value}")  # an expression or interpolation
    return value


def typed(value: Any) -> Any:
    """`value` with every scalar's type beside it, and tuples as the lists a parser reads: equal only when the data
    is the same with the same types (Python's `1 == 1.0 == True` would hide a bool written as a number)."""
    if isinstance(value, dict):
        return ("map", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return ("list", [typed(v) for v in value])
    return (type(value).__name__, value)
