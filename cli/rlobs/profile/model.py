"""The profile: typed, frozen objects that every later step reads (never raw YAML)."""

# No `from __future__ import annotations` here: pydantic would eval() each field's annotation string when it builds
# the classes, which made building them about a tenth slower (a profile's classes are built on every cold start).

from itertools import pairwise
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from rlobs.profile.fields import (
    AttrValue,
    DnsLabel,
    Duration,
    Fraction,
    Model,
    Positive,
    Severity,
    duration_seconds,
    matching,
    one_line,
)
from rlobs.profile.objectives import PlanSettings, Slos, droppable_attributes
from rlobs.profile.problems import ProblemAt, raise_all

API_VERSION = "rlobs/v1alpha1"

WorkloadKind = Literal["Deployment", "StatefulSet", "Job", "JobSet", "RayJob", "RayCluster", "RayService"]


Description = Annotated[str, AfterValidator(one_line("rlobs blueprints prints it in a terminal table", 200))]


class Metadata(Model):
    name: DnsLabel = Field(description="Bundle name; also names dashboards, rules and policies.")
    description: Description = Field("", description="One line shown by `rlobs blueprints`.")


class RunIdentity(Model):
    """The rl.* identity attributes put on every metric point and span (dashboard filters use them)."""

    system: AttrValue = Field(description="rl.system: the RL framework, e.g. verl, nemo-rl, openrlhf.")
    system_version: AttrValue | None = Field(None, description="rl.system.version.")
    algorithm: AttrValue = Field(description="rl.algorithm, e.g. grpo, ppo, dapo.")
    environment: AttrValue = Field(description="rl.environment.name, e.g. gsm8k.")
    model: AttrValue = Field(description="rl.model.name, e.g. Qwen2.5-7B.")
    id: AttrValue | None = Field(
        None,
        description="rl.run.id for every run of the workload (the app's RL_RUN_ID env overrides it). Unset, the app "
        "picks one per run: the framework's run name, the tracker's run id, the Job's uid, else host, time and pid.",
    )


# Second-level template languages the bundle feeds, and how each profile string that reaches one is kept literal
# (reviewed against the renderers in rl/ and targets/; Helm's tpl is in helmvalues.py TPL_VALUES):
#
#   evaluator                                   profile strings that reach it             kept literal by
#   Prometheus annotation templates ({{ }})     runbook_url <- eks.gitops.repoUrl, path,  GitUrl, RepoPath, GitRevision:
#     (rl/promrules.py _annotations)              targetRevision; tracker_url <- tracker    no braces; TrackerUrl: none,
#                                                 url, entity, project, experiment          and go_template_literal
#   Alertmanager notification templates         slack channel; receiver names, Secret     SlackChannel; DnsLabel,
#     (targets/eks/alerting.py: channel is one)   file paths (not templates)                SecretKey
#   Grafana variables ($v, ${v}, [[v]])         tracker links (rl/grafana.py); titles    TrackerUrl (no $ [ ]);
#                                                 from metadata.name, run identity          DnsLabel, AttrValue (no $)
#   Kubernetes env $(VAR)                       WANDB_BASE_URL, MLFLOW_TRACKING_URI,      TrackerUrl (no $),
#                                                 WANDB_ENTITY/PROJECT, identity envs       PathSegment, AttrValue
#   Cloud Monitoring ${...} (policy docs, tile)  tracker links (targets/gke/monitoring.py) TrackerUrl (no braces,
#                                                                                           no ( ) for the tile link)
#   Markdown (bundle READMEs, docs/)            every value shown there                   bundle/filters.py md_code

