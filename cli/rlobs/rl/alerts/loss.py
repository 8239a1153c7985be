"""RLLossSpike: the training loss diverged over the last iterations, or came out NaN or infinite."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import LossSpikeAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder
from rlobs.rl.alerts.lifecycle import coarse, dur, window


def rule(ls: LossSpikeAlert, q: Query) -> Alert:
    loss = q.sel("train_loss")

    def diverged(s: int) -> str:
        # The median |loss| of the last 2.5-5 iterations (a single bad batch is never the median) against the average
        # |loss| over the baseline before them. Policy-gradient losses can be negative: magnitudes.
        recent, base, step = dur(5 * s // 2), window(ls.baseline, 10 * s), coarse(ls.baseline, 10 * s)
        now = f"abs(quantile_over_time(0.5, {loss}[{recent}]))"
        avg = f"avg_over_time(abs({loss})[{base}:{step}] offset {recent})"
        return f"(({now} > {number(ls.factor)} * {avg}) and ({now} > {number(ls.floor)}))"

    # The generated module counts NaN/inf losses (the SDK drops non-finite values, so no gauge could carry them); one
    # poisons the weights, so one fires.
    nonfinite = f"(increase({q.sel('loss_nonfinite')}[10m]) > 0)"
    expr = q.gated(f"({q.life.ladder(diverged)} or on ({q.run}) {q.by('max', nonfinite)})")
    return Alert(
        key="loss_spike",
        name="RLLossSpike",
        severity=ls.severity,
        summary="RL run {run}: training loss diverged or is NaN",
        description=f"Training loss of run {{run}}: {{value}} (the median |loss| of its last iterations, above "
        f"{number(ls.floor)} and {number(ls.factor)}x its average |loss| over the baseline before; or the count of "
        "NaN/infinite losses in the last 10 minutes).",
        runbook=f"The loss is diverging, or came out NaN/infinite ({q.catalog.metric('loss_nonfinite').name} counts "
        "those; the loss gauge keeps the last finite value). Check for exploding gradients (grad norm), a bad batch "
        "(very long or empty samples), mixed-precision overflow, and the learning-rate schedule. A NaN loss poisons "
        "the weights: stop the run and resume from the last finite checkpoint. The absolute floor keeps a loss that "
        "grows from ~0 during warm-up (GRPO before any sample is rewarded) from firing.",
        expr=expr,
        for_=ls.for_,
        metrics=("train_loss", "loss_nonfinite"),
        probes=(q.by("max", f"last_over_time({loss}[1h])"),),
        keep_firing_for=ls.keep_firing_for,
    )


def case(ls: LossSpikeAlert, _alert: Alert, b: CaseBuilder) -> Case:
    end = 150
    for run in ("spiking", "nan", "steady"):
        b.trainers(end + 1, run)
        b.add(run, f"0+0x{end}" if run != "nan" else f"0+0x140 1+0x{end - 140}", "loss_nonfinite")
    steady = number(max(ls.floor, 1.0) / 2)
    high = number(max(ls.floor, 1.0) * 2 * (ls.factor + 1))
    b.add("spiking", f"{steady}+0x130 {high}+0x{end - 130}")
    b.add("nan", f"{steady}+0x{end}")
    b.add("steady", f"{steady}+0x{end}")
    return b.case(end, ["nan", "spiking"], ["steady"])


ALERT = AlertDef(lambda a: a.loss_spike, rule, case)
