"""The profile as frozen records and the strict checks that build them: compiled from the pydantic model
(rlobs.profile.model, .eks, .gke, .eksprofile, .gkeprofile) by tools/profile_records.py. Do not edit; run
`make records` after changing the model. rlobs.profile.strict says how the checks relate to the model."""

# ruff: noqa: E501 (the compiled patterns and messages are kept whole)
from __future__ import annotations

import re
from typing import Any, Literal, Self

from rlobs.profile import strict as _s
from rlobs.profile.checks import (
    DEFAULT_SEVERITIES,
    ROLLOUT_PATHS,
    WANDB_ID_FORBIDDEN,
    Severity,
    duration,
    duration_seconds,
    job_short_form,
    matching,
    not_a_number,
    to_camel,
)
from rlobs.profile.ekschecks import declared_variables, git_url
from rlobs.profile.gkechecks import REGION, label_problems, named, project_id, workload_problems
from rlobs.profile.helmvalues import override_problems
from rlobs.profile.problems import ProblemAt, raise_all
from rlobs.profile.terraform import variable_problems

_M0 = matching(
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
    "a Kubernetes name (RFC 1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit) like rl-trainer",
    63,
)
_M1 = matching(
    "[^\\x00-\\x1f\\x7f-\\x9f\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb]*",
    "one line of at most 200 characters without control or invisible characters (rlobs blueprints prints it in a terminal table)",
    200,
)
_M2 = matching(
    "[A-Za-z0-9][A-Za-z0-9._:/+@-]*",
    "a short identifier (letters, digits and . _ : / + @ -) like grpo or Qwen2.5-7B",
    128,
)
_M3 = matching(
    "https?://[A-Za-z0-9._~:/?#@!&*+,;=%-]+",
    "an http(s) URL like https://wandb.ai, of RFC 3986 characters without $ [ ] ( ) ' (percent-encode them)",
    1800,
)
_M4 = matching("[A-Za-z0-9][A-Za-z0-9._-]*", "a name of letters, digits and . _ - like rl-team", 128)
_M5 = matching(
    "[0-9A-Za-z][A-Za-z0-9_-]{0,99}",
    "an EKS cluster name (1-100 letters, digits, '-' and '_', starting with a letter or digit)",
    None,
)
_M6 = matching("[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]", "an AWS region like us-west-2", None)
_M7 = matching("1\\.[0-9]{2}", "a Kubernetes minor version like 1.34", None)
_M8 = matching(
    "(?!HEAD$)(?!.*\\.\\.)(?!.*//)(?!.*/\\.)(?!.*\\.lock(/|$))(?!.*[/.]$)[A-Za-z0-9][A-Za-z0-9._/-]{0,199}",
    "a branch, tag or commit like main, v1.4.0 or a commit SHA (not HEAD: name the revision to sync)",
    None,
)
_M9 = matching(
    "(?!\\.\\.?(/|$))(?!.*/\\.\\.?(/|$))[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*",
    "a relative path inside the repository like clusters/prod/rlobs (no . or .. parts)",
    None,
)
_M10 = matching("[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|m|k|M|G|T)?", "a Kubernetes quantity like 50Gi or 500m", None)
_M11 = matching("(?!\\.\\.)(?!\\.$)[-._a-zA-Z0-9]+", "a Secret key like password (not . or .., no leading ..)", 253)
_M12 = matching("[A-Za-z0-9][-A-Za-z0-9._@]{0,63}", "a user name like grafana (no `$`)", None)
_M13 = matching(
    "https?://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?(/[-A-Za-z0-9._~/]*)?",
    "a Prometheus URL like https://prometheus.prod.example.com (no user, password, query or `$`)",
    2048,
)
_M14 = matching(
    "[#@][a-z0-9][a-z0-9._-]{0,79}|[CGD][A-Z0-9]{8,20}",
    "a Slack channel like #rl-alerts, a user like @oncall or a channel id like C0123456789",
    None,
)
_M15 = matching(
    "[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\\.iam\\.gserviceaccount\\.com",
    "a service account email like rl-trainer@my-project.iam.gserviceaccount.com",
    None,
)
_M16 = matching(
    "projects/([a-z][a-z0-9-]{4,28}[a-z0-9]|[0-9]+)/notificationChannels/[0-9]+",
    "a notification channel name like projects/my-project/notificationChannels/123",
    None,
)
_M17 = matching(
    "[A-Za-z_][A-Za-z0-9_.]{0,99}", "a label key like namespace or team (letters, digits, '_' and '.')", None
)
_M18 = matching("[a-z]+(-[a-z]+)+[0-9]{1,2}(-[a-z])?", "a GCP region or zone like us-central1 or us-central1-a", 40)
_M19 = matching(
    "[a-z]([-a-z0-9]{0,38}[a-z0-9])?",
    "a GKE cluster name (1-40 lowercase letters, digits and '-', starting with a letter, not ending with '-') like rl-cluster",
    None,
)
_M20 = matching(
    "https?://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?",
    "an OTLP endpoint like http://otel-collector.observability.svc.cluster.local:4317",
    253,
)


class Metadata(_s.Record):
    __slots__ = ("description", "name")
    name: str
    description: str


class RunIdentity(_s.Record):
    """The rl.* identity attributes put on every metric point and span (dashboard filters use them)."""

    __slots__ = ("algorithm", "environment", "id", "model", "system", "system_version")
    system: str
    system_version: str | None
    algorithm: str
    environment: str
    model: str
    id: str | None


class ReplicatedJob(_s.Record):
    """A JobSet replicated job whose pods run the RL loop, and the container in them that runs it."""

    __slots__ = ("container", "name")
    name: str
    container: str | None


