"""The behavioural suite's scenarios: how RL teams really run, each with the alerts it must fire written down first.

Expected results follow the runbook and what an on-call engineer wants: a fault pages once, with its own alert; a
healthy run, a declared pause within its limit, a clean finish or a quick restart pages nothing; a scrape outage is
the platform's warning, not the RL page.
"""

from __future__ import annotations

from testing.scenarios import MINUTES, Proc, Scenario, ramp, rising_reward, steady, until, warm_up_loss

STALL, LOSS, REWARD, MFU, LOOP, SYNC, TARGET = (
    "RLTrainingStalled",
    "RLLossSpike",
    "RLRewardCollapse",
    "RLMfuLow",
    "RLLoopRegression",
    "RLSyncLatencyHigh",
    "RLTelemetryTargetDown",
)
LONG_START = {"stall": {"startup": "90m"}}  # a team whose first iteration takes up to an hour says so


def _loops(
    minutes: float, steps: float, sync_s: float = 4, shares: tuple[float, ...] = (0.5, 0.1, 0.3)
) -> dict[str, float]:
    """The expected accounting (minutes) of `minutes` of loops with `steps` weight syncs of sync_s each: the rest
    split between sample, reward and train by `shares`, and other (loop overhead)."""
    sync = steps * sync_s / 60
    rest = minutes - sync
    found = dict(zip(("sample", "reward", "train"), (x * rest for x in shares), strict=True))
    return {**found, "sync": sync, "other": rest * (1 - sum(shares))}


def _plus(*parts: dict[str, float]) -> dict[str, float]:
    found: dict[str, float] = {}
    for part in parts:
        for bucket, minutes in part.items():
            found[bucket] = found.get(bucket, 0.0) + minutes
    return found


HEALTHY = _loops(360, 360)  # six hours of 1-minute loops, each beginning with its 4 s weight sync


def _under_way(minutes: float, interval: float, last: str = "other") -> dict[str, float]:
    """The loop under way for `minutes`: its phases in turn (4 s sync, then sample, reward and train by their shares),
    the time past them in `last` (other; train for a hang)."""
    rest, found = interval - 4 / 60, {}
    for bucket, length in (("sync", 4 / 60), ("sample", 0.5 * rest), ("reward", 0.1 * rest), ("train", 0.3 * rest)):
        found[bucket] = min(length, max(0.0, minutes - sum(found.values())))
    return _plus(found, {last: minutes - sum(found.values())})


def _ran(p: Proc) -> dict[str, float]:
    """Loops from the process's start to its end, each after its sync, and the one under way at the end. On long
    iterations the last step's time matters: the loop under way is ~1/6 of a run of 60-minute ones, in phase order."""
    done, stop = p.steps(), min(p.end or MINUTES, MINUTES)
    return _plus(_loops(done[-1] - p.start, len(done)), _under_way(stop - done[-1], p.interval))


def _hung(p: Proc) -> dict[str, float]:
    """A hang after its last step: the loop under way syncs, samples and scores, then hangs in train until the stall
    rule's limit, max(8m, 2.5 x the p95 step interval), the p95 of 20 intervals jittered by +-5% being ~1.04 of the
    nominal one; stalled from then on."""
    done = p.steps()
    limit = max(8.0, 2.5 * 1.04 * p.interval)
    tail = _under_way(limit, p.interval, "train")
    return _plus(_loops(done[-1], len(done)), tail, {"stalled": MINUTES - done[-1] - limit})


def _steps(name: str, **kw: object) -> list[float]:
    """The step times of a scenario's process (its seed is its name's)."""
    return Proc(run=name, seed=len(name) * 7 + sum(map(ord, name)), **kw).steps()  # type: ignore[arg-type]


def _one(
    name: str, story: str, expected: set[str], onset: float | None = None, bound: str = "", **kw: object
) -> Scenario:
    settings = kw.pop("settings", {})
    outage = kw.pop("outage", None)
    accounting = kw.pop("accounting")  # minutes per bucket, or a function of the process (its steps) giving them
    proc = Proc(run=name, seed=len(name) * 7 + sum(map(ord, name)), **kw)  # type: ignore[arg-type]
    expect = accounting(proc) if callable(accounting) else accounting
    return Scenario(story, [proc], {name: expected}, onset, bound, settings, outage, expect)  # type: ignore[arg-type]


