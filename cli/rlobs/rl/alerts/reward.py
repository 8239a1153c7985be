"""RLRewardCollapse: the smoothed mean reward fell far below its recent peak, beyond the reward's own noise."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import RewardCollapseAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, minutes


def rule(r: RewardCollapseAlert, q: Query) -> Alert:
    reward = q.sel("reward_mean")
    smoothed = f"avg_over_time({reward}[{r.smooth}])"
    now = q.by("max", smoothed)
    peak = q.by("max", f"max_over_time({smoothed}[{r.baseline}:])")
    low = q.by("min", f"min_over_time({smoothed}[{r.baseline}:])")
    noise = q.by("max", f"stddev_over_time({reward}[{r.smooth}])")
    drop = f"({peak} - {now})"
    return Alert(
        key="reward_collapse",
        name="RLRewardCollapse",
        severity=r.severity,
        summary="RL run {run}: mean reward collapsed",
        description=f"The {r.smooth} mean reward of run {{run}} fell more than {number(round(r.drop * 100, 9))}% of "
        f"its {r.baseline} range below its {r.baseline} peak, and by more than {number(r.noise)} standard deviations "
        "of the reward's own noise.",
        runbook="Mean reward fell far below its recent peak. Typical causes: policy collapse or reward hacking "
        "caught by a verifier change, a learning-rate or KL-coefficient spike, a broken reward sandbox "
        "returning default scores, or a data/environment change. Compare rl.reward spans (sandbox errors), "
        "loss and KL around the drop; roll back to the last good checkpoint if the policy degenerated. The "
        "reward is averaged first, and the drop must exceed its noise, so noisy but rising rewards do not fire.",
        expr=f"{drop} > {number(r.drop)} * ({peak} - {low}) and {drop} > {number(r.noise)} * {noise}",
        for_=r.for_,
        metrics=("reward_mean",),
        probes=(peak, low, now, noise),
    )


def case(r: RewardCollapseAlert, alert: Alert, b: CaseBuilder) -> Case:
    f, base, smooth = minutes(alert.for_), minutes(r.baseline), minutes(r.smooth)
    rise = max(30, smooth + 5)
    end = rise + 2 * smooth + f + 10
    b.add("collapsed", f"0+0.02x{rise} -0.5+0x{end - rise}")
    # Rising with noise of +-0.1 each minute (an alternating saw), and a noisy plateau.
    b.add("noisy-rising", " ".join(number(round(0.01 * i + (0.1 if i % 2 else -0.1), 6)) for i in range(end + 1)))
    b.add("noisy-plateau", " ".join(number(0.6 + (0.1 if i % 2 else -0.1)) for i in range(end + 1)))
    b.add("flat-negative", f"-1+0x{end}")
    # Once the smoothing window is past the drop, the drop stands out of the noise; the peak must still lie in the
    # baseline window when `for` has elapsed.
    eval_at = min(rise + 2 * smooth + f + 3, rise + base - 1)
    return b.case(eval_at, ["collapsed"], ["flat-negative", "noisy-plateau", "noisy-rising"])


ALERT = AlertDef(lambda a: a.reward_collapse, rule, case)