class Tracker(_s.Record):
    """The experiment tracker the run logs to: RL panels and alerts link to the run (W&B) or experiment (MLflow)."""

    __slots__ = ("entity", "experiment", "kind", "project", "url")
    kind: Literal["wandb", "mlflow"]
    url: str | None
    entity: str | None
    project: str | None
    experiment: str | None

    def _fields_for_kind(self) -> Self:
        need = ("entity", "project") if self.kind == "wandb" else ("url", "experiment")
        other = ("experiment",) if self.kind == "wandb" else ("entity", "project")
        problems = [ProblemAt((k,), f"expected {k}: for a {self.kind} tracker, got none") for k in need]
        problems = [p for p, k in zip(problems, need, strict=True) if getattr(self, k) is None]
        problems += [
            ProblemAt((k,), f"expected no {k} for a {self.kind} tracker, got {getattr(self, k)!r}")
            for k in other
            if getattr(self, k) is not None
        ]
        raise_all(problems)
        return self


class Rollout(_s.Record):
    """The engine that generates the rollouts, and where its metrics come from: the inference dashboard and the
    monitors use the names of that path (`vllm:*` from the engine, `ray_vllm_*` through Ray, `sglang:*`)."""

    __slots__ = (
        "engine",
        "metrics",
        "port",
    )
    engine: Literal["vllm", "sglang"]
    metrics: Literal["engine", "ray"]
    port: int | None

    def _path_for_engine(self) -> Self:
        problems = []
        if self.metrics not in ROLLOUT_PATHS[self.engine]:
            problems.append(
                ProblemAt(
                    ("metrics",),
                    f"expected one of {', '.join(ROLLOUT_PATHS[self.engine])} for {self.engine} (SGLang has no Ray "
                    f"metrics path), got {self.metrics!r}",
                )
            )
        if self.port is not None and self.metrics != "engine":
            problems.append(
                ProblemAt(
                    ("port",),
                    f"expected no port with metrics: {self.metrics} (Ray's agent is scraped), got {self.port}",
                )
            )
        raise_all(problems)
        return self


class Workload(_s.Record):
    __slots__ = (
        "container",
        "export_interval",
        "kind",
        "metrics_port",
        "name",
        "namespace",
        "replicated_jobs",
        "rollout",
        "run",
        "service_name",
        "tracker",
    )
    name: str
    namespace: str
    kind: Literal["Deployment", "StatefulSet", "Job", "JobSet", "RayJob", "RayCluster", "RayService"]
    container: str
    service_name: str | None
    run: RunIdentity
    export_interval: str
    metrics_port: int
    replicated_jobs: tuple[ReplicatedJob, ...]
    tracker: Tracker | None
    rollout: Rollout

    def _run_id_for_wandb(self) -> Self:
        # The W&B run id is rl.run.id (WANDB_RUN_ID=$(RL_RUN_ID)), so it must be one W&B accepts.
        if self.tracker is not None and self.tracker.kind == "wandb" and WANDB_ID_FORBIDDEN & set(self.run_id):
            raise ProblemAt(
                ("run", "id"),
                f"expected a run id W&B accepts (no / \\ # ? % :) with a wandb tracker, got {self.run_id!r}",
            )
        return self

    def _replicated_jobs_for_jobsets(self) -> Self:
        # A JobSet's replicatedJobs are a list keyed by name; the patch merges into the named ones only.
        problems = []
        if self.kind == "JobSet" and not self.replicated_jobs:
            problems.append(
                ProblemAt(
                    ("kind",),
                    "kind is JobSet, so expected `replicatedJobs:` naming the JobSet's replicatedJobs that run "
                    f"container {self.container!r}, got none",
                )
            )
        if self.kind != "JobSet" and self.replicated_jobs:
            problems.append(ProblemAt(("replicatedJobs",), f"expected no replicatedJobs for a {self.kind}, got some"))
        if len({j.name for j in self.replicated_jobs}) != len(self.replicated_jobs):
            problems.append(ProblemAt(("replicatedJobs",), "expected each replicatedJob once"))
        raise_all(problems)
        return self

    @property
    def jobs(self) -> tuple[tuple[str, str], ...]:
        """(replicated job, its RL container) of a JobSet, in profile order."""
        return tuple((j.name, j.container or self.container) for j in self.replicated_jobs)

    @property
    def otel_service_name(self) -> str:
        return self.service_name or self.name

    @property
    def run_id(self) -> str:
        return self.run.id or self.name

    @property
    def export_interval_ms(self) -> int:
        return duration_seconds(self.export_interval) * 1000


class StallAlert(_s.Record):
    __slots__ = ("for_", "forget_after", "severity", "window")
    window: str
    for_: str
    severity: Literal["critical", "warning", "info"]
    forget_after: str


class RewardCollapseAlert(_s.Record):
    __slots__ = ("baseline", "drop", "for_", "noise", "severity", "smooth")
    smooth: str
    noise: float
    drop: float
    baseline: str
    for_: str
    severity: Literal["critical", "warning", "info"]

    def _for_within_baseline(self) -> Self:
        # The peak must still be inside the baseline window when `for` has elapsed, or the alert can never fire.
        if duration_seconds(self.for_) >= duration_seconds(self.baseline):
            raise ProblemAt(("for",), f"expected a duration shorter than baseline ({self.baseline}), got {self.for_}")
        return self


class LossSpikeAlert(_s.Record):
    __slots__ = ("baseline", "factor", "floor", "for_", "severity")
    factor: float
    floor: float
    baseline: str
    for_: str
    severity: Literal["critical", "warning", "info"]


class MfuLowAlert(_s.Record):
    __slots__ = ("for_", "severity", "threshold")
    threshold: float
    for_: str
    severity: Literal["critical", "warning", "info"]


class LoopRegressionAlert(_s.Record):
    __slots__ = ("baseline", "factor", "for_", "severity", "window")
    factor: float
    window: str
    baseline: str
    for_: str
    severity: Literal["critical", "warning", "info"]


class SyncLatencyAlert(_s.Record):
    __slots__ = ("for_", "severity", "threshold_ms", "window")
    threshold_ms: float
    window: str
    for_: str
    severity: Literal["critical", "warning", "info"]


class Alerts(_s.Record):
    """RL alert thresholds; rendered as PrometheusRules (eks) or Cloud Monitoring alert policies (gke)."""

    __slots__ = ("enabled", "loop_regression", "loss_spike", "mfu_low", "reward_collapse", "stall", "sync_latency")
    enabled: bool
    stall: StallAlert
    reward_collapse: RewardCollapseAlert
    loss_spike: LossSpikeAlert
    mfu_low: MfuLowAlert
    loop_regression: LoopRegressionAlert
    sync_latency: SyncLatencyAlert


