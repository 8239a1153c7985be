"""Target-neutral RL alert definitions: catalog metrics + profile thresholds -> PromQL through naming."""

from __future__ import annotations

from dataclasses import dataclass

from rlobs.profile.model import Profile, Severity
from rlobs.rl import naming
from rlobs.rl.catalog import Catalog, Metric
from rlobs.rl.naming import Pipeline

RUNBOOK_PATH = "docs/runbook.md"


@dataclass(frozen=True, slots=True)
class Alert:
    key: str  # the model.Alerts field, e.g. loss_spike
    name: str  # CamelCase alert name, e.g. RLLossSpike
    severity: Severity
    summary: str  # one line; `{run}` stands for the run id (see text())
    description: str  # `{run}` likewise
    runbook: str  # Markdown: what it means, what to do
    expr: str  # PromQL; returns one series per run while the condition holds
    for_: str  # Prometheus duration
    metrics: tuple[str, ...]  # catalog keys the expression reads
    # Sub-expressions that must return data whenever the metrics exist, healthy or not; tests evaluate them against
    # a real Prometheus so a wrong series or label name cannot hide behind a threshold that is simply never met.
    probes: tuple[str, ...]

    def text(self, template: str, run: str) -> str:
        """summary or description with `{run}` replaced by the backend's reference to the run label."""
        return template.replace("{run}", run)

    @property
    def anchor(self) -> str:
        """The docs/runbook.md heading anchor (GitHub/GitLab: lower-cased heading text)."""
        return self.name.lower()


class _Q:
    """PromQL building blocks for one pipeline, grouped per run."""

    def __init__(self, catalog: Catalog, pipeline: Pipeline) -> None:
        self.catalog = catalog
        self.pipeline = pipeline
        self.run = naming.label_token(catalog.attribute("run_id").name, pipeline)

    def m(self, key: str) -> Metric:
        return self.catalog.metric(key)

    def sel(self, key: str, part: naming.Part = "") -> str:
        return naming.selector(self.m(key), self.pipeline, part)

    def by(self, agg: str, inner: str, *extra: str) -> str:
        return f"{agg} by ({', '.join([self.run, *extra])}) ({inner})"

    def p95(self, key: str, window: str, offset: str = "") -> str:
        shift = f" offset {offset}" if offset else ""
        rate = f"rate({self.sel(key, 'bucket')}[{window}]{shift})"
        return f"histogram_quantile(0.95, {self.by('sum', rate, 'le')})"


def _num(value: float) -> str:
    return f"{value:g}"


