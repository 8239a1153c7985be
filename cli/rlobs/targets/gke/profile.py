"""A profile of the gke target: the `gke:` section and the rules GCP and Managed OpenTelemetry put on a profile."""

# No `from __future__ import annotations` here: pydantic would eval() each field's annotation string when it builds
# the classes, which made building them about a tenth slower (a profile's classes are built on every cold start).

import re
from typing import Annotated, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema, model_validator

from rlobs.profile.fields import (
    DEFAULT_SEVERITIES,
    AttrValue,
    DnsLabel,
    Model,
    Severity,
    duration_seconds,
    matching,
    with_json_pattern,
)
from rlobs.profile.model import ProfileBase
from rlobs.profile.problems import ProblemAt, raise_all, repeats
from rlobs.profile.regions import listed, pinned

_PROJECT = re.compile(r"[a-z][a-z0-9-]{4,28}[a-z0-9]")
_PROJECT_EXPECTED = (
    "a GCP project ID (6-30 lowercase letters, digits and '-', starting with a letter, not ending with '-', "
    "without 'google' or 'ssl') like rl-obs-dev"
)


def _project_id(value: str) -> str:
    # https://cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin: 6-30 characters,
    # lowercase letters, digits, hyphens; starts with a letter; no trailing hyphen; cannot contain restricted
    # strings such as google, null, undefined and ssl.
    if not _PROJECT.fullmatch(value) or "google" in value or "ssl" in value or value in {"undefined", "null"}:
        raise ValueError(f"expected {_PROJECT_EXPECTED}")
    return value


# The same rule for editors: no restricted word anywhere, not exactly undefined or null.
_PROJECT_JSON = r"(?!.*(google|ssl))(?!(undefined|null)$)" + _PROJECT.pattern
ProjectId = Annotated[str, AfterValidator(with_json_pattern(_project_id, _PROJECT_JSON, expected=_PROJECT_EXPECTED))]

# Regions (us-central1, northamerica-northeast1) and zones (us-central1-a):
# https://cloud.google.com/compute/docs/regions-zones (a zone is its region plus "-" and one letter).
REGION = r"[a-z]+(-[a-z]+)+[0-9]{1,2}"
LOCATION = f"{REGION}(-[a-z])?"
_LOCATION_EXPECTED = "a GCP region or zone like us-central1 or us-central1-a"


def _real_location(value: str) -> str:
    # A zone is one of its region's zones (us-central1-z is none); a region whose zones no source lists suggests itself.
    table = pinned("gcp_locations.json")
    regions: dict[str, list[str]] = table["regions"]
    region = value.rsplit("-", 1)[0]
    if value in regions or region not in regions:
        names = [*regions, *(zone for zones in regions.values() for zone in zones)]
    else:
        names = regions[region] or [region]
    return listed(value, names, _LOCATION_EXPECTED, "regions and zones", table["source"])


