"""The profile's RL-run SLOs (`slos:`) as Prometheus rules and multi-window burn-rate alerts, with promtool tests."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic.alias_generators import to_camel, to_pascal

from rlobs.bundle.filters import number
from rlobs.profile.fields import duration_seconds
from rlobs.rl import naming
from rlobs.rl.alerts.cases import CaseBuilder
from rlobs.rl.alerts.lifecycle import FAILED, FINISHED, RECORDED, STARTING, TRAINING
from rlobs.rl.facts import RlFacts

# The SRE workbook's multi-window multi-burn-rate alerts ("Alerting on SLOs", table 5-8): (severity, long window,
# short window, burn rate); the two page pairs are one alert, the ticket another. A threshold is the burn rate times
# the budget (1 - objective), capped at an error ratio of 1: below an objective of 1 - 1/14.4 the fast page fires
# only when its whole window was bad.
PAGE, TICKET = "critical", "warning"
BURNS = ((PAGE, "1h", "5m", 14.4), (PAGE, "6h", "30m", 6.0), (TICKET, "3d", "6h", 1.0))
ERRORS = "rlobs:slo_errors:ratio_rate"  # + window: the error ratio over it
BAD = "rlobs:slo_bad"  # time-based SLIs: 1 for a bad minute, 0 for a good one, nothing when the SLO does not apply
BUDGET = "rlobs:slo_budget_remaining"  # share of the period's error budget left (negative once overspent)
BUDGET_TITLE = "Error budget remaining"
SLO_LABEL = "slo"
# Goodput is judged from a run's first step: the start is timeToFirstStep's (and the start-up budget's) to judge,
# else every run that loads a model for a few minutes would spend its goodput budget and page at once.
UNJUDGED = "starting"
BURN_LABEL = "slo_burn"  # page or ticket: a page of an SLO inhibits its ticket (targets/eks/alerting.py)


@dataclass(frozen=True, slots=True)
class Slo:
    key: str  # the profile's slos field (snake_case); CamelCase in alert names
    objective: float
    meaning: str  # what a good share means, for descriptions
    bad: str  # time-based SLIs: the per-minute bad indicator; "" for the counter ratio (goodput)
    runs: str  # each run's share of bad (the runbook's query for which runs spent the budget)


def objectives(facts: RlFacts) -> tuple[Slo, ...]:
    s = facts.profile.slos
    if s is None:
        return ()
    q = _Q(facts)
    found = []

    def timed(key: str, objective: float, meaning: str, runs: str) -> None:
        found.append(Slo(key, objective, meaning, f"avg({runs})", runs))

    if s.goodput:
        bucket = facts.catalog.attribute("time_bucket").name
        train = q.by("sum", f"increase({q.sel('run_time', {bucket: 'train'})}[6h])")
        judged = q.by("sum", f"increase({q.judged()}[6h])")
        found.append(Slo("goodput", s.goodput.objective, "of the wall time training", "", f"1 - {train} / {judged}"))
    if s.steps_per_hour:
        n = number(s.steps_per_hour.min)
        steps = q.by("sum", f"increase({q.sel('train_steps')}[1h])")
        # A run judged on a whole hour of training: the hour after a start, resume or pause is not counted.
        trained = f"((time() - {q.by('max', q.sel('state_since'))}) >= 3600)"
        training = f"({q.by('max', q.sel('run_state'))} == {TRAINING})"
        runs = f"((({steps} < bool {n}) and on ({q.run}) {training}) and on ({q.run}) {trained})"
        timed("steps_per_hour", s.steps_per_hour.objective, f"of the minutes at {n}+ steps an hour", runs)
    if s.time_to_first_step:
        t = s.time_to_first_step
        waiting = f"(time() - {q.by('max', q.sel('state_since'))} > bool {duration_seconds(t.max)})"
        live = f"(({q.by('max', q.sel('run_state'))} > {FINISHED}) < {FAILED})"
        starting = f"({q.by('max', q.sel('run_state'))} == bool {STARTING})"
        runs = f"(({starting} * on ({q.run}) {waiting}) and on ({q.run}) {live})"
        timed("time_to_first_step", t.objective, f"of the run minutes not waiting past {t.max} for a first step", runs)
    return tuple(found)


class _Q:
    def __init__(self, facts: RlFacts) -> None:
        self.facts = facts
        self.run = naming.label_token(facts.catalog.attribute("run_id").name, facts.pipeline)

    def sel(self, key: str, matchers: dict[str, str] | None = None) -> str:
        m = self.facts.catalog.metric(key)
        return naming.selector(m, self.facts.pipeline, "", {**self.facts.scope, **(matchers or {})})

    def by(self, agg: str, inner: str) -> str:
        return f"{agg} by ({self.run}) ({inner})"

    def judged(self) -> str:
        """The time-accounting counter of every bucket the SLO judges (all but UNJUDGED)."""
        bucket = naming.label_token(self.facts.catalog.attribute("time_bucket").name, self.facts.pipeline)
        m = self.facts.catalog.metric("run_time")
        raw = [f"{bucket}!={naming.quote(UNJUDGED)}"]
        return naming.selector(m, self.facts.pipeline, "", self.facts.scope, raw=raw)


def windows(period: str) -> tuple[str, ...]:
    found = {w for _, long, short, _ in BURNS for w in (long, short)} | {period}
    return tuple(sorted(found, key=duration_seconds))


def _series(facts: RlFacts, name: str, slo: Slo) -> str:
    return naming.labelled(name, {**facts.scope, SLO_LABEL: slo.key})


def _errors(facts: RlFacts, slo: Slo, window: str) -> str:
    if slo.bad:
        return f"avg_over_time({_series(facts, BAD, slo)}[{window}])"
    train = _Q(facts).sel("run_time", {facts.catalog.attribute("time_bucket").name: "train"})
    return f"(1 - sum(rate({train}[{window}])) / sum(rate({_Q(facts).judged()}[{window}])))"


def _filled(facts: RlFacts, slo: Slo, window: str) -> str:
    """Goodput burns only over a window 90% full of judged time: a workload's first minutes are no window to judge."""
    return "" if slo.bad else f" and on () sum(rate({_Q(facts).judged()}[{window}])) >= 0.9"


