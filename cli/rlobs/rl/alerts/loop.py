"""RLLoopRegression: iterations got slower than their own recent past, from the recorded durations (sum/count)."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import LoopRegressionAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, durations, minutes
from rlobs.rl.alerts.lifecycle import window


def average(q: Query, key: str, span: str, offset: str = "") -> str:
    """The average recorded duration over `span` (ms): sum over count, never a bucket boundary."""
    shift = f" offset {offset}" if offset else ""
    return f"(increase({q.sel(key, 'sum')}[{span}]{shift}) / increase({q.sel(key, 'count')}[{span}]{shift}))"


def rule(lr: LoopRegressionAlert, q: Query) -> Alert:
    f = number(lr.factor)

    def slower(s: int) -> str:
        # Two consecutive windows of at least 3 iterations must both be slow: one slow iteration lies in one only.
        half = window(lr.window, 3 * s)
        base = average(q, "loop_duration", window(lr.baseline, 10 * s), _twice(half))
        now, before = average(q, "loop_duration", half), average(q, "loop_duration", half, half)
        return f"(({now} / {base} > {f}) and ({before} / {base} > {f}))"

    return Alert(
        key="loop_regression",
        name="RLLoopRegression",
        severity=lr.severity,
        summary="RL run {run}: loop iterations got slower",
        description=f"The average loop duration of run {{run}} is {{value}}x its average over the baseline before, "
        f"in each of two consecutive recent windows (threshold {f}x).",
        runbook="Iterations got slower. The phase durations (sample, reward, train, sync panels) show which "
        "phase regressed: longer generations, a slow reward sandbox, stragglers or preempted nodes, or "
        "weight sync contention. Look at the slowest rl.loop traces.",
        expr=q.gated(q.life.ladder(slower)),
        for_=lr.for_,
        metrics=("loop_duration",),
        probes=(average(q, "loop_duration", lr.baseline),),
    )


def _twice(span: str) -> str:
    """Two consecutive spans back, as one duration."""
    return f"{int(span[:-1]) * 2}{span[-1]}"


def case(lr: LoopRegressionAlert, _alert: Alert, b: CaseBuilder) -> Case:
    # One iteration a minute (the first rung): each recent window spans `half`, the baseline `base` minutes.
    half, base, hold = minutes(window(lr.window, 180)), minutes(window(lr.baseline, 600)), minutes(lr.for_)
    onset = base + 10  # a full baseline of steady iterations before the regression
    end = onset + 2 * half + hold + 2  # both windows slow, then held for `for`
    # While the alert holds, slow iterations enter the baseline (hold + 2 of its minutes at the end); a jump of
    # 10x the factor keeps the ratio above the factor through it for any baseline longer than `for`.
    slow = 10 * lr.factor + 1
    b.trainers(end + 1, "regressed", "steady")
    durations(b, "regressed", "loop_duration", [(onset, 50_000.0), (end + 1 - onset, 50_000.0 * slow)])
    durations(b, "steady", "loop_duration", [(end + 1, 50_000.0)])
    return b.case(end, ["regressed"], ["steady"])


ALERT = AlertDef(lambda a: a.loop_regression, rule, case)
