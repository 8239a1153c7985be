"""RLSyncLatencyHigh: moving weights from trainer to rollout workers is slow, sync after sync."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import SyncLatencyAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, durations
from rlobs.rl.alerts.lifecycle import window
from rlobs.rl.alerts.loop import average


def rule(sl: SyncLatencyAlert, q: Query) -> Alert:
    t = number(sl.threshold_ms)

    def slow(s: int) -> str:
        half = window(sl.window, 3 * s)  # two consecutive windows: one slow sync lies in one only
        now, before = average(q, "sync_duration", half), average(q, "sync_duration", half, half)
        return f"(({now} > {t}) and ({before} > {t}))"

    return Alert(
        key="sync_latency",
        name="RLSyncLatencyHigh",
        severity=sl.severity,
        summary=f"RL run {{run}}: weight sync slower than {number(sl.threshold_ms / 1000)}s",
        description=f"The average weight-sync duration of run {{run}} is {{value}} ms in each of two consecutive "
        f"recent windows (threshold {t} ms).",
        runbook="Moving weights from trainer to rollout workers is slow. Check the rl.sync spans "
        "(rl.sync.bytes, source, destination), network bandwidth between node pools, whether NCCL/RDMA "
        "is used or it falls back to TCP or object storage, and contention with checkpoint writes.",
        expr=q.gated(q.life.ladder(slow)),
        for_=sl.for_,
        metrics=("sync_duration",),
        probes=(average(q, "sync_duration", sl.window),),
    )


def case(sl: SyncLatencyAlert, _alert: Alert, b: CaseBuilder) -> Case:
    end = 120
    b.trainers(end + 1, "slow", "fast")
    durations(b, "slow", "sync_duration", [(end + 1, sl.threshold_ms * 2)])
    durations(b, "fast", "sync_duration", [(end + 1, sl.threshold_ms / 4)])
    return b.case(end, ["slow"], ["fast"])


ALERT = AlertDef(lambda a: a.sync_latency, rule, case)
