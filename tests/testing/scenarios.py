"""RL runs as the generated module exports them (the issue-24 contract), sampled every minute, for promtool.

A process exports rl.run.state (2 starting, 1 training, 3 paused, 0 finished, 4 failed), rl.run.state.since,
rl.progress.time and rl.progress.interval (p95 of the last 20 step intervals, pauses excluded), the step counter,
loss and its non-finite counter, reward, MFU, one loop and one sync duration per step (histogram sum and count), and
the time accounting (rl.run.time by bucket) as the module counts it: each loop is sync, sample, reward, train and
other in turn (`shares`), a pause is its reason's bucket, time before the first loop is starting, and time past the
stall rule's limits is stalled.
How its series end depends on the pipeline: scraped directly, they end at the process's last scrape (a final state
is scraped first); pushed through the collector, the last values stay for the exporter's 10-minute expiry.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

MINUTES = 360
EXPIRY = 10  # minutes the collector's prometheus exporter keeps a series nobody pushes (metric_expiration)
Shape = Callable[[float, float], float]  # (minute, noise in [-1, 1]) -> value


def steady(level: float, spread: float) -> Shape:
    return lambda t, n: level + spread * n


def until(minute: float, before: Shape, after: Shape) -> Shape:
    return lambda t, n: before(t, n) if t < minute else after(t, n)


def ramp(start: float, end: float, t0: float, t1: float, spread: float = 0.02) -> Shape:
    return lambda t, n: start + (end - start) * min(1.0, max(0.0, (t - t0) / (t1 - t0))) + spread * n


def warm_up_loss(t: float, n: float) -> float:
    # GRPO: ~0 while no sample of a group is rewarded, then several-fold growth as learning starts.
    return 0.0 if t < 60 else min(0.35, 0.002 * 1.05 ** (t - 60)) + 0.005 * abs(n)


def rising_reward(t: float, n: float) -> float:
    return 0.06 + 0.64 * (1 - math.exp(-t / 120)) + 0.05 * n


# A healthy run's shapes, the defaults every scenario changes one of.
STEADY_LOSS, STEADY_REWARD, STEADY_MFU, STEADY_SYNC = (
    steady(0.2, 0.02),
    steady(0.6, 0.03),
    steady(0.45, 0.02),
    steady(4000, 200),
)


@dataclass
class Proc:
    """One process of a run: from `start` (minutes) to `end`, how it ends, and what it reports."""

    run: str
    start: float = 0.0
    interval: float = 1.0  # minutes between optimizer steps (one step is one loop iteration)
    first: float | None = None  # minutes from start to the first step (default: one interval)
    end: float | None = None
    ending: str = "finished"  # finished (state 0), failed (state 4) or killed (no final state)
    hang: float | None = None  # no step completes from this minute on
    pauses: tuple[tuple[float, float], ...] = ()  # declared pauses (start, end) in minutes
    slow: Callable[[int], float] = lambda k: 1.0  # duration multiplier of step k
    loss: Shape = STEADY_LOSS
    reward: Shape = STEADY_REWARD
    mfu: Shape = STEADY_MFU
    loop_ms: Shape = lambda t, n: 0.0  # 0: the step's own duration
    sync_ms: Shape = STEADY_SYNC
    nonfinite_at: tuple[float, ...] = ()
    restarts: int = 0
    instance: str = ""
    seed: int = 0
    pause_bucket: str = "checkpoint"  # the bucket of the declared pauses (their reason)
    shares: tuple[float, float, float] = (0.5, 0.1, 0.3)  # sample, reward, train of each loop after its sync; the
    # rest is other (rank 0's view: its wait for slower ranks lies in the phase that waits)

    def steps(self) -> list[float]:
        """Completion times (minutes) of the steps, pauses pushing them back."""
        rng, out = random.Random(self.seed), []
        t = self.start + (self.first if self.first is not None else self.interval)
        k = 0
        stop = min(x for x in (self.end, self.hang, MINUTES + 1) if x is not None)
        while t <= stop:
            for a, b in self.pauses:
                if out and out[-1] <= a < t:
                    t += b - a
            if t > stop:
                break
            out.append(t)
            k += 1
            t += self.interval * self.slow(k) * (1 + 0.05 * rng.uniform(-1, 1))
        return out


@dataclass
class Scenario:
    story: str
    procs: list[Proc]
    expected: dict[str, set[str]]  # run id -> the alerts that must fire (once each); every other must stay silent
    onset: float | None = None  # minute the fault begins
    bound: str = ""  # which time-to-fire bound applies: hang, startup, quality, pause (see test_alert_scenarios)
    settings: dict[str, dict[str, str]] = field(default_factory=dict)  # profile `alerts:` overrides
    outage: tuple[float, float] | None = None  # scrape outage (up == 0) in minutes
    accounting: dict[str, float] = field(default_factory=dict)  # minutes per time bucket of its run, down included


# The stall rule's limits in minutes (profile alerts.stall): window, factor, startup, pause limit.
Stall = tuple[float, float, float, float]
BUCKETS = ("sample", "reward", "train", "sync", "checkpoint", "evaluation", "other", "idle", "stalled", "starting")
Segment = tuple[float, float, str]  # [from, to) minutes, bucket


def _lay(p: Proc, pieces: list[tuple[str, float]], t: float, stop: float) -> list[Segment]:
    """Phases of one loop laid in turn from t, a declared pause taking its time wherever it falls."""
    out: list[Segment] = []
    for bucket, length in [*pieces, ("", 0.0)]:
        while t < stop:
            pause = next(((a, b) for a, b in p.pauses if a <= t < b), None)
            if pause:
                out.append((t, min(pause[1], stop), p.pause_bucket))
                t = min(pause[1], stop)
                continue
            if length <= 1e-9:
                break
            nxt = min([stop, t + length, *(a for a, _ in p.pauses if a > t)])
            out.append((t, nxt, bucket))
            length -= nxt - t
            t = nxt
    return out


def timeline(p: Proc, stall: Stall) -> list[Segment]:
    """Where each minute of the process went, as the generated module accounts it."""
    done = p.steps()
    stop = min(x for x in (p.end, MINUTES) if x is not None)
    first = p.first if p.first is not None else p.interval
    begin = p.start + max(0.0, first - p.interval)  # the first loop; before it, start-up
    segs: list[Segment] = [(p.start, min(begin, stop), "starting")] if begin > p.start else []
    sample, reward, train = p.shares
    for a, b in itertools.pairwise([begin, *done]):
        active = b - a - sum(max(0.0, min(b, y) - max(a, x)) for x, y in p.pauses)
        sync = p.sync_ms(b, 0.0) / 60_000
        rest = active - sync
        pieces = [("sync", sync), ("sample", sample * rest), ("reward", reward * rest), ("train", train * rest)]
        segs += _lay(p, [*pieces, ("other", rest - sum(x for _, x in pieces[1:]))], a, b)
    tail = done[-1] if done else begin
    if tail < stop:  # the loop under way, its phases in turn: a hang never leaves its train phase
        rest = p.interval - p.sync_ms(tail, 0.0) / 60_000
        pieces = [("sync", p.interval - rest), ("sample", sample * rest), ("reward", reward * rest)]
        pieces += [("train", math.inf)] if p.hang is not None else [("train", train * rest), ("other", math.inf)]
        segs += _lay(p, pieces, tail, stop)
    # The stall rule's limits, from the last step (or the start, or a pause's start) on.
    window, factor, startup, pause_limit = stall
    pause = next(((a, b) for a, b in p.pauses if a <= stop < b), None) if done else None
    if not done:
        onset = p.start + startup
    elif pause:
        onset = pause[0] + pause_limit
    else:
        gaps = [b - a - sum(max(0.0, min(b, e) - max(a, s)) for s, e in p.pauses) for a, b in itertools.pairwise(done)]
        since = max([done[-1], *(b for _, b in p.pauses if done[-1] < b <= stop)])
        onset = since + max(window, factor * (p95(gaps[-20:]) if gaps else done[0] - p.start))
    out: list[Segment] = []
    for a, b, bucket in segs:
        if a < onset:
            out.append((a, min(b, onset), bucket))
        if b > onset:
            out.append((max(a, onset), b, "stalled"))
    return out


def tally(segs: list[Segment]) -> Callable[[float], dict[str, float]]:
    """Seconds per bucket up to minute t, for t that never decreases. The segments are laid in time order and never
    overlap, so those ended by t are a prefix of them: each is added once, in their order (the same sums as adding
    every segment's share at each minute, in linear time), and only the one under way at t is added in part."""
    ended, done, last = 0, dict.fromkeys(BUCKETS, 0.0), -math.inf

    def at(t: float) -> dict[str, float]:
        nonlocal ended, last
        if t < last:
            raise ValueError(f"minute {t} after minute {last}")
        last = t
        while ended < len(segs) and segs[ended][1] <= t:
            a, b, bucket = segs[ended]
            done[bucket] += (b - a) * 60
            ended += 1
        found = dict(done)
        if ended < len(segs) and segs[ended][0] < t:
            a, _, bucket = segs[ended]
            found[bucket] += (t - a) * 60
        return found

    return at


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, math.ceil(0.95 * len(xs)) - 1)]