class ProfileBase(_s.Record):
    """What every profile has, whatever its target; a target's profile adds its own section (rlobs.profile.eksprofile,
    rlobs.profile.gkeprofile; rlobs.profile.profiles.Profile is one of them)."""

    __slots__ = ("alerts", "api_version", "kind", "metadata", "target", "workload")
    api_version: Literal["rlobs/v1alpha1"]
    kind: Literal["Profile"]
    metadata: Metadata
    target: str
    workload: Workload
    alerts: Alerts


class EksCluster(_s.Record):
    __slots__ = ("kubernetes_version", "name", "region")
    name: str
    region: str
    kubernetes_version: str


class GitOps(_s.Record):
    __slots__ = ("path", "repo_url", "target_revision")
    repo_url: str
    target_revision: str
    path: str


class Resources(_s.Record):
    __slots__ = (
        "cpu",
        "memory",
    )
    cpu: str
    memory: str


class PrometheusSettings(_s.Record):
    __slots__ = ("limits", "requests", "retention", "storage_class", "storage_size")
    retention: str
    storage_size: str
    storage_class: str
    requests: Resources
    limits: Resources


class SecretRef(_s.Record):
    """A key of a Kubernetes Secret; the value never appears in the profile or the bundle."""

    __slots__ = ("key", "name")
    name: str
    key: str


class BasicAuth(_s.Record):
    __slots__ = ("password_secret", "username")
    username: str
    password_secret: SecretRef


class PrometheusEndpoint(_s.Record):
    """Where a Grafana elsewhere queries this cluster's Prometheus; credentials only as Secret references."""

    __slots__ = ("basic_auth", "bearer_token_secret", "url")
    url: str
    bearer_token_secret: SecretRef | None
    basic_auth: BasicAuth | None

    def _one_auth(self) -> Self:
        if self.bearer_token_secret is not None and self.basic_auth is not None:
            raise_all([ProblemAt(("basicAuth",), "expected bearerTokenSecret or basicAuth, got both")])
        return self


class RemotePrometheus(PrometheusEndpoint):
    __slots__ = ("name",)
    name: str


class GrafanaSettings(_s.Record):
    __slots__ = (
        "admin_secret",
        "remote_prometheus",
    )
    admin_secret: str
    remote_prometheus: tuple[RemotePrometheus, ...]

    def _one_datasource_per_cluster(self) -> Self:
        seen: set[str] = set()
        problems = []
        for i, remote in enumerate(self.remote_prometheus):
            if remote.name in seen:
                message = f"expected each cluster once (one datasource uid each), got {remote.name!r} again"
                problems.append(ProblemAt(("remotePrometheus", i, "name"), message))
            seen.add(remote.name)
        raise_all(problems)
        return self


class OpenSearchSettings(_s.Record):
    __slots__ = ("credentials_secret", "log_writer_secret", "replicas", "security_config_secret", "storage_size")
    credentials_secret: str
    security_config_secret: str
    log_writer_secret: str
    storage_size: str
    replicas: int


class Receiver(_s.Record):
    __slots__ = ("alerts", "channel", "name", "secret_ref", "severities", "type")
    name: str
    type: Literal["slack", "pagerduty", "webhook"]
    secret_ref: SecretRef
    channel: str | None
    alerts: Literal["rl", "cluster", "all"]
    severities: tuple[Literal["critical", "warning", "info"], ...] | None

    @property
    def routed_severities(self) -> tuple[Severity, ...]:
        return self.severities or DEFAULT_SEVERITIES[self.type]


class EksSpec(_s.Record):
    __slots__ = (
        "alertmanager_receivers",
        "cluster",
        "dcgm_exporter",
        "gitops",
        "grafana",
        "helm_values",
        "kuberay_operator",
        "metrics_pipeline",
        "mode",
        "opensearch",
        "prometheus",
        "ray_logs",
        "terraform_variables",
    )
    mode: Literal["rlobs", "ai-on-eks"]
    cluster: EksCluster
    gitops: GitOps
    metrics_pipeline: Literal["otel-collector", "prometheus-exporter"]
    prometheus: PrometheusSettings
    grafana: GrafanaSettings
    opensearch: OpenSearchSettings
    alertmanager_receivers: tuple[Receiver, ...]
    dcgm_exporter: bool
    kuberay_operator: bool
    ray_logs: bool
    terraform_variables: dict[str, bool | int | float | str | tuple[str, ...] | dict[str, bool | int | float | str]]
    helm_values: dict[str, dict[str, Any]]

    def _stack_settings_need_rlobs_mode(self) -> Self:
        # In ai-on-eks mode the reference stack deploys these with its own values; silently ignoring them would
        # leave the user believing their retention or Secrets apply.
        if self.mode != "ai-on-eks":
            return self
        raise_all(
            ProblemAt(
                (to_camel(key),),
                f"expected no {key} settings with eks.mode: ai-on-eks (the reference stack deploys {key} with its own "
                f"values; change them in its Argo CD Application, or use eks.mode: rlobs)",
            )
            for key in ("prometheus", "grafana", "opensearch")
            # The log writer Secret lives in the workload's namespace and is read by rlobs' own sidecar.
            if key in self.model_fields_set and getattr(self, key).model_fields_set - {"log_writer_secret"}
        )
        return self

    def _receivers_fit_the_mode(self) -> Self:
        # In ai-on-eks mode the reference stack owns Alertmanager; rlobs wires its receivers through an
        # AlertmanagerConfig, which the operator confines to alerts labelled with its own namespace (the RL alerts).
        if self.mode != "ai-on-eks":
            return self
        raise_all(
            ProblemAt(
                ("alertmanagerReceivers", i, "alerts"),
                "expected rl with eks.mode: ai-on-eks (the reference stack's Alertmanager routes the cluster alerts; "
                "rlobs wires only the RL alerts, through an AlertmanagerConfig)",
            )
            for i, r in enumerate(self.alertmanager_receivers)
            if r.alerts != "rl"
        )
        return self

    def _receiver_names(self) -> Self:
        # Alertmanager refuses a config with two receivers of one name, and rlobs routes unmatched alerts to its
        # own `null` receiver (prometheus/alertmanager config.go: "notification config name ... is not unique").
        seen: set[str] = set()
        problems = []
        for i, receiver in enumerate(self.alertmanager_receivers):
            if receiver.name == "null":
                problems.append(
                    ProblemAt(
                        ("alertmanagerReceivers", i, "name"),
                        "expected a name other than null "
                        "(rlobs routes silenced alerts to its own `null` receiver), got 'null'",
                    )
                )
            elif receiver.name in seen:
                problems.append(
                    ProblemAt(
                        ("alertmanagerReceivers", i, "name"),
                        f"expected a name no other receiver has, got {receiver.name!r} again",
                    )
                )
            seen.add(receiver.name)
        raise_all(problems)
        return self

    def _helm_values(self) -> Self:
        raise_all(override_problems(self.mode, self.helm_values))
        return self

    def _terraform_variables(self) -> Self:
        raise_all(variable_problems(self.mode, dcgm=self.dcgm_exporter, variables=dict(self.terraform_variables)))
        return self