# Tracker path segments (W&B entity and project, MLflow experiment id): one URL path segment, nothing to escape.
PathSegment = Annotated[
    str,
    AfterValidator(matching(r"[A-Za-z0-9][A-Za-z0-9._-]*", "a name of letters, digits and . _ - like rl-team", 128)),
]
# An http(s) URL of RFC 3986 characters, short enough that a run link stays within Cloud Monitoring's 2083
# characters per documentation link. Left out, for the consumers that would act on them: `$` (Grafana expands `$var`
# and `${var}` in dashboard and data links, Kubernetes `$(VAR)` in the WANDB_BASE_URL / MLFLOW_TRACKING_URI env
# values), `[` `]` (Grafana's `[[var]]`), `(` `)` and `'` (they end the Markdown link of the Cloud Monitoring tracker
# tile), braces (Go templates in PrometheusRule annotations, Cloud Monitoring's `${...}` documentation variables),
# and spaces, quotes, `<>`, `|`, `\`, `^` and backticks, which RFC 3986 never allows unencoded. Percent-encode any
# of them (%24 for `$`).
TrackerUrl = Annotated[
    str,
    AfterValidator(
        matching(
            r"https?://[A-Za-z0-9._~:/?#@!&*+,;=%-]+",
            "an http(s) URL like https://wandb.ai, of RFC 3986 characters without $ [ ] ( ) ' (percent-encode them)",
            1800,
        )
    ),
]
# Characters W&B refuses in a run id (docs.wandb.ai run identifiers: no / \ # ? % :).
_WANDB_ID_FORBIDDEN = frozenset("/\\#?%:")


class Tracker(Model):
    """The experiment tracker the run logs to: RL panels and alerts link to the run (W&B) or experiment (MLflow)."""

    kind: Literal["wandb", "mlflow"]
    url: TrackerUrl | None = Field(
        None, description="W&B app URL (default https://wandb.ai) or the MLflow tracking server's UI URL (required)."
    )
    entity: PathSegment | None = Field(None, description="W&B entity (user or team).")
    project: PathSegment | None = Field(None, description="W&B project.")
    experiment: PathSegment | None = Field(None, description="MLflow experiment id (the number in its UI URL).")

    @model_validator(mode="after")
    def _fields_for_kind(self) -> Self:
        need = ("entity", "project") if self.kind == "wandb" else ("url", "experiment")
        other = ("experiment",) if self.kind == "wandb" else ("entity", "project")
        missing = [k for k in need if getattr(self, k) is None]
        problems = [ProblemAt((k,), f"expected {k}: for a {self.kind} tracker, got none") for k in missing]
        problems += [
            ProblemAt((k,), f"expected no {k} for a {self.kind} tracker, got {getattr(self, k)!r}")
            for k in other
            if getattr(self, k) is not None
        ]
        raise_all(problems)
        return self


# The paths each rollout engine's metrics can arrive by (data/engines.yaml `paths`; rl/engines.py checks they agree).
ROLLOUT_PATHS = {"vllm": ("engine", "ray"), "sglang": ("engine",)}


class Rollout(Model):
    """The engine that generates the rollouts, and where its metrics come from: the inference dashboard and the
    monitors use the names of that path (`vllm:*` from the engine, `ray_vllm_*` through Ray, `sglang:*`)."""

    engine: Literal["vllm", "sglang"] = Field("vllm", description="The rollout engine: vllm or sglang.")
    metrics: Literal["engine", "ray"] = Field(
        "engine",
        description="engine: Prometheus scrapes the engine's own /metrics (vllm:*, sglang:*); ray: the engine logs "
        "through Ray's metrics agent (vLLM's RayPrometheusStatLogger, Ray Serve LLM), which exports ray_vllm_*.",
    )
    port: int | None = Field(
        None,
        ge=1,
        le=65535,
        description="metrics: engine only: the engine's HTTP port on the workload's pods; set, a PodMonitor scrapes "
        "its /metrics there (unset: only the Ray head's Serve port is scraped).",
    )

    @model_validator(mode="after")
    def _path_for_engine(self) -> Self:
        problems, paths = [], ROLLOUT_PATHS[self.engine]
        if self.metrics not in paths:
            expected = f"one of {', '.join(paths)} for {self.engine} (SGLang has no Ray metrics path)"
            problems.append(ProblemAt(("metrics",), f"expected {expected}, got {self.metrics!r}"))
        if self.port is not None and self.metrics != "engine":
            expected = f"no port with metrics: {self.metrics} (Ray's agent is scraped)"
            problems.append(ProblemAt(("port",), f"expected {expected}, got {self.port}"))
        raise_all(problems)
        return self


