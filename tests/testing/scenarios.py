"""Realistic RL runs and faults as the generated module exports them, minute by minute, for promtool.

A scenario is what one run's series look like over MINUTES minutes: the run state, the step counter, the loss gauge
and the non-finite counter, reward, MFU, and one observation per loop iteration and per weight sync. Every alert of
the bundle is evaluated on every scenario (tests/test_alert_scenarios.py): faults fire their own alert, healthy runs
fire none.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

MINUTES = 480  # 8 h: the loop-regression baseline (6 h) plus its window
Samples = list[float | None]  # None: no point (the series ended: a staleness marker)


@dataclass
class Run:
    """One run's per-minute exports (counters cumulative, as the SDK exports them)."""

    state: Samples = field(default_factory=list)
    steps: Samples = field(default_factory=list)
    loss: Samples = field(default_factory=list)
    nonfinite: Samples = field(default_factory=list)
    reward: Samples = field(default_factory=list)
    mfu: Samples = field(default_factory=list)
    loops: list[list[float]] = field(default_factory=list)  # loop durations (ms) completed in each minute
    syncs: list[list[float]] = field(default_factory=list)  # weight-sync durations (ms) completed in each minute


Noise = Callable[[], float]  # uniform in [-1, 1], one stream per run
Shape = Callable[[int, Noise], float]  # minute, noise -> value


def _steady(level: float, spread: float) -> Shape:
    return lambda t, n: level + spread * n()


def _constant(value: float) -> Shape:
    return lambda t, n: value


def _until(minute: int, before: Shape, after: Shape) -> Shape:
    return lambda t, n: before(t, n) if t < minute else after(t, n)


def _warm_up_loss(t: int, n: Noise) -> float:
    # GRPO: ~0 while no sample of a group is rewarded, then several-fold growth as learning starts.
    return 0.0 if t < 60 else min(0.35, 0.002 * 1.05 ** (t - 60)) + 0.005 * abs(n())


def _rising_reward(t: int, n: Noise) -> float:
    return 0.06 + 0.64 * (1 - math.exp(-t / 120)) + 0.05 * n()


# A healthy run's shapes, the defaults every scenario changes one of.
STEADY_LOSS = _steady(0.2, 0.02)
STEADY_REWARD = _steady(0.6, 0.03)
STEADY_MFU = _steady(0.45, 0.02)
LOOP_MS = _constant(55_000.0)
SYNC_MS = _constant(4_000.0)


def _run(
    seed: int,
    *,
    end: int = MINUTES,
    clean_end: bool = False,
    stall_at: int | None = None,
    nan_at: int | None = None,
    loss: Shape = STEADY_LOSS,
    reward: Shape = STEADY_REWARD,
    mfu: Shape = STEADY_MFU,
    loop_ms: Shape = LOOP_MS,
    loop_every: int = 1,
    sync_ms: Shape = SYNC_MS,
) -> Run:
    rng = random.Random(seed)

    def noise() -> float:
        return rng.uniform(-1.0, 1.0)

    run = Run()
    steps = nonfinite = 0.0
    for t in range(MINUTES + 1):
        if t > end:
            for series in (run.state, run.steps, run.loss, run.nonfinite, run.reward, run.mfu):
                series.append(None)
            run.loops.append([])
            run.syncs.append([])
            continue
        finished = clean_end and t == end
        iterating = t % loop_every == 0 and (stall_at is None or t < stall_at) and not finished
        if iterating:
            steps += 4
        if nan_at is not None and t == nan_at:
            nonfinite += 1
        run.state.append(0.0 if finished else 1.0)
        run.steps.append(steps)
        run.loss.append(loss(t, noise))
        run.nonfinite.append(nonfinite)
        run.reward.append(reward(t, noise))
        run.mfu.append(mfu(t, noise))
        run.loops.append([loop_ms(t, noise)] if iterating else [])
        run.syncs.append([sync_ms(t, noise)] if iterating else [])
    return run


def _noisy_rising(t: int, n: Noise) -> float:
    return 0.3 + 0.0003 * t + 0.2 * n()


def _collapse(t: int, n: Noise) -> float:
    return _rising_reward(t, n) if t < 440 else 0.05 + 0.02 * n()


# name -> (the run, the alerts that must fire at the end; every other alert must stay silent)
SCENARIOS: dict[str, tuple[Run, set[str]]] = {
    "healthy-grpo-cold-start": (_run(1, loss=_warm_up_loss, reward=_rising_reward), set()),
    "converged-plateau": (_run(2), set()),
    "noisy-rewards": (_run(3, reward=_noisy_rising), set()),
    "long-iterations": (_run(4, loop_every=10, loop_ms=_constant(580_000.0)), set()),
    "finished": (_run(5, end=300, clean_end=True), set()),
    "stall": (_run(6, stall_at=400), {"RLTrainingStalled"}),
    "crash": (_run(7, end=440), {"RLTrainingStalled"}),
    "nan-loss": (_run(8, nan_at=450), {"RLLossSpike"}),
    "divergence": (_run(9, loss=_until(440, _steady(0.3, 0.02), _constant(50.0))), {"RLLossSpike"}),
    "reward-collapse": (_run(10, reward=_collapse), {"RLRewardCollapse"}),
    "low-mfu": (_run(11, mfu=_until(420, _constant(0.45), _constant(0.05))), {"RLMfuLow"}),
    "slow-loop": (_run(12, loop_ms=_until(430, _constant(55_000.0), _constant(290_000.0))), {"RLLoopRegression"}),
    "slow-sync": (_run(13, sync_ms=_until(440, _constant(4_000.0), _constant(110_000.0))), {"RLSyncLatencyHigh"}),
}


def values(samples: Samples) -> str:
    """promtool's input notation: one value per minute, `stale` where the series ended."""
    out = []
    for v in samples:
        out.append("stale" if v is None else (str(int(v)) if float(v).is_integer() else f"{v:.6g}"))
    return " ".join(out)


def buckets(observations: list[list[float]], bounds: tuple[float, ...], alive: Samples) -> dict[str, Samples]:
    """Cumulative bucket counts per minute (le -> samples) of a histogram with `bounds`, ending where `alive` does."""
    edges = [*bounds, math.inf]
    counts = dict.fromkeys(edges, 0.0)
    out: dict[str, Samples] = {("+Inf" if math.isinf(e) else _le(e)): [] for e in edges}
    for minute, observed in enumerate(observations):
        for value in observed:
            for e in edges:
                if value <= e:
                    counts[e] += 1
        for e in edges:
            out["+Inf" if math.isinf(e) else _le(e)].append(None if alive[minute] is None else counts[e])
    return out


def _le(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else repr(bound)
