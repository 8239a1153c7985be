"""Validated scalar types shared by the profile model; each rule says what it expects, as users read it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field
from pydantic import BaseModel as _BaseModel
from pydantic.alias_generators import to_camel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema


class Model(_BaseModel):
    """Base of every profile object: camelCase keys, unknown keys rejected, no coercion, frozen."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=False,
        extra="forbid",
        frozen=True,
        strict=True,
        validate_default=False,
        allow_inf_nan=False,  # a threshold of nan or inf is never meant
    )


@cache
def compiled(pattern: str) -> re.Pattern[str]:
    """On first use: a profile meets few of the ~25 patterns; compiling all at import took a tenth of model building."""
    return re.compile(pattern)


def matching(pattern: str, expected: str, max_len: int | None = None) -> Callable[[str], str]:
    def check(value: str) -> str:
        if (max_len is not None and len(value) > max_len) or not compiled(pattern).fullmatch(value):
            raise ValueError(f"expected {expected}")
        return value

    return with_json_pattern(check, pattern, max_len, expected=expected)


def with_json_pattern(
    check: Callable[[str], str], pattern: str, max_len: int | None = None, *, expected: str
) -> Callable[[str], str]:
    """Mark `check` with its regex (ECMA-262 syntax too) for the editor schema; `expected` is said to a non-string."""
    check.json_pattern = f"^(?:{pattern})$"  # type: ignore[attr-defined]
    check.json_max_length = max_len  # type: ignore[attr-defined]
    check.expected = expected  # type: ignore[attr-defined]
    return check


class ProfileJsonSchema(GenerateJsonSchema):
    def function_after_schema(self, schema: core_schema.AfterValidatorFunctionSchema) -> JsonSchemaValue:
        out = super().function_after_schema(schema)
        check = schema["function"]["function"]
        rules = {"pattern": getattr(check, "json_pattern", None), "maxLength": getattr(check, "json_max_length", None)}
        return {**out, **{key: value for key, value in rules.items() if value is not None}}


# Kubernetes object names and namespaces: RFC 1123 labels
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names).
DnsLabel = Annotated[
    str,
    AfterValidator(
        matching(
            r"[a-z0-9]([-a-z0-9]*[a-z0-9])?",
            "a Kubernetes name (RFC 1123 label: at most 63 lowercase letters, digits and '-', "
            "starting and ending with a letter or digit) like rl-trainer",
            63,
        )
    ),
]

# Prometheus durations as PrometheusRule `for:`, range selectors and Cloud Monitoring accept them. Prometheus keeps a
# duration in int64 nanoseconds (prometheus/common model.ParseDuration refuses more than ~292 years as "out of
# range"); rlobs allows up to ten years, which every window and retention here fits in.
MAX_DURATION_SECONDS = 3650 * 86400
_DURATION = r"[1-9][0-9]{0,8}(s|m|h|d)"


def _duration(value: str) -> str:
    if not compiled(_DURATION).fullmatch(value) or duration_seconds(value) > MAX_DURATION_SECONDS:
        raise ValueError("expected a duration like 30s, 15m, 6h or 1d, at most 3650d")
    return value


def _not_a_number(value: object) -> object:
    # `exportInterval: 15` reads as the number 15: say which unit to add rather than "expected a string".
    if isinstance(value, int | float) and not isinstance(value, bool):
        # .inf and .nan are numbers to YAML too (int() of them raises, and that escaped as a traceback).
        whole = math.isfinite(value) and value == int(value) and 0 < value < 10**9
        like = f"{value:.0f}s" if whole else "30s, 15m, 6h or 1d"
        raise ValueError(f"expected a duration like {like} (a number and a unit), got the number {value:g}")
    return value


Duration = Annotated[
    str,
    BeforeValidator(_not_a_number),
    AfterValidator(with_json_pattern(_duration, _DURATION, expected="a duration like 30s, 15m, 6h or 1d")),
]

# Attribute values the instrumentation sends on every data point; keep them short and printable.
AttrValue = Annotated[
    str,
    AfterValidator(
        matching(
            r"[A-Za-z0-9][A-Za-z0-9._:/+@-]*",
            "a short identifier (letters, digits and . _ : / + @ -) like grpo or Qwen2.5-7B",
            128,
        )
    ),
]

# Characters no free text of a profile may hold: every Cc, Cf, Zl and Zp character of the Basic Multilingual Plane
# (terminal escapes, newlines that split a report or a YAML line, bidirectional overrides that make text read
# otherwise than it is: CVE-2021-42574), in syntax ECMA-262 and Python share, so the schema carries it as is.
INVISIBLE = (
    r"\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    r"\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
)


def one_line(consumer: str, max_len: int) -> Callable[[str], str]:
    return matching(
        f"[^{INVISIBLE}]*",
        f"one line of at most {max_len} characters without control or invisible characters ({consumer})",
        max_len,
    )


Severity = Literal["critical", "warning", "info"]
# Which alerts a receiver or channel gets: the bundle's RL alerts, the stack's cluster alerts, or both.
AlertGroup = Literal["rl", "cluster", "all"]
# Pagers get only what must wake someone; chat and webhooks get warnings too.
DEFAULT_SEVERITIES: dict[str, tuple[Severity, ...]] = {
    "pagerduty": ("critical",),
    "slack": ("critical", "warning"),
    "webhook": ("critical", "warning"),
    "channel": ("critical", "warning"),
}

Fraction = Annotated[float, Field(gt=0, le=1)]
Positive = Annotated[float, Field(gt=0)]


def duration_seconds(value: str) -> int:
    """Seconds in a Duration string (already validated)."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return int(value[:-1]) * units[value[-1]]