def _sparse(t: float, n: float) -> float:
    # Sparse rewards: most batches score 0, the rewarded fraction grows slowly.
    return 1.0 if (n + 1) / 2 < 0.05 + t / 2000 else 0.0


def _at_step(name: str, story: str, minute: float, fault: str, into: float = 0.0, **kw: object) -> Scenario:
    """A hang or crash (`fault`: hang or end) `into` minutes after the first step completing at or after `minute`;
    just after it (0) is the worst case for the time to fire, whose clock starts at the run's last progress."""
    seed = len(name) * 7 + sum(map(ord, name))
    accounting = kw.pop("accounting")
    onset = into + next(t for t in Proc(run=name, seed=seed, **kw).steps() if t >= minute)  # type: ignore[arg-type]
    return _one(name, story, {STALL}, onset, "hang", **{fault: onset}, accounting=accounting, **kw)


def scenarios() -> dict[str, Scenario]:
    h = 240  # faults begin at minute 240, after a baseline of 4 hours
    # slow-sync: the loops after its first step past 240 begin with a 110 s sync, which makes each 166 s long.
    (k0, t0) = next((k, t) for k, t in enumerate(_steps("slow-sync"), 1) if t >= h)
    # single-slow-iteration: the 5x iteration after step 240 is the one with the 90 s sync.
    slow_one = _steps("single-slow-iteration", slow=lambda k: 5.0 if k == 240 else 1.0)[240]
    found = {
        # The 13 scenarios the suite started with.
        "healthy-grpo-cold-start": _one(
            "healthy-grpo-cold-start",
            "GRPO from scratch: loss ~0 then rising, reward rising",
            set(),
            loss=warm_up_loss,
            reward=rising_reward,
            accounting=HEALTHY,
        ),
        "converged-plateau": _one("converged-plateau", "a converged run on a plateau", set(), accounting=HEALTHY),
        "noisy-rewards": _one(
            "noisy-rewards",
            "rewards noisy by +-0.2 around a slow rise",
            set(),
            reward=lambda t, n: 0.3 + 0.0003 * t + 0.2 * n,
            accounting=HEALTHY,
        ),
        "long-iterations": _one("long-iterations", "10-minute iterations", set(), interval=10.0, accounting=_ran),
        "finished": _one("finished", "a clean finish at minute 200", set(), end=200, accounting=_loops(200, 200)),
        "stall": _one("stall", "the trainer hangs in a step (NCCL)", {STALL}, h, "hang", hang=h, accounting=_hung),
        "crash": _one(
            "crash",
            "SIGKILL / OOM kill: series vanish, no final state",
            {STALL},
            h,
            "hang",
            end=h,
            ending="killed",
            accounting=_loops(h, h),  # the last minute, which no scrape saw, is Prometheus' extrapolation's
        ),
        "nan-loss": _one(
            "nan-loss",
            "one NaN loss (counted by the module)",
            {LOSS},
            h,
            "quality",
            nonfinite_at=(h,),
            accounting=HEALTHY,
        ),
        "divergence": _one(
            "divergence",
            "the loss diverges to 50",
            {LOSS},
            h,
            "quality",
            loss=until(h, steady(0.3, 0.02), steady(50, 1)),
            accounting=HEALTHY,
        ),
        "reward-collapse": _one(
            "reward-collapse",
            "sudden reward collapse to 0.05",
            {REWARD},
            h,
            "quality",
            reward=until(h, rising_reward, steady(0.05, 0.02)),
            accounting=HEALTHY,
        ),
        "low-mfu": _one(
            "low-mfu",
            "MFU drops to 5% for good",
            {MFU},
            h,
            "",
            mfu=until(h, steady(0.45, 0.02), steady(0.05, 0.01)),
            accounting=HEALTHY,
        ),
        "slow-loop": _one(
            "slow-loop",
            "iterations 2.1x slower for good",
            {LOOP},
            h,
            "",
            slow=lambda k: 2.1 if k > h else 1.0,
            accounting=_plus(_loops(240, 240), _loops(120, 58)),  # then 120 / 2.1 = 57.1 iterations: 58 begun
        ),
        "slow-sync": _one(
            "slow-sync",
            "weight sync from 4 s to 110 s for good (each iteration waits for it)",
            {SYNC, LOOP},  # each iteration waits out its sync: 2.8x longer, a loop regression as well
            h,
            "",
            slow=lambda k: 166 / 60 if k >= k0 else 1.0,
            sync_ms=lambda t, n: 110_000.0 if t > t0 else 4000.0,
            # Then ~120 minutes of 166 s iterations (56 s of work and the 110 s sync), each step beginning the next:
            # 120 / 2.77 = 43.4 by the nominal length, but the syncs to count are the steps from t0 on (43 here).
            accounting=lambda p: _plus(
                _loops(t0, k0), _loops(MINUTES - t0, sum(1 for t in p.steps() if t0 <= t < MINUTES), sync_s=110)
            ),
        ),
        # Lifecycle: pauses, start-up, restarts, failures.
        "checkpoint-pause": _one(
            "checkpoint-pause",
            "a declared 35-minute checkpoint + validation pause",
            set(),
            pauses=((200, 235),),
            accounting={**_loops(325, 325), "checkpoint": 35},
        ),
        "eval-pauses": _one(
            "eval-pauses",
            "a declared 20-minute evaluation every 90 minutes",
            set(),
            pauses=((90, 110), (180, 200), (270, 290)),
            pause_bucket="evaluation",
            accounting={**_loops(300, 300), "evaluation": 60},
        ),
        "pause-hangs": _one(
            "pause-hangs",
            "a checkpoint that never returns (paused for good)",
            {STALL},
            200,
            "pause",
            pauses=((200, 10_000),),
            accounting={**_loops(200, 200), "checkpoint": 60, "stalled": 100},  # past the 60m pause limit: stalled
        ),
        "finishing-save": _one(
            "finishing-save",
            "45 minutes saving and pushing after train() returns, then a clean exit",
            set(),
            pauses=((250, 295),),
            end=295,
            accounting={**_loops(250, 250), "checkpoint": 45},
        ),
        "slow-start": _one(
            "slow-start",
            "a 20-minute first rollout (vLLM start-up)",
            set(),
            first=20.0,
            # Start-up until the first 1-minute loop begins, at 19: the module knows no phase before it.
            accounting={**_loops(341, 341), "starting": 19},
        ),
        "hang-before-first-step": _one(
            "hang-before-first-step",
            "stuck in NCCL rendezvous: never a first step",
            {STALL},
            0,
            "startup",
            first=10_000.0,
            accounting={"starting": 30, "stalled": 330},  # the 30m start-up limit, then stalled
        ),
        "sys-exit-1": _one(
            "sys-exit-1",
            "an exception ends through sys.exit(1): state 4",
            {STALL},
            h,
            "hang",
            end=h,
            ending="failed",
            accounting=_loops(h, h),
        ),
        "hydra-crash": _one(
            "hydra-crash",
            "Hydra's main turns the exception into sys.exit(1): state 4",
            {STALL},
            h,
            "hang",
            end=h,
            ending="failed",
            accounting=_loops(h, h),
        ),
        "preemption": _one(
            "preemption",
            "SIGTERM (spot preemption), not resumed: state 4",
            {STALL},
            h,
            "hang",
            end=h,
            ending="failed",
            accounting=_loops(h, h),
        ),
        "eight-ranks": _one(
            "eight-ranks",
            "8 data-parallel ranks: rank 0 reports, finishes at 300, the others are torn down",
            set(),
            end=300,
            accounting=_loops(300, 300),
        ),
        "scrape-outage": _one(
            "scrape-outage",
            "the scrape target fails for 15 minutes (platform)",
            {TARGET},
            200,
            "",
            outage=(200, 215),
            accounting=HEALTHY,  # the counters go on through the outage: the scrape after it reads them whole
        ),
        # Iteration pace.
        "iterations-30m": _one(
            "iterations-30m",
            "30-minute iterations; startup raised to 90m",
            set(),
            interval=30.0,
            settings=LONG_START,
            accounting=_ran,
        ),
        "iterations-60m": _one(
            "iterations-60m",
            "60-minute iterations; startup raised to 90m",
            set(),
            interval=60.0,
            settings=LONG_START,
            accounting=_ran,
        ),
        "trl-slow-steps": _one(
            "trl-slow-steps",
            "TRL, 2.4-minute steps, progress at every step (logging_steps=10)",
            set(),
            interval=2.4,
            accounting=_loops(360, 150),
        ),
        # Quality signals.
        "grpo-negative-loss": _one(
            "grpo-negative-loss",
            "GRPO loss negative and near zero",
            set(),
            loss=steady(-0.05, 0.05),
            accounting=HEALTHY,
        ),
        "single-loss-outlier": _one(
            "single-loss-outlier",
            "one batch with loss 5 among 0.2",
            set(),
            loss=lambda t, n: 5.0 if 240 <= t < 241 else 0.2 + 0.02 * n,
            accounting=HEALTHY,
        ),
        "sparse-rewards": _one(
            "sparse-rewards", "sparse 0/1 rewards, slowly more often 1", set(), reward=_sparse, accounting=HEALTHY
        ),
        "slow-drift": _one(
            "slow-drift",
            "reward drifts from 0.70 to 0.64 over 5 hours",
            set(),
            reward=ramp(0.70, 0.64, 60, 360),
            accounting=HEALTHY,
        ),
        "slow-decline": _one(
            "slow-decline",
            "reward declines 42% (0.70 to 0.40) over 2 hours",
            {REWARD},
            200,
            "",
            reward=ramp(0.70, 0.40, 200, 320),
            accounting=HEALTHY,
        ),
        "single-slow-iteration": _one(
            "single-slow-iteration",
            "one 5x iteration and one 90 s sync",
            set(),
            slow=lambda k: 5.0 if k == 240 else 1.0,
            sync_ms=lambda t, n: 90_000.0 if t == slow_one else 4000.0,
            accounting=_plus(_loops(355, 355), _loops(5, 1, sync_s=90)),  # the 90 s sync begins the 5-minute one
        ),
        # Time accounting.
        "sync-grows": _one(
            "sync-grows",
            "3-minute iterations; weight sync from 4 s to 80 s at minute 240 (the iteration grows by 76 s)",
            {SYNC},
            h,
            "",
            interval=3.0,
            slow=lambda k: 256 / 180 if k > 80 else 1.0,
            sync_ms=until(h, steady(4000, 200), steady(80_000, 2000)),
            # 80 iterations of 3 minutes, then 120 minutes of 256 s ones: 29 syncs begin in them (each iteration
            # starts with its sync: 28 whole ones and the one under way at the end)
            accounting=_plus(_loops(240, 80), _loops(120, 29, sync_s=80)),
        ),
        "rank-imbalance": _one(
            "rank-imbalance",
            "8 data-parallel ranks, one rolling out long-tail samples: rank 0 waits for it in the sample phase",
            set(),
            shares=(0.7, 0.05, 0.2),
            accounting=_loops(360, 360, shares=(0.7, 0.05, 0.2)),
        ),
        "gradual-growth": _one(
            "gradual-growth",
            "iterations grow 35% over 6 hours (longer sequences)",
            set(),
            slow=lambda k: 1 + 0.35 * min(k, 330) / 330,
            # N iterations take N + 0.35 N^2 / 660 minutes: 309.4 in 360, so 310 syncs begin.
            accounting=_loops(360, 310),
        ),
    }
    # Time to fire at its worst: a fault that begins just after a step boundary, or in the middle of a long step.
    found |= {
        "hang-after-step": _at_step(
            "hang-after-step", "hangs just after a 1-minute step completes", h, "hang", accounting=_hung
        ),
        "hang-after-long-step": _at_step(
            "hang-after-long-step",
            "10-minute iterations: hangs just after one completes",
            h,
            "hang",
            interval=10.0,
            accounting=_hung,
        ),
        "hang-mid-long-step": _at_step(
            "hang-mid-long-step",
            "10-minute iterations: hangs 5 minutes into one",
            h,
            "hang",
            5.0,
            interval=10.0,
            accounting=_hung,
        ),
        "crash-after-long-step": _at_step(
            "crash-after-long-step",
            "10-minute iterations: killed just after one completes",
            h,
            "end",
            interval=10.0,
            ending="killed",
            accounting=_ran,  # killed as a step completes: no loop under way
        ),
        "divergence-long-iterations": _one(
            "divergence-long-iterations",
            "10-minute iterations: the loss diverges to 50",
            {LOSS},
            h,
            "quality",
            interval=10.0,
            loss=until(h, steady(0.3, 0.02), steady(50, 1)),
            accounting=_ran,
        ),
        "collapse-long-iterations": _one(
            "collapse-long-iterations",
            "10-minute iterations: the reward collapses to 0.05",
            {REWARD},
            h,
            "quality",
            interval=10.0,
            reward=until(h, rising_reward, steady(0.05, 0.02)),
            accounting=_ran,
        ),
    }
    found["restart-same-pod"] = Scenario(
        "killed at 200, the container restarts in the same pod at 202 and resumes",
        [
            Proc(run="restart-same-pod", end=200, ending="killed", seed=3, instance="p"),
            Proc(run="restart-same-pod", start=202, restarts=1, seed=4, instance="p"),
        ],
        {"restart-same-pod": set()},
        # Down: the 2 minutes to the restart and the minute before the kill no scrape saw.
        accounting={**_loops(357, 357), "down": 3},
    )
    found["restart-new-pod"] = Scenario(
        "fails (state 4) at 200, resumed in a new pod at 215: one page, ended by the restart",
        [
            Proc(run="restart-new-pod", end=200, ending="failed", seed=5, instance="a"),
            Proc(run="restart-new-pod", start=215, restarts=1, seed=6, instance="b"),
        ],
        {"restart-new-pod": {STALL}},
        200,
        "hang",
        # Down: 15 minutes, less the 30 s Prometheus' increase() extrapolates a vanished series by (half its scrape
        # interval), which it counts as the failed process's.
        accounting={**_loops(345.5, 345), "down": 14.5},
    )
    found["two-runs-one-namespace"] = Scenario(
        "two runs in one namespace; one hangs at 240",
        [Proc(run="two-runs-a", hang=h, seed=7), Proc(run="two-runs-b", seed=8)],
        {"two-runs-a": {STALL}, "two-runs-b": set()},
        h,
        "hang",
        accounting=_plus(_hung(Proc(run="two-runs-a", hang=h, seed=7)), HEALTHY),  # the scenario's runs summed
    )
    found["reused-run-id"] = Scenario(
        "an experiment finishes at 150 at reward 0.8; the next reuses its run id from 160, starting at 0.1",
        [
            Proc(run="reused-run-id", end=150, reward=steady(0.8, 0.02), seed=9, instance="a"),
            Proc(run="reused-run-id", start=160, reward=rising_reward, seed=10, instance="b"),
        ],
        {"reused-run-id": set()},
        # The 10 minutes between the two are down to the dashboard (the run id is live again at 160), less the 30 s
        # increase() extrapolates the first's vanished series by, as in restart-new-pod.
        accounting={**_loops(350.5, 350), "down": 9.5},
    )
    found["new-run-id"] = Scenario(
        "attempt x fails at 150; the job resumes under a new run id y: x's failure pages (bounded), y runs",
        [Proc(run="new-run-id-x", end=150, ending="failed", seed=11), Proc(run="new-run-id-y", start=160, seed=12)],
        {"new-run-id-x": {STALL}, "new-run-id-y": set()},
        150,
        "hang",
        accounting=_plus(_loops(150, 150), _loops(200, 200)),  # two runs, neither down: x failed, y runs to the end
    )
    return found


# The scenarios whose workload spends its goodput budget fast enough to page (scenario_run.SLOS, objective 0.2): a
# window of an hour with no training at all, the page's threshold (14.4 x the 0.8 budget is capped at 1). A hang
# trains on in its stuck step until the stall limit, then is stalled; a checkpoint that never returns is all
# badput from its start; a run that never steps is stalled from its start-up limit on (start-up itself is not
# judged). A pause within its limit, a slow sync, a rank imbalance or one hung run of two lose goodput but keep some
# training in every hour; a crashed or failed run reports no time at all (the stall page is its alert; the gap to a
# restart is `down`, which no counter holds). The 3-day ticket is judged over 6 hours of judged time at least and the
# burn over 3 days: tests/test_slo.py proves it; 6-hour scenarios judge the page only (rank-imbalance, which trains
# 0.19 of its time, does spend its budget: 1.02x, a ticket once 6 hours are judged).
BUDGET_PAGES = frozenset(
    {"stall", "hang-after-step", "hang-after-long-step", "hang-mid-long-step", "pause-hangs", "hang-before-first-step"}
)
