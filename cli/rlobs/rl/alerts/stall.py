"""RLTrainingStalled: no progress past the run's own normal, stuck starting or paused, failed, or vanished; one page."""

from __future__ import annotations

from rlobs.bundle.filters import number
from rlobs.profile.fields import duration_seconds
from rlobs.profile.model import StallAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder
from rlobs.rl.alerts.lifecycle import FAILED, PAUSED, STARTING, TRAINING


def rule(s: StallAlert, q: Query) -> Alert:
    life, run = q.life, q.run
    held = f"(time() - {life.since})"  # how long the current state has lasted

    def when(value: str, state: int) -> str:
        return f"({value} and on ({run}) ({life.state} == {state}))"

    branches = [
        when(f"({life.idle} > {life.limit})", TRAINING),
        when(f"({held} > {duration_seconds(s.pause_limit)})", PAUSED),
        when(f"({held} > {duration_seconds(s.startup)})", STARTING),
        # Lost: the newest process said starting, training or paused, and its series are gone (killed, evicted).
        f"(({life.idle} and on ({run}) {life.live()}) unless on ({run}) {life.present})",
    ]
    expr = "(" + " or ".join(branches) + ")"
    if life.outage is not None:
        # A target that fails its scrapes says nothing about the run: RLTelemetryTargetDown warns instead.
        expr = f"({expr} unless on ({run}) {life.outage})"
    # A failure the run reported is known whatever its target does now (a failed pod's target may linger as down).
    expr = f"({expr} or {when(held, FAILED)})"
    expr = q.by("max", expr)  # one series per run, labelled with the run only (as every RL alert)
    return Alert(
        key="stall",
        name="RLTrainingStalled",
        severity=s.severity,
        summary="RL run {run} stalled, failed or vanished",
        description=f"Run {{run}}: no progress for {{value}} (limit while training: max({s.window}, "
        f"{number(s.factor)} x its own step interval); start-up budget {s.startup}; pause limit {s.pause_limit}), "
        "or it failed (exit status other than 0) or its telemetry vanished without a final state.",
        runbook="The run is not making progress. If it failed or its telemetry stopped: check whether the trainer "
        "pod still exists and why it ended (`kubectl get pods`, `kubectl describe pod` for OOMKilled or Evicted, node "
        "preemption events) and restart from the last checkpoint; a new process of the same run id ends the page. If "
        "it is alive: its logs, the rl.loop spans of the last iterations (which phase never finished), rollout workers "
        "and reward sandboxes, and GPU health (XID errors, NCCL timeouts). Stuck starting: NCCL rendezvous, vLLM or "
        "model loading; a run whose first iteration is longer than the start-up budget raises `alerts.stall.startup`. "
        "A long pause: the checkpoint or evaluation inside `telemetry.pause()` hangs. A clean finish never pages.",
        expr=expr,
        for_=s.for_,
        metrics=("run_state", "state_since", "progress_time", "step_interval"),
        probes=(life.state, life.since, life.limit),
        value_format="humanizeDuration",
    )


def case(s: StallAlert, _alert: Alert, b: CaseBuilder) -> Case:
    limit = max(duration_seconds(s.window), 60) // 60 + 1
    end = 10 + max(limit, duration_seconds(s.startup) // 60 + 1) + 10

    def trainer(run: str, last_step: int, state: str = "", series_end: int | None = None) -> None:
        n = end if series_end is None else series_end
        tail = "" if series_end is None else " stale"
        b.add(run, state or f"2 1+0x{n - 1}" + tail, "run_state")
        b.add(run, f"0 60+0x{n - 1}" + tail, "state_since")
        steps = " ".join(str(60 * min(t, last_step)) for t in range(1, n + 1))
        b.add(run, "_ " + steps + tail, "progress_time")
        b.add(run, f"_ 60+0x{n - 1}" + tail, "step_interval")

    trainer("healthy", end)
    trainer("stalled", 10)
    trainer("failed", 10, f"2 1+0x9 4+0x{end - 11}")
    trainer("killed", 10, series_end=11)
    b.add("stuck-starting", f"2+0x{end}", "run_state")
    b.add("stuck-starting", f"0+0x{end}", "state_since")
    trainer("finished", 10, f"2 1+0x9 0+0x{end - 11}")
    return b.case(end, ["failed", "killed", "stalled", "stuck-starting"], ["finished", "healthy"])


ALERT = AlertDef(lambda a: a.stall, rule, case)