class PodGroup(Model):
    """A named group of the workload's pods that run RL code (a JobSet replicated job, a Ray worker group), and the
    container in them that runs it."""

    name: DnsLabel = Field(description="The replicatedJobs entry's name, or the Ray worker group's groupName.")
    container: DnsLabel | None = Field(
        None, description="The container in its pods that runs the RL loop; defaults to workload.container."
    )


def _job_short_form(value: Any) -> Any:
    # `replicatedJobs: [trainer]` is short for `[{name: trainer}]` (the container is workload.container); so for
    # workerGroups.
    if isinstance(value, tuple | list):
        return tuple({"name": item} if isinstance(item, str) else item for item in value)
    return value


PodGroups = Annotated[
    tuple[PodGroup, ...],
    BeforeValidator(_job_short_form, json_schema_input_type=tuple[PodGroup | DnsLabel, ...]),
]


class Workload(Model):
    name: DnsLabel = Field(description="Name of the Deployment/Job/RayJob... that runs the RL loop.")
    namespace: DnsLabel = Field(description="Its namespace.")
    kind: WorkloadKind = Field("Deployment", description="Kind of the workload object to patch.")
    container: DnsLabel = Field(description="Name of the container that runs the RL loop.")
    service_name: AttrValue | None = Field(None, description="OTEL_SERVICE_NAME; defaults to the workload name.")
    run: RunIdentity
    export_interval: Duration = Field("30s", description="How often the SDK exports metrics.")
    metrics_port: int = Field(9464, ge=1024, le=65535, description="Port of the app's /metrics endpoint.")
    histogram_buckets: tuple[Positive, ...] | None = Field(
        None,
        min_length=1,
        max_length=40,
        description="Bucket boundaries (ms, ascending) of every duration histogram instead of the catalog's 18 "
        "(10 ms to 4 h): each boundary is one series per histogram (rlobs plan shows the effect).",
    )
    drop_attributes: tuple[str, ...] = Field(
        (),
        description="Catalog attribute keys the module leaves off every metric point (fewer series; rlobs plan shows "
        "the effect): only attributes no dashboard, alert or SLO reads, e.g. drop_reason.",
    )
    replicated_jobs: PodGroups = Field(
        (),
        description="JobSet only: the replicatedJobs whose pods run the RL loop, each `{name, container}` (the "
        "container defaults to workload.container; a plain name is the short form); each gets the patch.",
    )
    worker_groups: PodGroups = Field(
        (),
        description="RayJob, RayCluster, RayService: the worker groups (groupName) whose pods run RL code besides "
        "the head, each `{name, container}` as replicatedJobs; each gets the patch. verl's TaskRunner actor and its "
        "file logger may run on any worker pod, so name every worker group.",
    )
    tracker: Tracker | None = Field(None, description="W&B or MLflow: dashboards and alerts link to the run there.")
    rollout: Rollout = Field(
        Rollout(), description="The rollout engine and its metrics path (default vLLM scraped directly)."
    )

    @model_validator(mode="after")
    def _run_id_for_wandb(self) -> Self:
        # The W&B run id is rl.run.id (WANDB_RUN_ID=$(RL_RUN_ID)), so it must be one W&B accepts.
        run_id = self.run.id or ""
        if self.tracker is not None and self.tracker.kind == "wandb" and _WANDB_ID_FORBIDDEN & set(run_id):
            raise ProblemAt(
                ("run", "id"),
                f"expected a run id W&B accepts (no / \\ # ? % :) with a wandb tracker, got {run_id!r}",
            )
        return self

    @model_validator(mode="after")
    def _replicated_jobs_for_jobsets(self) -> Self:
        # A JobSet's replicatedJobs are a list keyed by name; the patch merges into the named ones only.
        problems = []
        if self.kind == "JobSet" and not self.replicated_jobs:
            jobs = f"`replicatedJobs:` naming the JobSet's replicatedJobs that run container {self.container!r}"
            problems.append(ProblemAt(("kind",), f"kind is JobSet, so expected {jobs}, got none"))
        if self.kind != "JobSet" and self.replicated_jobs:
            problems.append(ProblemAt(("replicatedJobs",), f"expected no replicatedJobs for a {self.kind}, got some"))
        if len({j.name for j in self.replicated_jobs}) != len(self.replicated_jobs):
            problems.append(ProblemAt(("replicatedJobs",), "expected each replicatedJob once"))
        if self.kind not in ("RayJob", "RayCluster", "RayService") and self.worker_groups:
            problems.append(ProblemAt(("workerGroups",), f"expected no workerGroups for a {self.kind}, got some"))
        if len({g.name for g in self.worker_groups}) != len(self.worker_groups):
            problems.append(ProblemAt(("workerGroups",), "expected each worker group once"))
        raise_all(problems)
        return self

    @model_validator(mode="after")
    def _ascending_buckets(self) -> Self:
        bounds = self.histogram_buckets or ()
        if any(a >= b for a, b in pairwise(bounds)):
            raise ProblemAt(("histogramBuckets",), f"expected ascending boundaries, got {list(bounds)}")
        return self

    @model_validator(mode="after")
    def _droppable(self) -> Self:
        allowed = droppable_attributes()
        raise_all(
            ProblemAt(("dropAttributes", i), f"expected one of {', '.join(allowed)} (read by no query), got {key!r}")
            for i, key in enumerate(self.drop_attributes)
            if key not in allowed
        )
        return self

    @property
    def jobs(self) -> tuple[tuple[str, str], ...]:
        """(replicated job, its RL container) of a JobSet, in profile order."""
        return tuple((j.name, j.container or self.container) for j in self.replicated_jobs)

    @property
    def workers(self) -> tuple[tuple[str, str], ...]:
        """(Ray worker group, its RL container), in profile order."""
        return tuple((g.name, g.container or self.container) for g in self.worker_groups)

    @property
    def otel_service_name(self) -> str:
        return self.service_name or self.name

    @property
    def export_interval_ms(self) -> int:
        return duration_seconds(self.export_interval) * 1000


