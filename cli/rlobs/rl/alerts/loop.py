"""RLLoopRegression: loop iterations got slower than their own recent past."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import LoopRegressionAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, bucket_above, minutes


def rule(lr: LoopRegressionAlert, q: Query) -> Alert:
    recent = q.p95("loop_duration", lr.window)
    # The baseline ends where the recent window starts, so a regression does not raise its own baseline.
    base = q.p95("loop_duration", lr.baseline, offset=lr.window)
    return Alert(
        key="loop_regression",
        name="RLLoopRegression",
        severity=lr.severity,
        summary="RL run {run}: loop p95 regressed",
        description=f"p95 loop duration of run {{run}} over the last {lr.window} exceeds {number(lr.factor)}x its "
        f"p95 over the {lr.baseline} before.",
        runbook="Iterations got slower. The phase durations (sample, reward, train, sync p95 panels) show which "
        "phase regressed: longer generations, a slow reward sandbox, stragglers or preempted nodes, or "
        "weight sync contention. Look at the slowest rl.loop traces.",
        expr=f"{recent} > {number(lr.factor)} * {base}",
        for_=lr.for_,
        metrics=("loop_duration",),
        probes=(recent, base),
    )


def case(lr: LoopRegressionAlert, alert: Alert, b: CaseBuilder) -> Case:
    f, w, base = minutes(alert.for_), minutes(lr.window), minutes(lr.baseline)
    fast = b.metric.buckets[min(5, len(b.metric.buckets) - 1)]
    slow = bucket_above(b.metric.buckets, lr.factor * fast)
    fast_minutes, tail = base + 5, w + f + 5
    firing = []
    # The baseline window still holds `for` minutes of slow loops when the alert fires; they must stay well
    # under 5% of its loops, or the baseline p95 itself turns slow and nothing can fire.
    room = 100 * (base - f - 2) * 0.04 > f + 2
    if slow is not None and room:
        # Slow loops complete less often, as in real runs: 1 per minute against 100.
        b.histogram("regressed", [(fast_minutes, fast, 100), (tail, slow, 1)])
        firing.append("regressed")
    b.histogram("steady", [(fast_minutes + tail, fast, 100)])
    return b.case(fast_minutes + w + f + 2, firing, ["steady"])


ALERT = AlertDef(lambda a: a.loop_regression, rule, case)