Samples = list[float | None]


def export(p: Proc, pipeline: str, outage: tuple[float, float] | None, stall: Stall) -> dict[str, Samples]:
    """Per-minute samples of every series of the process (key -> values; None: no point)."""
    rng = random.Random(p.seed + 1)
    done = p.steps()
    accounted = tally(timeline(p, stall))
    keys = (
        "run_state",
        "state_since",
        "progress_time",
        "step_interval",
        "run_restarts",
        "train_steps",
        "train_loss",
        "loss_nonfinite",
        "reward_mean",
        "train_mfu",
        "loop_sum",
        "loop_count",
        "sync_sum",
        "sync_count",
        "up",
        *BUCKETS,
    )
    out: dict[str, Samples] = {k: [] for k in keys}
    last: dict[str, float | None] = {}
    gone = p.end if p.end is not None else math.inf
    linger = EXPIRY if pipeline == "otel-collector" else (1 if p.ending != "killed" else 0)
    for t in range(MINUTES + 1):
        row: dict[str, float | None]
        if t < p.start:
            row = dict.fromkeys(keys)
        elif t >= gone:
            # After the end: the final state (scraped once, or kept for the collector's expiry), then nothing.
            if t < gone + linger and last:
                row = dict(last)
                if p.ending != "killed":
                    row["run_state"], row["state_since"] = (0.0 if p.ending == "finished" else 4.0), gone * 60
                    row.update(accounted(gone))  # the final state's scrape counts to the end
                row["up"] = 1.0
            else:
                row = dict.fromkeys(keys)
        else:
            row = {**_alive(p, t, done, rng), **accounted(t)}
            last = row
        if outage and outage[0] <= t < outage[1]:
            row = {**dict.fromkeys(keys), "up": 0.0 if row.get("up") is not None else None}
        for k in keys:
            out[k].append(row.get(k))
    return out


