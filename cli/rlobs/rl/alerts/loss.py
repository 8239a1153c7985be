"""RLLossSpike: the training loss diverged, or came out NaN or infinite."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import LossSpikeAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, minutes


def rule(ls: LossSpikeAlert, q: Query) -> Alert:
    loss = q.sel("train_loss")
    loss_now = q.by("max", f"abs({loss})")
    # The average |loss| over the baseline window before the last one: a divergence keeps firing for a whole
    # baseline window (it cannot raise its own baseline sooner), and the first window of a run, when warm-up
    # changes the loss most, has no baseline yet. Policy-gradient losses can be negative: magnitudes.
    loss_base = q.by("avg", f"avg_over_time(abs({loss})[{ls.baseline}:] offset {ls.baseline})")
    # The generated module counts NaN/inf losses (the SDK drops non-finite values, so no gauge could carry them).
    # Over the baseline window: a single NaN keeps the alert firing for that long (it poisons the weights).
    nonfinite = q.by("sum", f"increase({q.sel('loss_nonfinite')}[{ls.baseline}])")
    diverged = f"({loss_now} > {number(ls.factor)} * {loss_base} and {loss_now} > {number(ls.floor)})"
    return Alert(
        key="loss_spike",
        name="RLLossSpike",
        severity=ls.severity,
        summary="RL run {run}: training loss diverged or is NaN",
        description=f"Training loss of run {{run}} exceeds {number(ls.floor)} and {number(ls.factor)}x its average "
        f"magnitude over the {ls.baseline} window before the last {ls.baseline}, or NaN/infinite losses were recorded "
        f"in the last {ls.baseline}.",
        runbook=f"The loss is diverging, or came out NaN/infinite ({q.m('loss_nonfinite').name} counts those; the "
        "loss gauge keeps the last finite value). Check for exploding gradients (grad norm), a bad batch (very long or "
        "empty samples), mixed-precision overflow, and the learning-rate schedule. A NaN loss poisons the weights: "
        "stop the run and resume from the last finite checkpoint. The absolute floor keeps a loss that grows from "
        "~0 during warm-up (GRPO before any sample is rewarded) from firing.",
        expr=f"{diverged} or ({nonfinite} > 0)",
        for_=ls.for_,
        metrics=("train_loss", "loss_nonfinite"),
        probes=(loss_now, loss_base, nonfinite),
    )


def case(ls: LossSpikeAlert, alert: Alert, b: CaseBuilder) -> Case:
    f, base = minutes(alert.for_), minutes(ls.baseline)
    onset = 2 * base  # a full baseline window before the last one
    end = onset + 3 * f + 10
    high = max(ls.floor, 1.0) * 2 * (ls.factor + 1)  # above the floor and far above the steady baseline
    steady = max(ls.floor, 1.0) / 2
    # NaN losses from minute `base` on: the loss gauge keeps its last finite value, the counter counts them.
    b.add("nan", f"{number(steady)}+0x{end}")
    b.add("nan", f"0+0x{onset} 1+1x{end - onset}", "loss_nonfinite")
    b.add("one-nan", f"{number(steady)}+0x{end}")
    b.add("one-nan", f"0+0x{onset} 1+0x{end - onset}", "loss_nonfinite")
    b.add("spiking", f"{number(steady)}+0x{onset} {number(high)}+0x{end - onset}")
    # GRPO warm-up: ~0 while no sample is rewarded, then several-fold growth that stays under the floor.
    warmup = " ".join(number(min(steady, 0.001 * 1.5**i)) for i in range(end + 1))
    b.add("warm-up", warmup)
    b.add("steady", f"{number(steady)}+0x{end}")
    b.add("steady-negative", f"-{number(steady)}+0x{end}")
    for run in ("spiking", "warm-up", "steady", "steady-negative"):
        b.add(run, f"0+0x{end}", "loss_nonfinite")
    return b.case(onset + 2 * f + 2, ["nan", "one-nan", "spiking"], ["steady", "steady-negative", "warm-up"])


ALERT = AlertDef(lambda a: a.loss_spike, rule, case)