def alerts(profile: Profile, catalog: Catalog, pipeline: Pipeline) -> tuple[Alert, ...]:
    """Every enabled RL alert, in a stable order."""
    cfg = profile.alerts
    if not cfg.enabled:
        return ()
    q = _Q(catalog, pipeline)
    run = "{run}"  # filled in per backend by Alert.text (Prometheus and Cloud Monitoring template differently)
    found: list[Alert] = []

    s = cfg.stall
    steps = f"increase({q.sel('train_steps')}[{s.window}])"
    found.append(
        Alert(
            key="stall",
            name="RLTrainingStalled",
            severity=s.severity,
            summary=f"RL run {run} made no training step in {s.window}",
            description=f"The optimizer step counter of run {run} did not increase for {s.window}: the loop is hung, "
            "waiting on rollouts, or crashed and restarting.",
            runbook="The train step counter stopped. Check the trainer pod's logs and restarts "
            "(`kubectl logs`, `kubectl get pods`), the rl.loop spans of the last iterations (which phase never "
            "finished), rollout workers and reward sandboxes, and GPU health (XID errors, NCCL timeouts).",
            expr=f"{q.by('sum', steps)} < 1",
            for_=s.for_,
            metrics=("train_steps",),
            probes=(q.by("sum", steps),),
        )
    )

    r = cfg.reward_collapse
    reward = q.sel("reward_mean")
    peak = q.by("max", f"max_over_time({reward}[{r.baseline}])")
    low = q.by("min", f"min_over_time({reward}[{r.baseline}])")
    now = q.by("max", reward)
    found.append(
        Alert(
            key="reward_collapse",
            name="RLRewardCollapse",
            severity=r.severity,
            summary=f"RL run {run}: mean reward collapsed",
            description=f"Mean reward of run {run} fell more than {_num(r.drop * 100)}% of its {r.baseline} range "
            f"below its {r.baseline} peak.",
            runbook="Mean reward fell far below its recent peak. Typical causes: policy collapse or reward hacking "
            "caught by a verifier change, a learning-rate or KL-coefficient spike, a broken reward sandbox "
            "returning default scores, or a data/environment change. Compare rl.reward spans (sandbox errors), "
            "loss and KL around the drop; roll back to the last good checkpoint if the policy degenerated.",
            expr=f"({peak} - {now}) > {_num(r.drop)} * ({peak} - {low})",
            for_=r.for_,
            metrics=("reward_mean",),
            probes=(peak, low, now),
        )
    )

    ls = cfg.loss_spike
    loss = q.sel("train_loss")
    loss_now = q.by("max", f"abs({loss})")
    # Policy-gradient losses can be negative: compare magnitudes. A subquery gives avg_over_time an abs() input.
    loss_base = q.by("avg", f"avg_over_time(abs({loss})[{ls.baseline}:1m])")
    nan = q.by("count", f"{loss} != {loss}")  # NaN is the only value not equal to itself
    found.append(
        Alert(
            key="loss_spike",
            name="RLLossSpike",
            severity=ls.severity,
            summary=f"RL run {run}: training loss spiked or is NaN",
            description=f"Training loss of run {run} exceeds {_num(ls.factor)}x its {ls.baseline} average magnitude, "
            "or is NaN.",
            runbook="The loss is diverging (or NaN). Check for exploding gradients (grad norm), a bad batch "
            "(very long or empty samples), mixed-precision overflow, and the learning-rate schedule. A NaN loss "
            "poisons the weights: stop the run and resume from the last finite checkpoint.",
            expr=f"({loss_now} > {_num(ls.factor)} * {loss_base}) or ({nan} > 0)",
            for_=ls.for_,
            metrics=("train_loss",),
            probes=(loss_now, loss_base),
        )
    )

    mf = cfg.mfu_low
    mfu = q.by("max", q.sel("train_mfu"))
    found.append(
        Alert(
            key="mfu_low",
            name="RLMfuLow",
            severity=mf.severity,
            summary=f"RL run {run}: model FLOPs utilisation below {_num(mf.threshold * 100)}%",
            description=f"MFU of run {run} stayed below {_num(mf.threshold)} (0-1) for {mf.for_}.",
            runbook="GPUs are mostly idle during training. Check whether the trainer waits on rollouts "
            "(compare rl.sample and rl.train durations), data loading, host-to-device copies, small micro-batches, "
            "or inter-node communication (NCCL over the wrong interface, no EFA/GPUDirect).",
            expr=f"{mfu} < {_num(mf.threshold)}",
            for_=mf.for_,
            metrics=("train_mfu",),
            probes=(mfu,),
        )
    )

    lr = cfg.loop_regression
    recent = q.p95("loop_duration", lr.window)
    # The baseline ends where the recent window starts, so a regression does not raise its own baseline.
    base = q.p95("loop_duration", lr.baseline, offset=lr.window)
    found.append(
        Alert(
            key="loop_regression",
            name="RLLoopRegression",
            severity=lr.severity,
            summary=f"RL run {run}: loop p95 regressed",
            description=f"p95 loop duration of run {run} over the last {lr.window} exceeds {_num(lr.factor)}x its p95 "
            f"over the {lr.baseline} before.",
            runbook="Iterations got slower. The phase durations (sample, reward, train, sync p95 panels) show which "
            "phase regressed: longer generations, a slow reward sandbox, stragglers or preempted nodes, or "
            "weight sync contention. Look at the slowest rl.loop traces.",
            expr=f"{recent} > {_num(lr.factor)} * {base}",
            for_=lr.for_,
            metrics=("loop_duration",),
            probes=(recent, base),
        )
    )

    sl = cfg.sync_latency
    sync = q.p95("sync_duration", sl.window)
    if q.m("sync_duration").unit != "ms":  # the threshold is in ms; catalog units never change for a name
        raise ValueError("the sync duration histogram must be in ms")
    threshold = sl.threshold_ms
    found.append(
        Alert(
            key="sync_latency",
            name="RLSyncLatencyHigh",
            severity=sl.severity,
            summary=f"RL run {run}: weight sync p95 above {_num(sl.threshold_ms / 1000)}s",
            description=f"p95 weight-sync duration of run {run} over {sl.window} exceeds {_num(sl.threshold_ms)} ms.",
            runbook="Moving weights from trainer to rollout workers is slow. Check the rl.sync spans "
            "(rl.sync.bytes, source, destination), network bandwidth between node pools, whether NCCL/RDMA "
            "is used or it falls back to TCP or object storage, and contention with checkpoint writes.",
            expr=f"{sync} > {_num(threshold)}",
            for_=sl.for_,
            metrics=("sync_duration",),
            probes=(sync,),
        )
    )
    return tuple(found)
