"""Synthetic input series for an RL alert's promtool test: runs that must fire and runs that must stay silent."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import accumulate

from rlobs.bundle.filters import number
from rlobs.profile.fields import duration_seconds
from rlobs.rl import naming
from rlobs.rl.catalog import Catalog, Metric
from rlobs.rl.naming import Pipeline


@dataclass(frozen=True, slots=True)
class Case:
    interval: str  # sample interval of the input series
    series: tuple[tuple[str, str], ...]  # (series selector, promtool expanding notation)
    eval_time: str
    firing: tuple[str, ...]  # run ids the alert must fire for (sorted)
    silent: tuple[str, ...]  # run ids it must not fire for


def minutes(duration: str) -> int:
    """Whole minutes (rounded up): the input series are sampled every minute."""
    return max(1, math.ceil(duration_seconds(duration) / 60))


class CaseBuilder:
    """Collects the input series of one alert's case; `metric` is the one the alert reads first."""

    def __init__(self, metric: Metric, catalog: Catalog, pipeline: Pipeline, scope: Mapping[str, str]) -> None:
        self.pipeline = pipeline
        self.catalog = catalog
        self.scope = dict(scope)
        self.run_attr = catalog.attribute("run_id").name
        self.series: list[tuple[str, str]] = []
        self.metric = metric

    def add(self, run: str, values: str, metric: str | None = None, *, scope: Mapping[str, str] | None = None) -> None:
        """One input series of `run` (of the alert's metric, or of another catalog metric by key)."""
        m = self.catalog.metric(metric) if metric else self.metric
        matchers = {**(self.scope if scope is None else scope), self.run_attr: run}
        self.series.append((naming.selector(m, self.pipeline, "", matchers), values))

    def trainers(self, end: int, *runs: str) -> None:
        """The lifecycle series of runs that train and complete a step every minute (t=0 is Unix time 0)."""
        for run in runs:
            self.add(run, f"2 1+0x{end - 1}", "run_state")
            self.add(run, f"0 60+0x{end - 1}", "state_since")
            self.add(run, f"_ 60+60x{end - 1}", "progress_time")
            self.add(run, f"_ 60+0x{end - 1}", "step_interval")

    def case(self, eval_minutes: int, firing: list[str], silent: list[str]) -> Case:
        return Case(
            interval="1m",
            series=tuple(self.series),
            eval_time=f"{eval_minutes}m",
            firing=tuple(sorted(firing)),
            silent=tuple(sorted(silent)),
        )


def durations(b: CaseBuilder, run: str, metric: str, phases: list[tuple[int, float]]) -> None:
    """A duration histogram's _sum and _count: (minutes, duration per observation), one observation a minute."""
    each = [value for minutes_, value in phases for _ in range(minutes_)]
    sums = " ".join(number(total) for total in accumulate(each))
    counts = " ".join(str(count) for count in range(1, len(each) + 1))
    m = b.catalog.metric(metric)
    matchers = {**b.scope, b.run_attr: run}
    b.series.append((naming.selector(m, b.pipeline, "sum", matchers), sums))
    b.series.append((naming.selector(m, b.pipeline, "count", matchers), counts))