class EksProfile(ProfileBase):
    __slots__ = ("eks",)
    eks: EksSpec


class WorkloadIdentity(_s.Record):
    __slots__ = ("gcp_service_account", "kubernetes_service_account")
    kubernetes_service_account: str
    gcp_service_account: str | None


class ChannelRoute(_s.Record):
    """A notification channel and the alert severities it gets."""

    __slots__ = (
        "name",
        "severities",
    )
    name: str
    severities: tuple[Literal["critical", "warning", "info"], ...]


class DashboardFilter(_s.Record):
    """A filter on the bundle's dashboard beside rlobs' own rl.* ones, e.g. a cluster's namespace or a team label."""

    __slots__ = (
        "label",
        "type",
        "value",
    )
    label: str
    type: Literal["metric", "resource", "user-metadata", "system-metadata"]
    value: str | None


class GkeSpec(_s.Record):
    __slots__ = (
        "cluster",
        "cluster_mode",
        "collector_endpoint",
        "dashboard_filters",
        "deletion_protection",
        "instrumentation_resource",
        "location",
        "logs",
        "manage",
        "naming",
        "notification_channels",
        "project",
        "user_labels",
        "workload_identity",
    )
    project: str
    location: str
    cluster: str
    cluster_mode: Literal["existing", "create-standard", "create-autopilot"]
    naming: Literal["telemetry-api", "gmp-collector"]
    collector_endpoint: str | None
    logs: bool
    instrumentation_resource: bool
    workload_identity: WorkloadIdentity | None
    notification_channels: tuple[ChannelRoute, ...]
    user_labels: dict[str, str]
    dashboard_filters: tuple[DashboardFilter, ...]
    manage: Literal["scripts", "terraform"]
    deletion_protection: bool | None

    def channels_for(self, severity: str) -> list[str]:
        """The channels a policy of `severity` notifies, in profile order."""
        return [c.name for c in self.notification_channels if severity in c.severities]

    def _filters_once(self) -> Self:
        # Two filters on one label would each narrow the same widgets: the dashboard keeps one per label and type.
        seen: set[tuple[str, str]] = set()
        problems = []
        for i, f in enumerate(self.dashboard_filters):
            if (f.label, f.type) in seen:
                problems.append(
                    ProblemAt(
                        ("dashboardFilters", i, "label"), f"expected each {f.type} label once, got {f.label!r} again"
                    )
                )
            seen.add((f.label, f.type))
        raise_all(problems)
        return self

    def _user_labels(self) -> Self:
        raise_all(label_problems(self.user_labels))
        return self

    def _cluster_rules(self) -> Self:
        problems = []
        # Autopilot clusters are always regional: https://cloud.google.com/kubernetes-engine/docs/concepts/autopilot-overview
        if self.cluster_mode == "create-autopilot" and not re.fullmatch(REGION, self.location):
            problems.append(
                ProblemAt(
                    ("location",),
                    "expected a region like us-central1 for clusterMode create-autopilot "
                    f"(Autopilot clusters are regional), got the zone {self.location!r}",
                )
            )
        # google_container_cluster.deletion_protection defaults to true (provider 5.0 upgrade guide), so a
        # Terraform-created cluster needs the choice made; gcloud has no such setting, so elsewhere it is dead input.
        creates = self.manage == "terraform" and self.cluster_mode != "existing"
        if creates and self.deletion_protection is None:
            problems.append(
                ProblemAt(
                    ("deletionProtection",),
                    "expected true or false for a cluster Terraform creates (true: terraform destroy fails "
                    "until it is set to false and applied), got nothing",
                )
            )
        elif not creates and self.deletion_protection is not None:
            problems.append(
                ProblemAt(
                    ("deletionProtection",),
                    "expected no deletionProtection: only a cluster Terraform creates (manage: terraform, "
                    f"clusterMode create-*) has it, got {str(self.deletion_protection).lower()} with manage "
                    f"{self.manage} and clusterMode {self.cluster_mode}",
                )
            )
        # The gmp-collector names are what a collector with the googlemanagedprometheus exporter writes; the managed
        # collector keeps dots. So that naming needs the endpoint of such a collector, and only it uses one.
        if self.naming == "gmp-collector" and self.collector_endpoint is None:
            problems.append(
                ProblemAt(
                    ("naming",),
                    "naming is gmp-collector, so expected `collectorEndpoint:` naming the collector with the "
                    "googlemanagedprometheus exporter that the workload exports to, got none",
                )
            )
        if self.naming != "gmp-collector" and self.collector_endpoint is not None:
            problems.append(
                ProblemAt(
                    ("collectorEndpoint",),
                    "expected no collectorEndpoint with naming telemetry-api (the workload exports to the managed "
                    "collector)",
                )
            )
        raise_all(problems)
        return self


