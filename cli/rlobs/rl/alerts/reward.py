"""RLRewardCollapse: mean reward fell far below its recent peak."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.model import RewardCollapseAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, minutes


def rule(r: RewardCollapseAlert, q: Query) -> Alert:
    reward = q.sel("reward_mean")
    peak = q.by("max", f"max_over_time({reward}[{r.baseline}])")
    low = q.by("min", f"min_over_time({reward}[{r.baseline}])")
    now = q.by("max", reward)
    return Alert(
        key="reward_collapse",
        name="RLRewardCollapse",
        severity=r.severity,
        summary="RL run {run}: mean reward collapsed",
        description=f"Mean reward of run {{run}} fell more than {number(round(r.drop * 100, 9))}% of its "
        f"{r.baseline} range below its {r.baseline} peak.",
        runbook="Mean reward fell far below its recent peak. Typical causes: policy collapse or reward hacking "
        "caught by a verifier change, a learning-rate or KL-coefficient spike, a broken reward sandbox "
        "returning default scores, or a data/environment change. Compare rl.reward spans (sandbox errors), "
        "loss and KL around the drop; roll back to the last good checkpoint if the policy degenerated.",
        expr=f"({peak} - {now}) > {number(r.drop)} * ({peak} - {low})",
        for_=r.for_,
        metrics=("reward_mean",),
        probes=(peak, low, now),
    )


def case(r: RewardCollapseAlert, alert: Alert, b: CaseBuilder) -> Case:
    f, base = minutes(alert.for_), minutes(r.baseline)
    margin = max(0, min(3, base - f - 1))
    b.add("collapsed", f"0+0.01x30 -0.5+0x{f + margin + 5}")
    b.add("improving", f"0+0.01x{f + margin + 40}")
    b.add("flat-negative", f"-1+0x{f + margin + 40}")
    return b.case(31 + f + margin, ["collapsed"], ["flat-negative", "improving"])


ALERT = AlertDef(lambda a: a.reward_collapse, rule, case)