def _pairs(slo: Slo, severity: str, ratio_over: Callable[[str], str], filled: Callable[[str], str]) -> str:
    return " or ".join(
        f"({ratio_over(long)} >= {t} and {ratio_over(short)} >= {t}{filled(long if sev == PAGE else short)})"
        for sev, long, short, b in BURNS
        if sev == severity
        for t in [number(min(1.0, round(b * (1 - slo.objective), 6)))]
    )


def _burning(facts: RlFacts, slo: Slo, severity: str) -> str:
    on = _series(facts, "", slo)
    return _pairs(slo, severity, lambda w: f"{ERRORS}{w}{on}", lambda w: _filled(facts, slo, w))


def inline_burn(slo: Slo, severity: str) -> str:
    """A time-based SLO's burn without recording rules (Cloud Monitoring's PromQL policies), as subqueries."""
    return _pairs(slo, severity, lambda w: ratio(slo, w), lambda _: "")


def ratio(slo: Slo, window: str) -> str:
    # At most 360 points a window: 1m up to 6h, the recorded rules' resolution; every 12m over 3d estimates the same.
    return f"avg_over_time(({slo.bad})[{window}:{max(1, duration_seconds(window) // 21600)}m])"


def alert_name(slo: Slo, severity: str) -> str:
    return f"RL{to_pascal(slo.key)}BudgetBurn" + ("" if severity == PAGE else "Slow")


def _alert_labels(facts: RlFacts, severity: str) -> dict[str, str]:
    return {"severity": severity, **facts.alert_labels, BURN_LABEL: "page" if severity == PAGE else "ticket"}


def rule_group(facts: RlFacts) -> dict[str, Any] | None:
    chosen = objectives(facts)
    if not chosen or facts.pipeline not in RECORDED or facts.profile.slos is None:
        return None
    period = f"{facts.profile.slos.window_days}d"
    rules: list[dict[str, Any]] = []

    def record(name: str, expr: str, slo: Slo) -> None:
        rules.append({"record": name, "expr": expr, "labels": {**facts.scope, SLO_LABEL: slo.key}})

    for slo in chosen:
        if slo.bad:
            record(BAD, slo.bad, slo)
    for slo in chosen:
        for w in windows(period):
            record(ERRORS + w, _errors(facts, slo, w), slo)
        record(BUDGET, f"1 - {ERRORS}{period}{_series(facts, '', slo)} / {number(round(1 - slo.objective, 6))}", slo)
    for slo in chosen:
        for severity in (PAGE, TICKET):
            how = "fast (1h and 6h windows)" if severity == PAGE else "steadily (3d window)"
            rules.append(
                {
                    "alert": alert_name(slo, severity),
                    "expr": _burning(facts, slo, severity),
                    "labels": _alert_labels(facts, severity),
                    "annotations": {
                        "summary": f"RL SLO {slo.key} of {facts.profile.workload.name} burns its error budget {how}",
                        "description": f"The objective is {number(slo.objective)} {slo.meaning} over "
                        f"{period}; the error ratio is {{{{ $value | humanizePercentage }}}} in the long window.",
                        "runbook_url": f"{facts.runbook}#{alert_name(slo, severity).lower()}",
                    },
                }
            )
    return {"name": f"rlobs-{facts.name}.rl-slos", "rules": rules}


