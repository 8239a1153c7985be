"""RLMfuLow: model FLOPs utilisation stayed below its threshold in every one of the last iterations."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import MfuLowAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder
from rlobs.rl.alerts.lifecycle import dur


def rule(mf: MfuLowAlert, q: Query) -> Alert:
    mfu = q.sel("train_mfu")
    expr = q.gated(q.life.ladder(lambda s: f"(max_over_time({mfu}[{dur(5 * s // 2)}]) < {number(mf.threshold)})"))
    return Alert(
        key="mfu_low",
        name="RLMfuLow",
        severity=mf.severity,
        summary=f"RL run {{run}}: model FLOPs utilisation below {number(round(mf.threshold * 100, 9))}%",
        description=f"MFU of run {{run}} was at most {{value}} in each of its last iterations (threshold "
        f"{number(mf.threshold)}, 0-1) for {mf.for_}.",
        runbook="GPUs are mostly idle during training. Check whether the trainer waits on rollouts "
        "(compare rl.sample and rl.train durations), data loading, host-to-device copies, small micro-batches, "
        "or inter-node communication (NCCL over the wrong interface, no EFA/GPUDirect).",
        expr=expr,
        for_=mf.for_,
        metrics=("train_mfu",),
        probes=(q.by("max", mfu),),
    )


def case(mf: MfuLowAlert, _alert: Alert, b: CaseBuilder) -> Case:
    end = 90
    b.trainers(end + 1, "starved", "busy")
    b.add("starved", f"{number(mf.threshold / 2)}+0x{end}")
    b.add("busy", f"{number((mf.threshold + 1) / 2)}+0x{end}")
    return b.case(end, ["starved"], ["busy"])


ALERT = AlertDef(lambda a: a.mfu_low, rule, case)