def _alive(p: Proc, t: int, done: list[float], rng: random.Random) -> dict[str, float | None]:
    steps = [s for s in done if s <= t]
    pause = next(((a, b) for a, b in p.pauses if a <= t < b), None)
    ended = [b for a, b in p.pauses if b <= t]
    row: dict[str, float | None] = {"up": 1.0, "run_restarts": float(p.restarts)}
    if pause:
        row["run_state"], row["state_since"] = 3.0, pause[0] * 60
    elif not steps:
        row["run_state"], row["state_since"] = 2.0, p.start * 60
    else:
        row["run_state"], row["state_since"] = 1.0, max([steps[0], *ended]) * 60
    if steps:
        gaps = [b - a - sum(max(0.0, min(b, e) - max(a, s)) for s, e in p.pauses) for a, b in itertools.pairwise(steps)]
        row["progress_time"] = steps[-1] * 60
        row["step_interval"] = (p95(gaps[-20:]) if gaps else steps[0] - p.start) * 60
        at = steps[-1]
        n = random.Random(p.seed * 100_003 + len(steps)).uniform(-1, 1)  # a gauge changes with a new batch only
        row["train_steps"] = float(len(steps))
        row["train_loss"], row["reward_mean"], row["train_mfu"] = p.loss(at, n), p.reward(at, n), p.mfu(at, n)
        loops = [
            p.loop_ms(s, 0.0) or (b - a) * 60_000 for a, s, b in zip([p.start, *steps], steps, steps, strict=False)
        ]
        row["loop_sum"], row["loop_count"] = sum(loops), float(len(steps))
        row["sync_sum"], row["sync_count"] = sum(p.sync_ms(s, 0.0) for s in steps), float(len(steps))
    row["loss_nonfinite"] = float(sum(1 for x in p.nonfinite_at if x <= t))
    return row


def values(samples: Samples, stale: bool = True) -> str:
    """promtool's input notation: one value per minute, `stale` where a series ends (if the backend marks it), `_`
    where it has no point."""
    out, seen = [], False
    for v in samples:
        if v is None:
            out.append("stale" if seen and stale else "_")
            seen = False
        else:
            out.append(str(int(v)) if float(v).is_integer() else f"{v:.10g}")
            seen = True
    return " ".join(out)
