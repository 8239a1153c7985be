"""RLSyncLatencyHigh: moving weights from trainer to rollout workers is slow."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import SyncLatencyAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, bucket_above, minutes


def rule(sl: SyncLatencyAlert, q: Query) -> Alert:
    if q.m("sync_duration").unit != "ms":  # the threshold is in ms; catalog units never change for a name
        raise ValueError("the sync duration histogram must be in ms")
    sync = q.p95("sync_duration", sl.window)
    return Alert(
        key="sync_latency",
        name="RLSyncLatencyHigh",
        severity=sl.severity,
        summary=f"RL run {{run}}: weight sync p95 above {number(sl.threshold_ms / 1000)}s",
        description=f"p95 weight-sync duration of run {{run}} over {sl.window} exceeds {number(sl.threshold_ms)} ms.",
        runbook="Moving weights from trainer to rollout workers is slow. Check the rl.sync spans "
        "(rl.sync.bytes, source, destination), network bandwidth between node pools, whether NCCL/RDMA "
        "is used or it falls back to TCP or object storage, and contention with checkpoint writes.",
        expr=f"{sync} > {number(sl.threshold_ms)}",
        for_=sl.for_,
        metrics=("sync_duration",),
        probes=(sync,),
    )


def case(sl: SyncLatencyAlert, alert: Alert, b: CaseBuilder) -> Case:
    f, w = minutes(alert.for_), minutes(sl.window)
    too_slow = bucket_above(b.metric.buckets, sl.threshold_ms)
    quick = max([x for x in b.metric.buckets if x <= sl.threshold_ms / 2], default=None)
    firing, silent = [], []
    if too_slow is not None:
        b.histogram("slow", [(w + f + 5, too_slow, 1)])
        firing.append("slow")
    if quick is not None:
        b.histogram("fast", [(w + f + 5, quick, 1)])
        silent.append("fast")
    return b.case(w + f + 3, firing, silent)


ALERT = AlertDef(lambda a: a.sync_latency, rule, case)