class GkeProfile(ProfileBase):
    __slots__ = ("gke",)
    gke: GkeSpec

    def _workload_on_gke(self) -> Self:
        # Rules that need the workload and the gke section together.
        raise_all(workload_problems(self.workload))
        return self


Profile = EksProfile | GkeProfile
# target -> its profile's record class (rlobs.profile.load PROFILES has the model's)
PROFILES: dict[str, type[Profile]] = {"eks": EksProfile, "gke": GkeProfile}

Metadata.record_fields = (
    ("name", "name", _s.after(_s.text, _M0), _s.REQUIRED),
    ("description", "description", _s.after(_s.text, _M1), ""),
)
Metadata.record_keys = frozenset(["description", "name"])
Metadata.record_rules = ()

RunIdentity.record_fields = (
    ("system", "system", _s.after(_s.text, _M2), _s.REQUIRED),
    ("system_version", "systemVersion", _s.optional(_s.after(_s.text, _M2)), None),
    ("algorithm", "algorithm", _s.after(_s.text, _M2), _s.REQUIRED),
    ("environment", "environment", _s.after(_s.text, _M2), _s.REQUIRED),
    ("model", "model", _s.after(_s.text, _M2), _s.REQUIRED),
    ("id", "id", _s.optional(_s.after(_s.text, _M2)), None),
)
RunIdentity.record_keys = frozenset(["algorithm", "environment", "id", "model", "system", "systemVersion"])
RunIdentity.record_rules = ()

ReplicatedJob.record_fields = (
    ("name", "name", _s.after(_s.text, _M0), _s.REQUIRED),
    ("container", "container", _s.optional(_s.after(_s.text, _M0)), None),
)
ReplicatedJob.record_keys = frozenset(["container", "name"])
ReplicatedJob.record_rules = ()

Tracker.record_fields = (
    ("kind", "kind", _s.literal("wandb", "mlflow"), _s.REQUIRED),
    ("url", "url", _s.optional(_s.after(_s.text, _M3)), None),
    ("entity", "entity", _s.optional(_s.after(_s.text, _M4)), None),
    ("project", "project", _s.optional(_s.after(_s.text, _M4)), None),
    ("experiment", "experiment", _s.optional(_s.after(_s.text, _M4)), None),
)
Tracker.record_keys = frozenset(["entity", "experiment", "kind", "project", "url"])
Tracker.record_rules = ("_fields_for_kind",)

Rollout.record_fields = (
    ("engine", "engine", _s.literal("vllm", "sglang"), "vllm"),
    ("metrics", "metrics", _s.literal("engine", "ray"), "engine"),
    ("port", "port", _s.bounded(_s.bounded(_s.optional(_s.integer), "ge", 1), "le", 65535), None),
)
Rollout.record_keys = frozenset(["engine", "metrics", "port"])
Rollout.record_rules = ("_path_for_engine",)

Workload.record_fields = (
    ("name", "name", _s.after(_s.text, _M0), _s.REQUIRED),
    ("namespace", "namespace", _s.after(_s.text, _M0), _s.REQUIRED),
    (
        "kind",
        "kind",
        _s.literal("Deployment", "StatefulSet", "Job", "JobSet", "RayJob", "RayCluster", "RayService"),
        "Deployment",
    ),
    ("container", "container", _s.after(_s.text, _M0), _s.REQUIRED),
    ("service_name", "serviceName", _s.optional(_s.after(_s.text, _M2)), None),
    ("run", "run", _s.record(RunIdentity), _s.REQUIRED),
    ("export_interval", "exportInterval", _s.after(_s.before(not_a_number, _s.text), duration), "30s"),
    ("metrics_port", "metricsPort", _s.bounded(_s.bounded(_s.integer, "ge", 1024), "le", 65535), 9464),
    ("replicated_jobs", "replicatedJobs", _s.before(job_short_form, _s.tuple_of(_s.record(ReplicatedJob))), ()),
    ("tracker", "tracker", _s.optional(_s.record(Tracker)), None),
    (
        "rollout",
        "rollout",
        _s.record(Rollout),
        _s.make(
            Rollout,
            (
                "vllm",
                "engine",
                None,
            ),
            (),
        ),
    ),
)
Workload.record_keys = frozenset(
    [
        "container",
        "exportInterval",
        "kind",
        "metricsPort",
        "name",
        "namespace",
        "replicatedJobs",
        "rollout",
        "run",
        "serviceName",
        "tracker",
    ]
)
Workload.record_rules = ("_run_id_for_wandb", "_replicated_jobs_for_jobsets")

StallAlert.record_fields = (
    ("window", "window", _s.after(_s.before(not_a_number, _s.text), duration), "15m"),
    ("for_", "for", _s.after(_s.before(not_a_number, _s.text), duration), "5m"),
    ("severity", "severity", _s.literal("critical", "warning", "info"), "critical"),
    ("forget_after", "forgetAfter", _s.after(_s.before(not_a_number, _s.text), duration), "6h"),
)
StallAlert.record_keys = frozenset(["for", "forgetAfter", "severity", "window"])
StallAlert.record_rules = ()

RewardCollapseAlert.record_fields = (
    ("smooth", "smooth", _s.after(_s.before(not_a_number, _s.text), duration), "10m"),
    ("noise", "noise", _s.bounded(_s.number, "gt", 0), 3.0),
    ("drop", "drop", _s.bounded(_s.bounded(_s.number, "gt", 0), "lt", 1), 0.5),
    ("baseline", "baseline", _s.after(_s.before(not_a_number, _s.text), duration), "1h"),
    ("for_", "for", _s.after(_s.before(not_a_number, _s.text), duration), "15m"),
    ("severity", "severity", _s.literal("critical", "warning", "info"), "warning"),
)
RewardCollapseAlert.record_keys = frozenset(["baseline", "drop", "for", "noise", "severity", "smooth"])
RewardCollapseAlert.record_rules = ("_for_within_baseline",)

