"""The profile's rules as plain functions and constants, without pydantic: the pydantic model (rlobs.profile.model
and the target sections) attaches them to its fields, and the compiled profile (rlobs.profile.records) runs the same
ones on the render path, where importing pydantic and building its model would cost most of a cold start."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache
from typing import Any, Literal

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


@cache
def compiled(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled on its first use, not at import: a profile meets a few of the model's ~25 patterns, and
    compiling them all (re's parser is pure Python) was a tenth of building the model classes."""
    return re.compile(pattern)


def matching(pattern: str, expected: str, max_len: int | None = None) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not compiled(pattern).fullmatch(value) or (max_len is not None and len(value) > max_len):
            raise ValueError(f"expected {expected}")
        return value

    # The compiled profile rebuilds this check from its arguments (tools/profile_records.py).
    check.matching = (pattern, expected, max_len)  # type: ignore[attr-defined]
    return with_json_pattern(check, pattern, max_len, expected=expected)


def with_json_pattern(
    check: Callable[[str], str], pattern: str, max_len: int | None = None, *, expected: str | None = None
) -> Callable[[str], str]:
    """Mark a string validator with the regex it enforces, so the editor schema carries the same rule
    (ProfileJsonSchema); the patterns use only syntax JSON Schema's ECMA-262 regexes share with Python's. `expected`
    is what it expects in words: the loader says it when the value is not a string at all (a number, true)."""
    check.json_pattern = f"^(?:{pattern})$"  # type: ignore[attr-defined]
    check.json_max_length = max_len  # type: ignore[attr-defined]
    check.expected = expected  # type: ignore[attr-defined]
    return check


# Prometheus durations as PrometheusRule `for:`, range selectors and Cloud Monitoring accept them. Prometheus keeps a
# duration in int64 nanoseconds (prometheus/common model.ParseDuration refuses more than ~292 years as "out of
# range"); rlobs allows up to ten years, which every window and retention here fits in.
MAX_DURATION_SECONDS = 3650 * 86400
DURATION = r"[1-9][0-9]{0,8}(s|m|h|d)"


def duration(value: str) -> str:
    if not compiled(DURATION).fullmatch(value) or duration_seconds(value) > MAX_DURATION_SECONDS:
        raise ValueError("expected a duration like 30s, 15m, 6h or 1d, at most 3650d")
    return value


def not_a_number(value: object) -> object:
    # `exportInterval: 15` reads as the number 15: say which unit to add rather than "expected a string".
    if isinstance(value, int | float) and not isinstance(value, bool):
        # .inf and .nan are numbers to YAML too (int() of them raises, and that escaped as a traceback).
        whole = math.isfinite(value) and value == int(value) and 0 < value < 10**9
        like = f"{value:.0f}s" if whole else "30s, 15m, 6h or 1d"
        raise ValueError(f"expected a duration like {like} (a number and a unit), got the number {value:g}")
    return value


def duration_seconds(value: str) -> int:
    """Seconds in a Duration string (already validated)."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return int(value[:-1]) * units[value[-1]]


# Characters no free text of a profile may hold, whoever reads it: C0/C1 controls and DEL (a terminal runs escape
# sequences, a newline splits a one-line report or a YAML/Markdown line), Unicode line and paragraph separators, and
# invisible format characters such as the bidirectional overrides (U+202E), which make text read otherwise than it
# is (CVE-2021-42574): every Cc, Cf, Zl and Zp character of the Basic Multilingual Plane. The same class in
# ECMA-262 and Python regex syntax, so the schema carries it as is.
INVISIBLE = (
    r"\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    r"\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
)


def one_line(consumer: str, max_len: int) -> Callable[[str], str]:
    """One line of printable text for `consumer` (who reads the value, said in the message)."""
    return matching(
        f"[^{INVISIBLE}]*",
        f"one line of at most {max_len} characters without control or invisible characters ({consumer})",
        max_len,
    )


def to_camel(name: str) -> str:
    """A profile key from a field name, as pydantic's alias generator makes it (`storage_size` -> `storageSize`);
    tests/test_records.py checks the two agree on every field."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# Characters W&B refuses in a run id (docs.wandb.ai run identifiers: no / \ # ? % :).
WANDB_ID_FORBIDDEN = frozenset("/\\#?%:")

# The paths each rollout engine's metrics can arrive by (data/engines.yaml `paths`; rl/engines.py checks they agree).
ROLLOUT_PATHS = {"vllm": ("engine", "ray"), "sglang": ("engine",)}


def job_short_form(value: Any) -> Any:
    # `replicatedJobs: [trainer]` is short for `[{name: trainer}]` (the container is workload.container).
    if isinstance(value, tuple | list):
        return tuple({"name": item} if isinstance(item, str) else item for item in value)
    return value
