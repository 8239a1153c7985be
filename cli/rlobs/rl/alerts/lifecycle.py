"""A run's lifecycle in PromQL: its newest process, how long it made no progress, its stall limit, the window ladder."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from rlobs.bundle.filters import number
from rlobs.profile.fields import duration_seconds
from rlobs.profile.model import StallAlert
from rlobs.rl import naming
from rlobs.rl.naming import Part, Pipeline


class Query(Protocol):
    """What the lifecycle reads of rlobs.rl.alerts.base.Query (a protocol: base builds a Lifecycle)."""

    pipeline: Pipeline
    scope: Mapping[str, str]
    run: str

    def sel(self, key: str, part: Part = "") -> str: ...
    def by(self, agg: str, inner: str, *extra: str) -> str: ...


# Values of the run-state gauge (the contract of the generated module).
FINISHED, TRAINING, STARTING, PAUSED, FAILED = 0, 1, 2, 3, 4
PRESENT = "5m"  # a series without a point for this long has vanished (Prometheus' own lookback)
# Window ladder: a run whose iteration time I lies in (s/2, s] is judged on windows in multiples of s, so a window
# of 2.5s holds 2.5 to 5 iterations (3s: 3 to 6) whatever the run's pace (1 minute to 1 hour; slower runs use the
# top rung, whose windows then hold fewer iterations).
RUNGS = tuple(60 * 2**k for k in range(7))
# Where a pipeline's scrape health is seen: the direct scrape's own target (joined on instance), the collector's
# exporter endpoint for pushed series (one target for every run). Push pipelines to Google have no `up`.
OUTAGE = {
    "python-prometheus": ("instance", ""),
    "otel-collector": ("", 'up{namespace="monitoring", endpoint="prom-exporter"}'),
}


RECORDED = ("otel-collector", "python-prometheus")  # pipelines whose rules run in a Prometheus (recording rules)


def dur(seconds: int) -> str:
    return f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"


class Lifecycle:
    def __init__(self, q: Query, s: StallAlert) -> None:
        self.q = q
        # Every value is read with last_over_time over forgetAfter, so a scrape outage or a vanished series (SIGKILL,
        # OOM kill, the collector's expiry) keeps its last state; whether it is current is `present` and `outage`.
        self.forget = s.forget_after
        self.records: list[tuple[str, str]] = []
        self._matchers = naming.labelled("", q.scope) if q.scope else ""
        since = f"last_over_time({q.sel('state_since')}[{self.forget}])"
        # The newest process of each run has the latest state-since (a restart begins after the old attempt's end).
        self.latest = self._piece("newest", f"({since} == on ({q.run}) group_left () {q.by('max', since)})")
        self.state = self._piece("state", self.last("run_state"))
        self.since = self._piece("since", q.by("max", since))
        self.interval = self._piece("interval", self.last("step_interval"))
        self.progress = self._piece("progress", self.last("progress_time"))
        # No progress since the last completed step, or since the state began (a pause's end restarts the clock).
        self.idle = self._piece("idle", f"(time() - (({self.progress} > {self.since}) or {self.since}))")
        floor = duration_seconds(s.window)
        limit = f"(clamp_min({number(s.factor)} * {self.interval}, {floor}) or (0 * {self.since} + {floor}))"
        self.limit = self._piece("limit", limit)
        # The run's iteration time (s): its step interval, over every process of the run (a restart keeps its pace;
        # this is read 13 times per alert, so it stays short).
        self.pace = self._piece("pace", q.by("max", f"last_over_time({q.sel('step_interval')}[{self.forget}])"))
        # Runs whose newest process still has current points.
        self.present = self._piece(
            "present", q.by("max", self.newest(f"last_over_time({q.sel('run_state')}[{PRESENT}])"))
        )
        # Runs that train and make progress: the only state in which the quality and latency alerts may fire, so a
        # stalled, paused, finished or failed run pages once (RLTrainingStalled) or not at all.
        self.training_ok = self._piece(
            "training_ok", f"(({self.state} == {TRAINING}) unless on ({q.run}) ({self.idle} > {self.limit}))"
        )
        # Runs whose data stopped because their scrape target fails (up == 0), not because the run ended; None where
        # the pipeline has no scrape target to see.
        self.outage: str | None = None
        if q.pipeline in OUTAGE:
            join, target = OUTAGE[q.pipeline]
            if join:
                target = naming.labelled("up", {"job": q.scope["job"]}) if "job" in q.scope else "up"
            state = self.newest(f"last_over_time({q.sel('run_state')}[{self.forget}])")
            self.outage = self._piece("outage", q.by("max", f"{state} and on ({join}) ({target} == 0)"))

    def _piece(self, key: str, expr: str) -> str:
        """Prometheus pipelines: each per-run value once per evaluation (a recording rule, read by the rules after
        it in the group, which Prometheus evaluates in order at one timestamp); Cloud Monitoring policies cannot read
        recording rules, so they keep the expressions inline. `newest` keeps one series per process; the others carry
        the bundle's scope labels, so a piece is compared only with other pieces (or joined `on` the run)."""
        if self.q.pipeline not in RECORDED:
            return expr
        name = f"rlobs:rl_run_{key}"
        self.records.append((name, expr))
        return name + self._matchers

    def newest(self, per_series: str) -> str:
        """A per-series expression kept for each run's newest process only."""
        return f"({per_series} and {self.latest})"

    def last(self, key: str) -> str:
        return self.q.by("max", self.newest(f"last_over_time({self.q.sel(key)}[{self.forget}])"))

    def live(self) -> str:
        """Runs whose newest process last said starting, training or paused."""
        return f"(({self.state} > {FINISHED}) < {FAILED})"

    def ladder(self, build: Callable[[int], str]) -> str:
        """`build(s)` on the rung whose (s/2, s] holds the run's iteration time, for every run at once."""
        pace, parts = self.pace, []
        for i, s in enumerate(RUNGS):
            band = f"({pace} > {RUNGS[i - 1]})" if i else pace
            if s != RUNGS[-1]:  # the top rung takes every slower run
                band = f"({band} <= {s})"
            parts.append(f"(({build(s)}) and on ({self.q.run}) {band})")
        return "(" + " or ".join(parts) + ")"


def window(floor: str, seconds: int) -> str:
    """max(floor, seconds) as a Prometheus duration."""
    return dur(max(duration_seconds(floor), seconds))


def coarse(floor: str, seconds: int) -> str:
    """The step of a subquery over window(floor, seconds): 12 points per window, whole minutes (the rules are
    evaluated for every rung at once, so their cost must not grow with the window)."""
    span = max(duration_seconds(floor), seconds)
    return dur(max(60, span // 12 // 60 * 60))