LossSpikeAlert.record_fields = (
    ("factor", "factor", _s.bounded(_s.number, "gt", 0), 3.0),
    ("floor", "floor", _s.bounded(_s.number, "gt", 0), 1.0),
    ("baseline", "baseline", _s.after(_s.before(not_a_number, _s.text), duration), "1h"),
    ("for_", "for", _s.after(_s.before(not_a_number, _s.text), duration), "5m"),
    ("severity", "severity", _s.literal("critical", "warning", "info"), "warning"),
)
LossSpikeAlert.record_keys = frozenset(["baseline", "factor", "floor", "for", "severity"])
LossSpikeAlert.record_rules = ()

MfuLowAlert.record_fields = (
    ("threshold", "threshold", _s.bounded(_s.bounded(_s.number, "gt", 0), "le", 1), 0.2),
    ("for_", "for", _s.after(_s.before(not_a_number, _s.text), duration), "30m"),
    ("severity", "severity", _s.literal("critical", "warning", "info"), "warning"),
)
MfuLowAlert.record_keys = frozenset(["for", "severity", "threshold"])
MfuLowAlert.record_rules = ()

LoopRegressionAlert.record_fields = (
    ("factor", "factor", _s.bounded(_s.number, "gt", 0), 1.5),
    ("window", "window", _s.after(_s.before(not_a_number, _s.text), duration), "30m"),
    ("baseline", "baseline", _s.after(_s.before(not_a_number, _s.text), duration), "6h"),
    ("for_", "for", _s.after(_s.before(not_a_number, _s.text), duration), "15m"),
    ("severity", "severity", _s.literal("critical", "warning", "info"), "warning"),
)
LoopRegressionAlert.record_keys = frozenset(["baseline", "factor", "for", "severity", "window"])
LoopRegressionAlert.record_rules = ()

SyncLatencyAlert.record_fields = (
    ("threshold_ms", "thresholdMs", _s.bounded(_s.number, "gt", 0), 60000),
    ("window", "window", _s.after(_s.before(not_a_number, _s.text), duration), "15m"),
    ("for_", "for", _s.after(_s.before(not_a_number, _s.text), duration), "10m"),
    ("severity", "severity", _s.literal("critical", "warning", "info"), "warning"),
)
SyncLatencyAlert.record_keys = frozenset(["for", "severity", "thresholdMs", "window"])
SyncLatencyAlert.record_rules = ()

Alerts.record_fields = (
    ("enabled", "enabled", _s.boolean, True),
    (
        "stall",
        "stall",
        _s.record(StallAlert),
        _s.make(
            StallAlert,
            (
                "15m",
                "5m",
                "critical",
                "6h",
            ),
            (),
        ),
    ),
    (
        "reward_collapse",
        "rewardCollapse",
        _s.record(RewardCollapseAlert),
        _s.make(
            RewardCollapseAlert,
            (
                "10m",
                3.0,
                0.5,
                "1h",
                "15m",
                "warning",
            ),
            (),
        ),
    ),
    (
        "loss_spike",
        "lossSpike",
        _s.record(LossSpikeAlert),
        _s.make(
            LossSpikeAlert,
            (
                3.0,
                1.0,
                "1h",
                "5m",
                "warning",
            ),
            (),
        ),
    ),
    (
        "mfu_low",
        "mfuLow",
        _s.record(MfuLowAlert),
        _s.make(
            MfuLowAlert,
            (
                0.2,
                "30m",
                "warning",
            ),
            (),
        ),
    ),
    (
        "loop_regression",
        "loopRegression",
        _s.record(LoopRegressionAlert),
        _s.make(
            LoopRegressionAlert,
            (
                1.5,
                "30m",
                "6h",
                "15m",
                "warning",
            ),
            (),
        ),
    ),
    (
        "sync_latency",
        "syncLatency",
        _s.record(SyncLatencyAlert),
        _s.make(
            SyncLatencyAlert,
            (
                60000,
                "15m",
                "10m",
                "warning",
            ),
            (),
        ),
    ),
)
Alerts.record_keys = frozenset(
    ["enabled", "loopRegression", "lossSpike", "mfuLow", "rewardCollapse", "stall", "syncLatency"]
)
Alerts.record_rules = ()

ProfileBase.record_fields = (
    ("api_version", "apiVersion", _s.literal("rlobs/v1alpha1"), _s.REQUIRED),
    ("kind", "kind", _s.literal("Profile"), _s.REQUIRED),
    ("metadata", "metadata", _s.record(Metadata), _s.REQUIRED),
    ("target", "target", _s.text, _s.REQUIRED),
    ("workload", "workload", _s.record(Workload), _s.REQUIRED),
    (
        "alerts",
        "alerts",
        _s.record(Alerts),
        _s.make(
            Alerts,
            (
                True,
                _s.make(
                    StallAlert,
                    (
                        "15m",
                        "5m",
                        "critical",
                        "6h",
                    ),
                    (),
                ),
                _s.make(
                    RewardCollapseAlert,
                    (
                        "10m",
                        3.0,
                        0.5,
                        "1h",
                        "15m",
                        "warning",
                    ),
                    (),
                ),
                _s.make(
                    LossSpikeAlert,
                    (
                        3.0,
                        1.0,
                        "1h",
                        "5m",
                        "warning",
                    ),
                    (),
                ),
                _s.make(
                    MfuLowAlert,
                    (
                        0.2,
                        "30m",
                        "warning",
                    ),
                    (),
                ),
                _s.make(
                    LoopRegressionAlert,
                    (
                        1.5,
                        "30m",
                        "6h",
                        "15m",
                        "warning",
                    ),
                    (),
                ),
                _s.make(
                    SyncLatencyAlert,
                    (
                        60000,
                        "15m",
                        "10m",
                        "warning",
                    ),
                    (),
                ),
            ),
            (),
        ),
    ),
)
ProfileBase.record_keys = frozenset(["alerts", "apiVersion", "kind", "metadata", "target", "workload"])
ProfileBase.record_rules = ()

EksCluster.record_fields = (
    ("name", "name", _s.after(_s.text, _M5), _s.REQUIRED),
    ("region", "region", _s.after(_s.text, _M6), _s.REQUIRED),
    ("kubernetes_version", "kubernetesVersion", _s.after(_s.text, _M7), "1.34"),
)
EksCluster.record_keys = frozenset(["kubernetesVersion", "name", "region"])
EksCluster.record_rules = ()