# The list holds only names the pattern takes, so the list check is the model's rule and the pattern the editor's.
Location = Annotated[
    str, AfterValidator(with_json_pattern(_real_location, LOCATION, max_len=40, expected=_LOCATION_EXPECTED))
]
# https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster.FIELDS.name:
# lowercase letters, numbers and hyphens; starts with a letter; ends with a letter or number; 1-40 characters.
_CLUSTER_EXPECTED = (
    "a GKE cluster name (1-40 lowercase letters, digits and '-', starting with a letter, not ending with '-') like "
    "rl-cluster"
)
ClusterName = Annotated[str, AfterValidator(matching(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?", _CLUSTER_EXPECTED))]
# https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.notificationChannels: the project part is an ID or
# a number.
_CHANNEL = r"projects/([a-z][a-z0-9-]{4,28}[a-z0-9]|[0-9]+)/notificationChannels/[0-9]+"
_CHANNEL_EXPECTED = "a notification channel name like projects/my-project/notificationChannels/123"
NotificationChannel = Annotated[str, AfterValidator(matching(_CHANNEL, _CHANNEL_EXPECTED))]
# Service account IDs are 6-30 characters: https://cloud.google.com/iam/docs/service-accounts-create#creating
_GSA = r"[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com"
_GSA_EXPECTED = "a service account email like rl-trainer@my-project.iam.gserviceaccount.com"
ServiceAccountEmail = Annotated[str, AfterValidator(matching(_GSA, _GSA_EXPECTED))]

# Namespaces Kubernetes and GKE manage: `kube-` is reserved for Kubernetes system namespaces
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/), and GKE runs its own components
# (gke-managed-otel, gke-gmp-system, gmp-system...) in namespaces Autopilot refuses workloads in.
SYSTEM_NAMESPACE = re.compile(r"kube-.*|gke-.*|gmp-system|gmp-public")

# Managed OpenTelemetry accepts metric export intervals of 5000-300000 ms (OTEL_METRIC_EXPORT_INTERVAL as the
# Instrumentation resource injects it; shared gke-managed-otel.md §1.5). Cloud Monitoring also rejects points
# written more often than every 5 s per series.
MIN_EXPORT_SECONDS = 5
MAX_EXPORT_SECONDS = 300


# An in-cluster OTLP/gRPC endpoint: an explicit scheme (workload.ENDPOINT says why), a host and an optional port only.
_OTLP = r"https?://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?"
_OTLP_EXPECTED = "an OTLP endpoint like http://otel-collector.observability.svc.cluster.local:4317"
OtlpEndpoint = Annotated[str, AfterValidator(matching(_OTLP, _OTLP_EXPECTED, 253))]


# Cloud Monitoring user labels (AlertPolicy.userLabels, Dashboard.labels): at most 64; keys and values at most 63
# lowercase letters, digits, '_' and '-', keys starting with a letter
# (https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.alertPolicies, field userLabels).
LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
LABEL_VALUE = re.compile(r"[a-z0-9_-]{0,63}")
MAX_USER_LABELS = 64
# Labels rlobs puts on every dashboard and policy (targets/gke/monitoring.py): the scripts find and prune by them.
OWNED_LABELS = {
    "rlobs": "marks rlobs' dashboards",
    "rlobs_bundle": "step 4 finds and prunes the bundle's dashboards and policies by it",
    "rl_alert": "names the RL alert of each policy",
}


class ChannelRoute(Model):
    """A notification channel and the alert severities it gets."""

    name: NotificationChannel
    severities: tuple[Severity, ...] = Field(
        DEFAULT_SEVERITIES["channel"], description="Severities of the policies that notify it."
    )


def _named(value: object) -> object:
    return {"name": value} if isinstance(value, str) else value


_CHANNEL_PATTERN = f"^(?:{_CHANNEL})$"
# Editors see both forms; the model holds one (a bare name becomes a ChannelRoute before validation).
Channel = Annotated[
    ChannelRoute,
    BeforeValidator(_named),
    WithJsonSchema(
        {
            "anyOf": [
                {
                    "type": "string",
                    "pattern": _CHANNEL_PATTERN,
                    "description": "A notification channel name (critical and warning policies).",
                },
                {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "pattern": _CHANNEL_PATTERN},
                        "severities": {"type": "array", "items": {"enum": ["critical", "warning", "info"]}},
                    },
                    "required": ["name"],
                    "additionalProperties": False,
                },
            ]
        }
    ),
]


# DashboardFilter.labelKey (monitoring v1): a metric label (PromQL names, or the dotted OpenTelemetry attribute names
# the telemetry-api path keeps) or a label of the monitored resource (prometheus_target: cluster, namespace, ...).
FilterLabel = Annotated[
    str,
    AfterValidator(
        matching(r"[A-Za-z_][A-Za-z0-9_.]{0,99}", "a label key like namespace or team (letters, digits, '_' and '.')")
    ),
]
# What a filter filters on, as the profile says it; targets/gke/monitoring.py maps each to DashboardFilter.filterType.
FilterType = Literal["metric", "resource", "user-metadata", "system-metadata"]


class DashboardFilter(Model):
    """A filter on the bundle's dashboard beside rlobs' own rl.* ones, e.g. a team label or the cluster's location."""

    label: FilterLabel = Field(description="The label key to filter by.")
    type: FilterType = Field(
        "metric",
        description="metric: a metric label; resource: a monitored-resource label (location, instance; not "
        "cluster, namespace or job, which the queries fix to the workload); user-metadata or system-metadata: a "
        "metadata label.",
    )
    value: AttrValue | None = Field(None, description="The value the filter starts at; unset: every value.")


