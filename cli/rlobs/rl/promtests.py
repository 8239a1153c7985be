"""Synthetic input series for each RL alert's promtool test: runs that must fire and runs that must stay silent."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from rlobs.profile.fields import duration_seconds
from rlobs.profile.model import Profile
from rlobs.rl import naming
from rlobs.rl.alerts import Alert
from rlobs.rl.catalog import Catalog, Metric
from rlobs.rl.naming import Pipeline


@dataclass(frozen=True, slots=True)
class Case:
    interval: str  # sample interval of the input series
    series: tuple[tuple[str, str], ...]  # (series selector, promtool expanding notation)
    eval_time: str
    firing: tuple[str, ...]  # run ids the alert must fire for (sorted)
    silent: tuple[str, ...]  # run ids it must not fire for
    run_label: str


def _min(duration: str) -> int:
    """Whole minutes (rounded up): the input series are sampled every minute."""
    return max(1, math.ceil(duration_seconds(duration) / 60))


def _n(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


def _le(bound: float) -> str:
    return "+Inf" if math.isinf(bound) else _n(bound)


class _Builder:
    def __init__(self, alert: Alert, catalog: Catalog, pipeline: Pipeline) -> None:
        self.catalog = catalog
        self.pipeline = pipeline
        self.run_attr = catalog.attribute("run_id").name
        self.series: list[tuple[str, str]] = []
        self.metric = catalog.metric(alert.metrics[0])

    def add(self, run: str, values: str, metric: Metric | None = None) -> None:
        m = metric or self.metric
        self.series.append((naming.selector(m, self.pipeline, "", {self.run_attr: run}), values))

    def histogram(self, run: str, phases: list[tuple[int, float, int]]) -> None:
        """phases: (minutes, observed value, observations per minute), one after another, cumulative buckets."""
        bounds = [*self.metric.buckets, math.inf]
        for bound in bounds:
            parts, total = [], 0
            for i, (minutes, value, per_minute) in enumerate(phases):
                inc = per_minute if value <= bound else 0
                if i == 0:
                    parts.append(f"0+{inc}x{minutes}")
                    total = inc * minutes
                else:
                    parts.append(f"{total + inc}+{inc}x{minutes - 1}")
                    total += inc * minutes
            matchers = {self.run_attr: run, "le": _le(bound)}
            sel = naming.selector(self.metric, self.pipeline, "bucket", matchers)
            self.series.append((sel, " ".join(parts)))

    def case(self, eval_minutes: int, firing: list[str], silent: list[str]) -> Case:
        return Case(
            interval="1m",
            series=tuple(self.series),
            eval_time=f"{eval_minutes}m",
            firing=tuple(sorted(firing)),
            silent=tuple(sorted(silent)),
            run_label=naming.label(self.run_attr, self.pipeline),
        )


def _bucket_above(buckets: tuple[float, ...], threshold: float) -> float | None:
    """An observation value whose bucket lies wholly above the threshold (so any quantile exceeds it)."""
    for lower, upper in itertools.pairwise(buckets):
        if lower > threshold:
            return upper
    return None


def alert_inputs(alert: Alert, profile: Profile, catalog: Catalog, pipeline: Pipeline) -> Case:
    """Input series for one alert; the profile's thresholds decide the shapes."""
    cfg = profile.alerts
    b = _Builder(alert, catalog, pipeline)
    f = _min(alert.for_)
    if alert.key == "stall":
        w = _min(cfg.stall.window)
        b.add("stalled", f"0+1x10 10+0x{w + f + 10}")
        b.add("healthy", f"0+1x{w + f + 25}")
        return b.case(10 + w + f + 3, ["stalled"], ["healthy"])
    if alert.key == "reward_collapse":
        base = _min(cfg.reward_collapse.baseline)
        margin = max(0, min(3, base - f - 1))
        b.add("collapsed", f"0+0.01x30 -0.5+0x{f + margin + 5}")
        b.add("improving", f"0+0.01x{f + margin + 40}")
        b.add("flat-negative", f"-1+0x{f + margin + 40}")
        return b.case(31 + f + margin, ["collapsed"], ["flat-negative", "improving"])
    if alert.key == "loss_spike":
        base, k = _min(cfg.loss_spike.baseline), cfg.loss_spike.factor
        spike = f + 2
        firing = ["nan"]
        b.add("nan", f"1+0x{base} " + " ".join(["NaN"] * (spike + 2)))
        if base > k * spike:  # otherwise the spike itself lifts the baseline past reach
            value = 2 * k * (base - spike) / (base - k * spike) + 1
            b.add("spiking", f"1+0x{base} {_n(value)}+0x{spike + 1}")
            firing.append("spiking")
        b.add("steady", f"1+0x{base + spike + 2}")
        b.add("steady-negative", f"-0.3+0x{base + spike + 2}")
        return b.case(base + 1 + f + 1, firing, ["steady", "steady-negative"])
    if alert.key == "mfu_low":
        t = cfg.mfu_low.threshold
        b.add("starved", f"{_n(t / 2)}+0x{f + 5}")
        b.add("busy", f"{_n((t + 1) / 2)}+0x{f + 5}")
        return b.case(f + 2, ["starved"], ["busy"])
    if alert.key == "loop_regression":
        lr = cfg.loop_regression
        w, base = _min(lr.window), _min(lr.baseline)
        fast = b.metric.buckets[min(5, len(b.metric.buckets) - 1)]
        slow = _bucket_above(b.metric.buckets, lr.factor * fast)
        fast_minutes, tail = base + 5, w + f + 5
        firing = []
        # The baseline window still holds `for` minutes of slow loops when the alert fires; they must stay well
        # under 5% of its loops, or the baseline p95 itself turns slow and nothing can fire.
        room = 100 * (base - f - 2) * 0.04 > f + 2
        if slow is not None and room:
            # Slow loops complete less often, as in real runs: 1 per minute against 100.
            b.histogram("regressed", [(fast_minutes, fast, 100), (tail, slow, 1)])
            firing.append("regressed")
        b.histogram("steady", [(fast_minutes + tail, fast, 100)])
        return b.case(fast_minutes + w + f + 2, firing, ["steady"])
    if alert.key == "sync_latency":
        sl = cfg.sync_latency
        w = _min(sl.window)
        too_slow = _bucket_above(b.metric.buckets, sl.threshold_ms)
        quick = max([x for x in b.metric.buckets if x <= sl.threshold_ms / 2], default=None)
        firing, silent = [], []
        if too_slow is not None:
            b.histogram("slow", [(w + f + 5, too_slow, 1)])
            firing.append("slow")
        if quick is not None:
            b.histogram("fast", [(w + f + 5, quick, 1)])
            silent.append("fast")
        return b.case(w + f + 3, firing, silent)
    raise ValueError(f"no promtool test inputs for alert {alert.key}")