GitOps.record_fields = (
    ("repo_url", "repoUrl", _s.after(_s.text, git_url), _s.REQUIRED),
    ("target_revision", "targetRevision", _s.after(_s.text, _M8), "main"),
    ("path", "path", _s.after(_s.text, _M9), _s.REQUIRED),
)
GitOps.record_keys = frozenset(["path", "repoUrl", "targetRevision"])
GitOps.record_rules = ()

Resources.record_fields = (
    ("cpu", "cpu", _s.after(_s.text, _M10), _s.REQUIRED),
    ("memory", "memory", _s.after(_s.text, _M10), _s.REQUIRED),
)
Resources.record_keys = frozenset(["cpu", "memory"])
Resources.record_rules = ()

PrometheusSettings.record_fields = (
    ("retention", "retention", _s.after(_s.before(not_a_number, _s.text), duration), "15d"),
    ("storage_size", "storageSize", _s.after(_s.text, _M10), "50Gi"),
    ("storage_class", "storageClass", _s.after(_s.text, _M0), "gp3"),
    (
        "requests",
        "requests",
        _s.record(Resources),
        _s.make(
            Resources,
            (
                "500m",
                "2Gi",
            ),
            ("cpu", "memory"),
        ),
    ),
    (
        "limits",
        "limits",
        _s.record(Resources),
        _s.make(
            Resources,
            (
                "2",
                "8Gi",
            ),
            ("cpu", "memory"),
        ),
    ),
)
PrometheusSettings.record_keys = frozenset(["limits", "requests", "retention", "storageClass", "storageSize"])
PrometheusSettings.record_rules = ()

SecretRef.record_fields = (
    ("name", "name", _s.after(_s.text, _M0), _s.REQUIRED),
    ("key", "key", _s.after(_s.text, _M11), _s.REQUIRED),
)
SecretRef.record_keys = frozenset(["key", "name"])
SecretRef.record_rules = ()

BasicAuth.record_fields = (
    ("username", "username", _s.after(_s.text, _M12), _s.REQUIRED),
    ("password_secret", "passwordSecret", _s.record(SecretRef), _s.REQUIRED),
)
BasicAuth.record_keys = frozenset(["passwordSecret", "username"])
BasicAuth.record_rules = ()

PrometheusEndpoint.record_fields = (
    ("url", "url", _s.after(_s.text, _M13), _s.REQUIRED),
    ("bearer_token_secret", "bearerTokenSecret", _s.optional(_s.record(SecretRef)), None),
    ("basic_auth", "basicAuth", _s.optional(_s.record(BasicAuth)), None),
)
PrometheusEndpoint.record_keys = frozenset(["basicAuth", "bearerTokenSecret", "url"])
PrometheusEndpoint.record_rules = ("_one_auth",)

RemotePrometheus.record_fields = (
    *PrometheusEndpoint.record_fields,
    ("name", "name", _s.after(_s.text, _M0), _s.REQUIRED),
)
RemotePrometheus.record_keys = frozenset(["basicAuth", "bearerTokenSecret", "name", "url"])
RemotePrometheus.record_rules = ("_one_auth",)

GrafanaSettings.record_fields = (
    ("admin_secret", "adminSecret", _s.after(_s.text, _M0), "grafana-admin"),
    ("remote_prometheus", "remotePrometheus", _s.tuple_of(_s.record(RemotePrometheus)), ()),
)
GrafanaSettings.record_keys = frozenset(["adminSecret", "remotePrometheus"])
GrafanaSettings.record_rules = ("_one_datasource_per_cluster",)

OpenSearchSettings.record_fields = (
    ("credentials_secret", "credentialsSecret", _s.after(_s.text, _M0), "opensearch-admin-credentials"),
    ("security_config_secret", "securityConfigSecret", _s.after(_s.text, _M0), "opensearch-securityconfig"),
    ("log_writer_secret", "logWriterSecret", _s.after(_s.text, _M0), "opensearch-log-writer"),
    ("storage_size", "storageSize", _s.after(_s.text, _M10), "30Gi"),
    ("replicas", "replicas", _s.bounded(_s.bounded(_s.integer, "ge", 1), "le", 9), 3),
)
OpenSearchSettings.record_keys = frozenset(
    ["credentialsSecret", "logWriterSecret", "replicas", "securityConfigSecret", "storageSize"]
)
OpenSearchSettings.record_rules = ()

Receiver.record_fields = (
    ("name", "name", _s.after(_s.text, _M0), _s.REQUIRED),
    ("type", "type", _s.literal("slack", "pagerduty", "webhook"), _s.REQUIRED),
    ("secret_ref", "secretRef", _s.record(SecretRef), _s.REQUIRED),
    ("channel", "channel", _s.optional(_s.after(_s.text, _M14)), None),
    ("alerts", "alerts", _s.literal("rl", "cluster", "all"), "rl"),
    ("severities", "severities", _s.optional(_s.tuple_of(_s.literal("critical", "warning", "info"))), None),
)
Receiver.record_keys = frozenset(["alerts", "channel", "name", "secretRef", "severities", "type"])
Receiver.record_rules = ()