# Every alert but the stall judges the last few iterations, not a wall-clock window: the windows scale with the run's
# own step interval (the module's p95 of its last 20 steps), and the durations below are their floors.
class StallAlert(Model):
    window: Duration = Field(
        "8m",
        description="The floor of the stall limit: no completed step for max(window, factor x the run's own step "
        "interval) while training means the run stalled.",
    )
    factor: Positive = Field(
        2.5, description="The stall limit in multiples of the run's own step interval (a p95 of its last 20 steps)."
    )
    startup: Duration = Field(
        "30m",
        description="A run that makes no first step within this long of its start pages; raise it above the first "
        "iteration when that is longer.",
    )
    pause_limit: Duration = Field(
        "60m", description="A declared pause (checkpoint, evaluation, saving) longer than this pages as a stall."
    )
    for_: Duration = Field("1m", alias="for")
    severity: Severity = "critical"
    forget_after: Duration = Field(
        "6h",
        description="A failed run, or one whose telemetry vanished without a final state (SIGKILL, OOM kill, "
        "eviction), pages until this long after its last point, unless a new process of the run id reports.",
    )


class RewardCollapseAlert(Model):
    smooth: Duration = Field(
        "3m",
        description="Floor of the recent window; the mean reward's median over max(smooth, 2.5 iterations) is what "
        "is compared.",
    )
    noise: Positive = Field(
        3.0,
        description="The drop must also exceed this many times the reward's typical standard deviation within the "
        "recent window, over the baseline.",
    )
    drop: float = Field(
        0.5,
        gt=0,
        lt=1,
        description="Fire when the recent median falls below the baseline peak by this fraction of the baseline range "
        "(peak - low); range-based so negative rewards work.",
    )
    min_drop: Positive = Field(
        0.1, description="...and by at least this much in the reward's own units: small dips never fire."
    )
    baseline: Duration = Field(
        "6h",
        description="Floor of the baseline window (at least 10 iterations) before the recent one: its peak, low and "
        "noise.",
    )
    for_: Duration = Field("15m", alias="for")
    keep_firing_for: Duration = Field(
        "30m", description="Keep firing this long after the condition clears (hysteresis; Prometheus keep_firing_for)."
    )
    severity: Severity = "warning"

    @model_validator(mode="after")
    def _for_within_baseline(self) -> Self:
        # The peak must still be inside the baseline window when `for` has elapsed, or the alert can never fire.
        if duration_seconds(self.for_) >= duration_seconds(self.baseline):
            raise ProblemAt(("for",), f"expected a duration shorter than baseline ({self.baseline}), got {self.for_}")
        return self


