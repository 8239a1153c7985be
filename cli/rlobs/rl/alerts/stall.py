"""RLTrainingStalled: the run stopped making optimizer steps while it trains, or its telemetry vanished without a
clean finish (crash, OOM kill, eviction or preemption without a restart)."""

from __future__ import annotations

from rlobs.profile.model import StallAlert
from rlobs.rl.alerts.base import Alert, AlertDef, Query
from rlobs.rl.alerts.cases import Case, CaseBuilder, minutes

# The value the run-state gauge takes while the run trains (the generated module's RUNNING).
RUNNING = 1


def rule(s: StallAlert, q: Query) -> Alert:
    steps = f"increase({q.sel('train_steps')}[{s.window}])"
    state = q.sel("run_state")
    training = q.by("max", state)
    # Hung: the step counter did not move while the run says it trains (a clean finish sets the state to 0).
    hung = f"({q.by('sum', steps)} < 1 and on ({q.run}) ({training} == {RUNNING}))"
    # Lost: the last state seen in `forget_after` was "training" and no point is current any more: the process
    # died without finishing (the scraped target or the collector's expired series is gone; the Telemetry API gets
    # no new points). last_over_time: Prometheus >= 2.26.
    last = q.by("max", f"last_over_time({state}[{s.forget_after}])")
    lost = f"(({last} == {RUNNING}) unless on ({q.run}) {training})"
    return Alert(
        key="stall",
        name="RLTrainingStalled",
        severity=s.severity,
        summary=f"RL run {{run}} made no training step in {s.window}, or its telemetry stopped",
        description=f"Run {{run}} trains but its optimizer step counter did not increase for {s.window} (hung, or "
        "waiting on rollouts), or its telemetry stopped without a clean finish (crashed, OOM-killed, evicted or "
        "preempted and not restarted).",
        runbook="The run is not making progress. If its telemetry stopped: check whether the trainer pod still "
        "exists and why it ended (`kubectl get pods`, `kubectl describe pod` for OOMKilled or Evicted, node "
        "preemption events) and restart from the last checkpoint. If it is alive: its logs, the rl.loop spans of "
        "the last iterations (which phase never finished), rollout workers and reward sandboxes, and GPU health "
        "(XID errors, NCCL timeouts). A run that ends normally marks itself finished and does not fire.",
        expr=f"{hung} or {lost}",
        for_=s.for_,
        metrics=("train_steps", "run_state"),
        probes=(q.by("sum", steps), training, last),
    )


def case(s: StallAlert, alert: Alert, b: CaseBuilder) -> Case:
    f, w = minutes(alert.for_), minutes(s.window)
    end = 10 + w + f + 10
    running = f"1+0x{end}"
    b.add("stalled", f"0+1x10 10+0x{end - 10}")
    b.add("stalled", running, "run_state")
    b.add("healthy", f"0+1x{end}")
    b.add("healthy", running, "run_state")
    # Dies at minute 10: every series ends (a staleness marker ends the run's points).
    b.add("crashed", "0+1x10 stale")
    b.add("crashed", "1+0x10 stale", "run_state")
    # Finishes cleanly at minute 10: its state goes to 0, then its series end too.
    b.add("finished", "0+1x10 10 stale")
    b.add("finished", "1+0x10 0 stale", "run_state")
    return b.case(10 + w + f + 3, ["crashed", "stalled"], ["finished", "healthy"])


ALERT = AlertDef(lambda a: a.stall, rule, case)