EksSpec.record_fields = (
    ("mode", "mode", _s.literal("rlobs", "ai-on-eks"), "rlobs"),
    ("cluster", "cluster", _s.record(EksCluster), _s.REQUIRED),
    ("gitops", "gitops", _s.record(GitOps), _s.REQUIRED),
    ("metrics_pipeline", "metricsPipeline", _s.literal("otel-collector", "prometheus-exporter"), "otel-collector"),
    (
        "prometheus",
        "prometheus",
        _s.record(PrometheusSettings),
        _s.make(
            PrometheusSettings,
            (
                "15d",
                "50Gi",
                "gp3",
                _s.make(
                    Resources,
                    (
                        "500m",
                        "2Gi",
                    ),
                    ("cpu", "memory"),
                ),
                _s.make(
                    Resources,
                    (
                        "2",
                        "8Gi",
                    ),
                    ("cpu", "memory"),
                ),
            ),
            (),
        ),
    ),
    (
        "grafana",
        "grafana",
        _s.record(GrafanaSettings),
        _s.make(
            GrafanaSettings,
            (
                "grafana-admin",
                (),
            ),
            (),
        ),
    ),
    (
        "opensearch",
        "opensearch",
        _s.record(OpenSearchSettings),
        _s.make(
            OpenSearchSettings,
            (
                "opensearch-admin-credentials",
                "opensearch-securityconfig",
                "opensearch-log-writer",
                "30Gi",
                3,
            ),
            (),
        ),
    ),
    ("alertmanager_receivers", "alertmanagerReceivers", _s.tuple_of(_s.record(Receiver)), ()),
    ("dcgm_exporter", "dcgmExporter", _s.boolean, True),
    ("kuberay_operator", "kuberayOperator", _s.boolean, True),
    ("ray_logs", "rayLogs", _s.boolean, True),
    (
        "terraform_variables",
        "terraformVariables",
        _s.before(
            declared_variables,
            _s.dict_of(
                _s.text,
                _s.union(
                    _s.boolean,
                    _s.integer,
                    _s.number,
                    _s.text,
                    _s.tuple_of(_s.text),
                    _s.dict_of(_s.text, _s.union(_s.boolean, _s.integer, _s.number, _s.text)),
                ),
            ),
        ),
        _s.Factory(dict),
    ),
    ("helm_values", "helmValues", _s.dict_of(_s.text, _s.dict_of(_s.text, _s.anything)), _s.Factory(dict)),
)
EksSpec.record_keys = frozenset(
    [
        "alertmanagerReceivers",
        "cluster",
        "dcgmExporter",
        "gitops",
        "grafana",
        "helmValues",
        "kuberayOperator",
        "metricsPipeline",
        "mode",
        "opensearch",
        "prometheus",
        "rayLogs",
        "terraformVariables",
    ]
)
EksSpec.record_rules = (
    "_stack_settings_need_rlobs_mode",
    "_receivers_fit_the_mode",
    "_receiver_names",
    "_helm_values",
    "_terraform_variables",
)

EksProfile.record_fields = (
    *ProfileBase.record_fields[:3],
    ("target", "target", _s.literal("eks"), _s.REQUIRED),
    *ProfileBase.record_fields[4:],
    ("eks", "eks", _s.record(EksSpec), _s.REQUIRED),
)
EksProfile.record_keys = frozenset(["alerts", "apiVersion", "eks", "kind", "metadata", "target", "workload"])
EksProfile.record_rules = ()

WorkloadIdentity.record_fields = (
    ("kubernetes_service_account", "kubernetesServiceAccount", _s.after(_s.text, _M0), _s.REQUIRED),
    ("gcp_service_account", "gcpServiceAccount", _s.optional(_s.after(_s.text, _M15)), None),
)
WorkloadIdentity.record_keys = frozenset(["gcpServiceAccount", "kubernetesServiceAccount"])
WorkloadIdentity.record_rules = ()

ChannelRoute.record_fields = (
    ("name", "name", _s.after(_s.text, _M16), _s.REQUIRED),
    (
        "severities",
        "severities",
        _s.tuple_of(_s.literal("critical", "warning", "info")),
        (
            "critical",
            "warning",
        ),
    ),
)
ChannelRoute.record_keys = frozenset(["name", "severities"])
ChannelRoute.record_rules = ()

DashboardFilter.record_fields = (
    ("label", "label", _s.after(_s.text, _M17), _s.REQUIRED),
    ("type", "type", _s.literal("metric", "resource", "user-metadata", "system-metadata"), "metric"),
    ("value", "value", _s.optional(_s.after(_s.text, _M2)), None),
)
DashboardFilter.record_keys = frozenset(["label", "type", "value"])
DashboardFilter.record_rules = ()

GkeSpec.record_fields = (
    ("project", "project", _s.after(_s.text, project_id), _s.REQUIRED),
    ("location", "location", _s.after(_s.text, _M18), _s.REQUIRED),
    ("cluster", "cluster", _s.after(_s.text, _M19), _s.REQUIRED),
    ("cluster_mode", "clusterMode", _s.literal("existing", "create-standard", "create-autopilot"), "existing"),
    ("naming", "naming", _s.literal("telemetry-api", "gmp-collector"), "telemetry-api"),
    ("collector_endpoint", "collectorEndpoint", _s.optional(_s.after(_s.text, _M20)), None),
    ("logs", "logs", _s.boolean, False),
    ("instrumentation_resource", "instrumentationResource", _s.boolean, False),
    ("workload_identity", "workloadIdentity", _s.optional(_s.record(WorkloadIdentity)), None),
    ("notification_channels", "notificationChannels", _s.tuple_of(_s.before(named, _s.record(ChannelRoute))), ()),
    ("user_labels", "userLabels", _s.dict_of(_s.text, _s.text), _s.Factory(dict)),
    ("dashboard_filters", "dashboardFilters", _s.tuple_of(_s.record(DashboardFilter)), ()),
    ("manage", "manage", _s.literal("scripts", "terraform"), "scripts"),
    ("deletion_protection", "deletionProtection", _s.optional(_s.boolean), None),
)
GkeSpec.record_keys = frozenset(
    [
        "cluster",
        "clusterMode",
        "collectorEndpoint",
        "dashboardFilters",
        "deletionProtection",
        "instrumentationResource",
        "location",
        "logs",
        "manage",
        "naming",
        "notificationChannels",
        "project",
        "userLabels",
        "workloadIdentity",
    ]
)
GkeSpec.record_rules = ("_filters_once", "_user_labels", "_cluster_rules")

GkeProfile.record_fields = (
    *ProfileBase.record_fields[:3],
    ("target", "target", _s.literal("gke"), _s.REQUIRED),
    *ProfileBase.record_fields[4:],
    ("gke", "gke", _s.record(GkeSpec), _s.REQUIRED),
)
GkeProfile.record_keys = frozenset(["alerts", "apiVersion", "gke", "kind", "metadata", "target", "workload"])
GkeProfile.record_rules = ("_workload_on_gke",)
