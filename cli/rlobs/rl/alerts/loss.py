"""RLLossSpike: the training loss diverged, or is NaN."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import LossSpikeAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, minutes


def rule(ls: LossSpikeAlert, q: Query) -> Alert:
    loss = q.sel("train_loss")
    loss_now = q.by("max", f"abs({loss})")
    # Policy-gradient losses can be negative: compare magnitudes. A subquery gives avg_over_time an abs() input.
    loss_base = q.by("avg", f"avg_over_time(abs({loss})[{ls.baseline}:1m])")
    nan = q.by("count", f"{loss} != {loss}")  # NaN is the only value not equal to itself
    return Alert(
        key="loss_spike",
        name="RLLossSpike",
        severity=ls.severity,
        summary="RL run {run}: training loss spiked or is NaN",
        description=f"Training loss of run {{run}} exceeds {number(ls.factor)}x its {ls.baseline} average "
        "magnitude, or is NaN.",
        runbook="The loss is diverging (or NaN). Check for exploding gradients (grad norm), a bad batch "
        "(very long or empty samples), mixed-precision overflow, and the learning-rate schedule. A NaN loss "
        "poisons the weights: stop the run and resume from the last finite checkpoint.",
        expr=f"({loss_now} > {number(ls.factor)} * {loss_base}) or ({nan} > 0)",
        for_=ls.for_,
        metrics=("train_loss",),
        probes=(loss_now, loss_base),
    )


def case(ls: LossSpikeAlert, alert: Alert, b: CaseBuilder) -> Case:
    f, base, k = minutes(alert.for_), minutes(ls.baseline), ls.factor
    spike = f + 2
    firing = ["nan"]
    b.add("nan", f"1+0x{base} " + " ".join(["NaN"] * (spike + 2)))
    if base > k * spike:  # otherwise the spike itself lifts the baseline past reach
        value = 2 * k * (base - spike) / (base - k * spike) + 1
        b.add("spiking", f"1+0x{base} {number(value)}+0x{spike + 1}")
        firing.append("spiking")
    b.add("steady", f"1+0x{base + spike + 2}")
    b.add("steady-negative", f"-0.3+0x{base + spike + 2}")
    return b.case(base + 1 + f + 1, firing, ["steady", "steady-negative"])


ALERT = AlertDef(lambda a: a.loss_spike, rule, case)
