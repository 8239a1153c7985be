"""RLRewardCollapse: the mean reward's recent median fell far below its peak, by a real amount and beyond its noise."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import RewardCollapseAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder
from rlobs.rl.alerts.lifecycle import coarse, window


def rule(r: RewardCollapseAlert, q: Query) -> Alert:
    reward = q.sel("reward_mean")

    def collapsed(s: int) -> str:
        # The median of the last 2.5-5 iterations (never one outlier) against the peak of that median over the baseline
        # before them. The noise is the reward's typical spread within such a window over the baseline (a window holds
        # several batches, and a collapse raises only the few windows that straddle it).
        recent, base, step = window(r.smooth, 5 * s // 2), window(r.baseline, 10 * s), coarse(r.baseline, 10 * s)
        now = f"quantile_over_time(0.5, {reward}[{recent}])"
        peak = f"max_over_time({now}[{base}:{step}] offset {recent})"
        low = f"min_over_time({reward}[{base}] offset {recent})"
        noise = f"quantile_over_time(0.5, stddev_over_time({reward}[{recent}])[{base}:{step}] offset {recent})"
        # peak - now > drop x (peak - low), rearranged so each costly peak is computed twice, not four times.
        return (
            f"((({peak} - {now}) > clamp_min({number(r.noise)} * {noise}, {number(r.min_drop)})) "
            f"and ({number(round(1 - r.drop, 9))} * {peak} + {number(r.drop)} * {low} - {now} > 0))"
        )

    expr = q.gated(q.life.ladder(collapsed))
    return Alert(
        key="reward_collapse",
        name="RLRewardCollapse",
        severity=r.severity,
        summary="RL run {run}: mean reward collapsed",
        description=f"The median mean reward of run {{run}} over its last iterations is {{value}} below its peak over "
        f"the baseline before (threshold: more than {number(round(r.drop * 100, 9))}% of the baseline range, more "
        f"than {number(r.min_drop)}, and more than {number(r.noise)} times the reward's typical standard deviation "
        "within that many iterations).",
        runbook="Mean reward fell far below its recent peak. Typical causes: policy collapse or reward hacking "
        "caught by a verifier change, a learning-rate or KL-coefficient spike, a broken reward sandbox "
        "returning default scores, or a data/environment change. Compare rl.reward spans (sandbox errors), "
        "loss and KL around the drop; roll back to the last good checkpoint if the policy degenerated. The windows "
        "count iterations (3 recent, at least 10 of baseline), so long iterations and single bad batches do not fire.",
        expr=expr,
        for_=r.for_,
        metrics=("reward_mean",),
        probes=(q.by("max", f"last_over_time({reward}[1h])"),),
        keep_firing_for=r.keep_firing_for,
    )


def case(_r: RewardCollapseAlert, _alert: Alert, b: CaseBuilder) -> Case:
    end = 180
    b.trainers(end + 1, "collapsed", "steady")
    b.add("collapsed", f"0.7+0x120 0.05+0x{end - 120}")
    b.add("steady", f"0.7+0x{end}")
    return b.case(end, ["collapsed"], ["steady"])


ALERT = AlertDef(lambda a: a.reward_collapse, rule, case)