class LossSpikeAlert(Model):
    factor: Positive = Field(
        3.0,
        description="Fire when the recent median |loss| exceeds this multiple of its average |loss| over the "
        "baseline window before.",
    )
    floor: Positive = Field(
        1.0,
        description="...and exceeds this absolute |loss|: a loss growing from ~0 during warm-up never fires. "
        "A NaN or infinite loss always fires.",
    )
    baseline: Duration = Field(
        "6h", description="Floor of the baseline window (at least 10 iterations): a divergence fires until it fills it."
    )
    for_: Duration = Field("5m", alias="for")
    keep_firing_for: Duration = Field("15m", description="Keep firing this long after the condition clears.")
    severity: Severity = "warning"


class MfuLowAlert(Model):
    threshold: Fraction = Field(0.2, description="MFU below this (0-1) in each of the last 2.5 iterations fires.")
    for_: Duration = Field("30m", alias="for")
    severity: Severity = "warning"


class LoopRegressionAlert(Model):
    factor: Positive = Field(
        1.5,
        description="Fire when the average loop duration in each of two consecutive recent windows exceeds this "
        "multiple of its average over the baseline before them.",
    )
    window: Duration = Field("15m", description="Floor of each recent window (at least 3 iterations).")
    baseline: Duration = Field("6h", description="Floor of the baseline window (at least 20 iterations).")
    for_: Duration = Field("15m", alias="for")
    severity: Severity = "warning"


class SyncLatencyAlert(Model):
    threshold_ms: Positive = Field(
        60000,
        description="Fire when the average weight-sync duration in each of two consecutive recent windows is above "
        "this many milliseconds.",
    )
    window: Duration = Field("15m", description="Floor of each recent window (at least 3 iterations).")
    for_: Duration = Field("10m", alias="for")
    severity: Severity = "warning"


class TargetDownAlert(Model):
    for_: Duration = Field(
        "5m",
        alias="for",
        description="A live run's scrape target failing this long warns the platform (the RL pages hold meanwhile).",
    )
    severity: Severity = "warning"


class Alerts(Model):
    """RL alert thresholds; rendered as PrometheusRules (eks) or Cloud Monitoring alert policies (gke)."""

    enabled: bool = True
    stall: StallAlert = StallAlert()
    reward_collapse: RewardCollapseAlert = RewardCollapseAlert()
    loss_spike: LossSpikeAlert = LossSpikeAlert()
    mfu_low: MfuLowAlert = MfuLowAlert()
    loop_regression: LoopRegressionAlert = LoopRegressionAlert()
    sync_latency: SyncLatencyAlert = SyncLatencyAlert()
    target_down: TargetDownAlert = TargetDownAlert()
    recorded_in_code: tuple[Literal["mfuLow", "loopRegression", "syncLatency", "rewardCollapse", "lossSpike"], ...] = (
        Field(
            (),
            description="Alerts rendered although workload.run.system's adapter does not supply their signals, "
            "because the training code records them (the bundle README gives the line).",
        )
    )


class ProfileBase(Model):
    """What every profile has, whatever its target; a target's profile class adds its own section and `target` tag
    (rlobs.targets.Target.profile_model, e.g. rlobs.targets.eks.profile.EksProfile)."""

    api_version: Literal["rlobs/v1alpha1"] = Field(description="Profile format version.")
    kind: Literal["Profile"]
    metadata: Metadata
    target: str = Field(description="Which bundle to render.")
    workload: Workload
    alerts: Alerts = Alerts()
    slos: Slos | None = Field(
        None,
        description="RL-run SLOs with error budgets and burn-rate alerts; none unless given (no blueprint sets it).",
    )
    plan: PlanSettings = Field(PlanSettings(), description="Sizing counts and budgets for `rlobs plan`.")
