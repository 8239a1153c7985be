"""RLTrainingStalled: the optimizer step counter stopped increasing."""

from __future__ import annotations

from rlobs.profile.model import StallAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, minutes


def rule(s: StallAlert, q: Query) -> Alert:
    steps = f"increase({q.sel('train_steps')}[{s.window}])"
    return Alert(
        key="stall",
        name="RLTrainingStalled",
        severity=s.severity,
        summary=f"RL run {{run}} made no training step in {s.window}",
        description=f"The optimizer step counter of run {{run}} did not increase for {s.window}: the loop is hung, "
        "waiting on rollouts, or crashed and restarting.",
        runbook="The train step counter stopped. Check the trainer pod's logs and restarts "
        "(`kubectl logs`, `kubectl get pods`), the rl.loop spans of the last iterations (which phase never "
        "finished), rollout workers and reward sandboxes, and GPU health (XID errors, NCCL timeouts).",
        expr=f"{q.by('sum', steps)} < 1",
        for_=s.for_,
        metrics=("train_steps",),
        probes=(q.by("sum", steps),),
    )


def case(s: StallAlert, alert: Alert, b: CaseBuilder) -> Case:
    f, w = minutes(alert.for_), minutes(s.window)
    b.add("stalled", f"0+1x10 10+0x{w + f + 10}")
    b.add("healthy", f"0+1x{w + f + 25}")
    return b.case(10 + w + f + 3, ["stalled"], ["healthy"])


ALERT = AlertDef(lambda a: a.stall, rule, case)