def runbook_sections(facts: RlFacts) -> list[dict[str, Any]]:
    period = f"{facts.profile.slos.window_days}d" if facts.profile.slos else ""
    chosen = objectives(facts)
    return [
        {
            "name": alert_name(slo, severity),
            "severity": severity,
            "profile_key": f"slos.{to_camel(slo.key)}",
            "objective": f"{number(slo.objective)} {slo.meaning} over {period}",
            # A rate above 1 / budget cannot happen (every second bad): the rules cap it there.
            "burns": [
                (long, short, number(r), number(round(100 * r * duration_seconds(long) / duration_seconds(period), 1)))
                for sev, long, short, b in BURNS
                if sev == severity
                for r in [round(min(b, 1 / (1 - slo.objective)), 1)]
            ],
            "runs": slo.runs,
        }
        for slo in chosen
        for severity in (PAGE, TICKET)
    ]


def budget_query(facts: RlFacts) -> str:
    """The remaining-budget series of every SLO of the bundle ("" where no SLO rules are recorded)."""
    if rule_group(facts) is None:
        return ""
    return naming.labelled(BUDGET, facts.scope)


def cases(facts: RlFacts, chosen: tuple[Slo, ...]) -> list[tuple[Slo, bool, int, list[tuple[str, str]]]]:
    """Per SLO a budget-burning and a healthy workload: (slo, burning, minute to judge at, [(series, values)])."""
    found = []
    for slo in chosen:
        for burning in (True, False):
            b = CaseBuilder(facts.catalog.metric("run_state"), facts.catalog, facts.pipeline, facts.scope)
            at = _case(facts, slo, b, burning=burning)
            found.append((slo, burning, at, list(b.series)))
    return found


def rule_tests(facts: RlFacts) -> list[dict[str, Any]]:
    if rule_group(facts) is None:
        return []
    tests = []
    for slo, burning, at, series in cases(facts, objectives(facts)):
        alerts = [alert_name(slo, s) for s in (PAGE, TICKET)]
        exp = [{"labels": _alert_series(facts, slo, s), "value": 1} for s in (PAGE, TICKET) if burning]
        # (expression, expected samples): the alerts, and a healthy workload's whole budget.
        wanted = [(f'ALERTS{{alertname=~"{"|".join(alerts)}", alertstate="firing"}}', exp)]
        if not burning:
            wanted.append((_series(facts, BUDGET, slo), [{"labels": _series(facts, BUDGET, slo), "value": 1}]))
        checks = [{"expr": e, "eval_time": f"{at}m", "exp_samples": s} for e, s in wanted]
        tests.append(
            {
                "name": f"{' and '.join(alerts)} {'fire' if burning else 'stay silent'} for a "
                f"{'budget-burning' if burning else 'healthy'} {slo.key}",
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in series],
                "promql_expr_test": checks,
            }
        )
    return tests


def _alert_series(facts: RlFacts, slo: Slo, severity: str) -> str:
    labels = {
        "alertname": alert_name(slo, severity),
        "alertstate": "firing",
        **_alert_labels(facts, severity),
        **facts.scope,
        SLO_LABEL: slo.key,
    }
    return naming.labelled("ALERTS", labels)


def _case(facts: RlFacts, slo: Slo, b: CaseBuilder, *, burning: bool) -> int:
    """Input series from t=0, one sample a minute; returns the minute to evaluate at."""
    bucket = facts.catalog.attribute("time_bucket").name
    s = facts.profile.slos

    def goodput() -> int:
        # Burning: every second stalled; healthy: every second training, beside a bucket that stays empty. The ticket
        # judges a run with 6 hours of judged time.
        b.add("r1", "0+0x400" if burning else "0+60x400", "run_time", scope={**facts.scope, bucket: "train"})
        b.add("r1", "0+60x400" if burning else "0+0x400", "run_time", scope={**facts.scope, bucket: "stalled"})
        return 340

    def steps_per_hour() -> int:
        b.trainers(200, "r1")
        per_minute = math.ceil(s.steps_per_hour.min / 30) if s and s.steps_per_hour else 1  # twice the least rate
        b.add("r1", f"0+{0 if burning else per_minute}x200", "train_steps")
        return 130

    def first_step() -> int:
        wait = s.time_to_first_step.max if s and s.time_to_first_step else "0s"
        end = duration_seconds(wait) // 60 + 70
        if burning:
            b.add("r1", f"2+0x{end}", "run_state")
            b.add("r1", f"0+0x{end}", "state_since")
        else:
            b.trainers(end + 1, "r1")
        return end

    cases: dict[str, Callable[[], int]] = {
        "goodput": goodput,
        "steps_per_hour": steps_per_hour,
        "time_to_first_step": first_step,
    }
    return cases[slo.key]()
