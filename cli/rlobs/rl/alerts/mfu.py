"""RLMfuLow: model FLOPs utilisation stayed below its threshold."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import MfuLowAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, minutes


def rule(mf: MfuLowAlert, q: Query) -> Alert:
    mfu = q.by("max", q.sel("train_mfu"))
    return Alert(
        key="mfu_low",
        name="RLMfuLow",
        severity=mf.severity,
        summary=f"RL run {{run}}: model FLOPs utilisation below {number(round(mf.threshold * 100, 9))}%",
        description=f"MFU of run {{run}} stayed below {number(mf.threshold)} (0-1) for {mf.for_}.",
        runbook="GPUs are mostly idle during training. Check whether the trainer waits on rollouts "
        "(compare rl.sample and rl.train durations), data loading, host-to-device copies, small micro-batches, "
        "or inter-node communication (NCCL over the wrong interface, no EFA/GPUDirect).",
        expr=f"{mfu} < {number(mf.threshold)}",
        for_=mf.for_,
        metrics=("train_mfu",),
        probes=(mfu,),
    )


def case(mf: MfuLowAlert, alert: Alert, b: CaseBuilder) -> Case:
    f, t = minutes(alert.for_), mf.threshold
    b.add("starved", f"{number(t / 2)}+0x{f + 5}")
    b.add("busy", f"{number((t + 1) / 2)}+0x{f + 5}")
    return b.case(f + 2, ["starved"], ["busy"])


ALERT = AlertDef(lambda a: a.mfu_low, rule, case)