class WorkloadIdentity(Model):
    kubernetes_service_account: DnsLabel = Field(description="The Kubernetes ServiceAccount the workload runs as.")
    gcp_service_account: ServiceAccountEmail | None = Field(
        None,
        description="Bind to this Google service account; when unset, roles go to the KSA principal directly.",
    )


class GkeSpec(Model):
    project: ProjectId = Field(description="GCP project ID of the cluster and of Cloud Monitoring / Cloud Trace.")
    location: Location = Field(
        description="Region or zone of the GKE cluster (Autopilot: a region): one of cli/rlobs/data/gcp_locations.json "
        "(pinned lists of GCP regions and their zones)."
    )
    cluster: ClusterName = Field(description="GKE cluster name.")
    cluster_mode: Literal["existing", "create-standard", "create-autopilot"] = Field(
        "existing", description="Enable managed OpenTelemetry on an existing cluster, or create one with it."
    )
    naming: Literal["telemetry-api", "gmp-collector"] = Field(
        "telemetry-api",
        description="How metric names reach Cloud Monitoring: managed OTel keeps dots (telemetry-api); "
        "a self-run collector with the googlemanagedprometheus exporter underscores them (gmp-collector).",
    )
    collector_endpoint: OtlpEndpoint | None = Field(
        None,
        description="naming gmp-collector only (and required there): the OTLP/gRPC endpoint of your collector with "
        "the googlemanagedprometheus exporter, e.g. http://otel-collector.observability.svc.cluster.local:4317.",
    )
    logs: bool = Field(default=False, description="Also enable the Cloud Logging API and send OTLP logs.")
    instrumentation_resource: bool = Field(
        default=False, description="Also render the managed `Instrumentation` resource (Preview) for the namespace."
    )
    workload_identity: WorkloadIdentity | None = None
    notification_channels: tuple[Channel, ...] = Field(
        (),
        description="Channels the alert policies notify: a channel name gets critical and warning policies; "
        "`{name, severities}` says which severities.",
    )
    user_labels: dict[str, str] = Field(
        default_factory=dict,
        # _user_labels checks them (one located problem per key); editors get the same rules.
        json_schema_extra={
            "propertyNames": {"pattern": f"^(?:{LABEL_KEY.pattern})$"},
            "additionalProperties": {"type": "string", "pattern": f"^(?:{LABEL_VALUE.pattern})$"},
            "maxProperties": MAX_USER_LABELS - len(OWNED_LABELS),
        },
        description="Cloud Monitoring user labels on the dashboard and every alert policy (e.g. team: rl-research), "
        "for routing and search; lowercase keys and values.",
    )
    dashboard_filters: tuple[DashboardFilter, ...] = Field(
        (),
        description="More filters on the dashboard, after rlobs' own (run, algorithm, environment, model, system, "
        "system version), each `{label, type, value}`.",
    )
    manage: Literal["scripts", "terraform"] = Field(
        "scripts",
        description="Who owns the project set-up (APIs, managed OTel, IAM, dashboards, alert policies): the numbered "
        "scripts, or Terraform (terraform/; the scripts then only enable managed OTel on an existing cluster and "
        "verify). Never both.",
    )
    deletion_protection: bool | None = Field(
        None,
        description="Terraform's deletion_protection on the cluster it creates (manage: terraform with clusterMode "
        "create-*; required there): true makes `terraform destroy` fail until it is set to false and applied.",
    )

    def channels_for(self, severity: str) -> list[str]:
        return [c.name for c in self.notification_channels if severity in c.severities]

    @model_validator(mode="after")
    def _filters_once(self) -> Self:
        # Two filters on one label would each narrow the same widgets: the dashboard keeps one per label and type.
        raise_all(
            ProblemAt(("dashboardFilters", i, "label"), f"expected each {kind} label once, got {label!r} again")
            for i, (label, kind) in repeats((f.label, f.type) for f in self.dashboard_filters)
        )
        return self

    @model_validator(mode="after")
    def _user_labels(self) -> Self:
        problems = []
        for key, value in self.user_labels.items():
            at = ("userLabels", key)
            if key in OWNED_LABELS:
                message = f"expected a label of your own, not one rlobs sets ({OWNED_LABELS[key]}), got {key!r}"
                problems.append(ProblemAt(at, message))
            elif not LABEL_KEY.fullmatch(key):
                message = "expected a Cloud Monitoring label key (at most 63 lowercase letters, digits, '_' and '-', "
                problems.append(ProblemAt(at, message + f"starting with a letter), got {key!r}"))
            if not LABEL_VALUE.fullmatch(value):
                message = "expected a Cloud Monitoring label value (at most 63 lowercase letters, digits, '_' and '-'; "
                problems.append(ProblemAt(at, message + f"quote numbers), got {value!r}"))
        if len(self.user_labels) + len(OWNED_LABELS) > MAX_USER_LABELS:
            message = f"expected at most {MAX_USER_LABELS - len(OWNED_LABELS)} labels (Cloud Monitoring allows "
            message += f"{MAX_USER_LABELS}, rlobs sets {len(OWNED_LABELS)}), got {len(self.user_labels)}"
            problems.append(ProblemAt(("userLabels",), message))
        raise_all(problems)
        return self

    @model_validator(mode="after")
    def _cluster_rules(self) -> Self:
        problems = []
        # Autopilot clusters are always regional: https://cloud.google.com/kubernetes-engine/docs/concepts/autopilot-overview
        if self.cluster_mode == "create-autopilot" and not re.fullmatch(REGION, self.location):
            message = "expected a region like us-central1 for clusterMode create-autopilot (Autopilot clusters are "
            problems.append(ProblemAt(("location",), message + f"regional), got the zone {self.location!r}"))
        # google_container_cluster.deletion_protection defaults to true (provider 5.0 upgrade guide), so a
        # Terraform-created cluster needs the choice made; gcloud has no such setting, so elsewhere it is dead input.
        creates = self.manage == "terraform" and self.cluster_mode != "existing"
        if creates and self.deletion_protection is None:
            message = "expected true or false for a cluster Terraform creates (true: terraform destroy fails until "
            message += "it is set to false and applied), got nothing"
            problems.append(ProblemAt(("deletionProtection",), message))
        elif not creates and self.deletion_protection is not None:
            message = (
                "expected no deletionProtection: only a cluster Terraform creates (manage: terraform, clusterMode "
                f"create-*) has it, got {str(self.deletion_protection).lower()} with manage {self.manage} and "
                f"clusterMode {self.cluster_mode}"
            )
            problems.append(ProblemAt(("deletionProtection",), message))
        # The gmp-collector names are what a collector with the googlemanagedprometheus exporter writes; the managed
        # collector keeps dots. So that naming needs the endpoint of such a collector, and only it uses one.
        if self.naming == "gmp-collector" and self.collector_endpoint is None:
            message = "naming is gmp-collector, so expected `collectorEndpoint:` naming the collector with the "
            message += "googlemanagedprometheus exporter that the workload exports to, got none"
            problems.append(ProblemAt(("naming",), message))
        if self.naming != "gmp-collector" and self.collector_endpoint is not None:
            message = "expected no collectorEndpoint with naming telemetry-api (the workload exports to the managed "
            problems.append(ProblemAt(("collectorEndpoint",), message + "collector)"))
        raise_all(problems)
        return self


class GkeProfile(ProfileBase):
    target: Literal["gke"] = Field(description="Which bundle to render.")
    gke: GkeSpec = Field(description="The GCP project, GKE cluster and Cloud Monitoring settings.")

    @model_validator(mode="after")
    def _workload_on_gke(self) -> Self:
        w, problems = self.workload, []
        if not MIN_EXPORT_SECONDS <= duration_seconds(w.export_interval) <= MAX_EXPORT_SECONDS:
            message = f"expected {MIN_EXPORT_SECONDS}s to {MAX_EXPORT_SECONDS // 60}m on the gke target (Managed "
            message += f"OpenTelemetry accepts 5000-300000 ms), got {w.export_interval!r}"
            problems.append(ProblemAt(("workload", "exportInterval"), message))
        if SYSTEM_NAMESPACE.fullmatch(w.namespace):
            message = "expected a namespace of your own, not one Kubernetes or GKE manages (kube-*, gke-*, gmp-system, "
            problems.append(ProblemAt(("workload", "namespace"), message + f"gmp-public), got {w.namespace!r}"))
        raise_all(problems)
        return self
