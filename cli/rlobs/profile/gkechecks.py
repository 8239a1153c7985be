"""The `gke:` section's rules as plain functions and constants, without pydantic (rlobs.profile.checks says why)."""

from __future__ import annotations

import re
from typing import Literal, Protocol

from rlobs.profile.checks import duration_seconds
from rlobs.profile.problems import ProblemAt


class Workload(Protocol):
    """What the workload rules read (the model's Workload and its record both have it)."""

    @property
    def export_interval(self) -> str: ...

    @property
    def namespace(self) -> str: ...


PROJECT = re.compile(r"[a-z][a-z0-9-]{4,28}[a-z0-9]")
PROJECT_EXPECTED = (
    "a GCP project ID (6-30 lowercase letters, digits and '-', starting with a letter, not ending with '-', "
    "without 'google' or 'ssl') like rl-obs-dev"
)


def project_id(value: str) -> str:
    # https://cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin: 6-30 characters,
    # lowercase letters, digits, hyphens; starts with a letter; no trailing hyphen; cannot contain restricted
    # strings such as google, null, undefined and ssl.
    if not PROJECT.fullmatch(value) or "google" in value or "ssl" in value or value in {"undefined", "null"}:
        raise ValueError(f"expected {PROJECT_EXPECTED}")
    return value


# Regions (us-central1, northamerica-northeast1) and zones (us-central1-a):
# https://cloud.google.com/compute/docs/regions-zones (a zone is its region plus "-" and one letter).
REGION = r"[a-z]+(-[a-z]+)+[0-9]{1,2}"
LOCATION = f"{REGION}(-[a-z])?"
# https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.notificationChannels: the project part is an ID or
# a number.
CHANNEL = r"projects/([a-z][a-z0-9-]{4,28}[a-z0-9]|[0-9]+)/notificationChannels/[0-9]+"

# What a filter filters on, as the profile says it; targets/gke/monitoring.py maps each to DashboardFilter.filterType.
FilterType = Literal["metric", "resource", "user-metadata", "system-metadata"]

# Namespaces Kubernetes and GKE manage: `kube-` is reserved for Kubernetes system namespaces
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/), and GKE runs its own components
# (gke-managed-otel, gke-gmp-system, gmp-system...) in namespaces Autopilot refuses workloads in.
SYSTEM_NAMESPACE = re.compile(r"kube-.*|gke-.*|gmp-system|gmp-public")

# Managed OpenTelemetry accepts metric export intervals of 5000-300000 ms (OTEL_METRIC_EXPORT_INTERVAL as the
# Instrumentation resource injects it; shared gke-managed-otel.md §1.5). Cloud Monitoring also rejects points
# written more often than every 5 s per series.
MIN_EXPORT_SECONDS = 5
MAX_EXPORT_SECONDS = 300


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


def label_problems(labels: dict[str, str]) -> list[ProblemAt]:
    problems = []
    for key, value in labels.items():
        if key in OWNED_LABELS:
            problems.append(
                ProblemAt(
                    ("userLabels", key),
                    f"expected a label of your own, not one rlobs sets ({OWNED_LABELS[key]}), got {key!r}",
                )
            )
        elif not LABEL_KEY.fullmatch(key):
            problems.append(
                ProblemAt(
                    ("userLabels", key),
                    "expected a Cloud Monitoring label key (at most 63 "
                    f"lowercase letters, digits, '_' and '-', starting with a letter), got {key!r}",
                )
            )
        if not isinstance(value, str) or not LABEL_VALUE.fullmatch(value):
            problems.append(
                ProblemAt(
                    ("userLabels", key),
                    "expected a Cloud Monitoring label value (at most 63 "
                    f"lowercase letters, digits, '_' and '-'; quote numbers), got {value!r}",
                )
            )
    if len(labels) + len(OWNED_LABELS) > MAX_USER_LABELS:
        problems.append(
            ProblemAt(
                ("userLabels",),
                f"expected at most {MAX_USER_LABELS - len(OWNED_LABELS)} labels "
                f"(Cloud Monitoring allows {MAX_USER_LABELS}, rlobs sets {len(OWNED_LABELS)}), got "
                f"{len(labels)}",
            )
        )
    return problems


def named(value: object) -> object:
    """A bare channel name is the short form of `{name: ...}` with the default severities."""
    return {"name": value} if isinstance(value, str) else value


def workload_problems(workload: Workload) -> list[ProblemAt]:
    """Rules GKE and Managed OpenTelemetry put on the workload; paths relative to the profile root."""
    problems = []
    seconds = duration_seconds(workload.export_interval)
    if not MIN_EXPORT_SECONDS <= seconds <= MAX_EXPORT_SECONDS:
        problems.append(
            ProblemAt(
                ("workload", "exportInterval"),
                f"expected {MIN_EXPORT_SECONDS}s to {MAX_EXPORT_SECONDS // 60}m on the gke target (Managed "
                f"OpenTelemetry accepts 5000-300000 ms), got {workload.export_interval!r}",
            )
        )
    if SYSTEM_NAMESPACE.fullmatch(workload.namespace):
        problems.append(
            ProblemAt(
                ("workload", "namespace"),
                "expected a namespace of your own, not one Kubernetes or GKE manages "
                f"(kube-*, gke-*, gmp-system, gmp-public), got {workload.namespace!r}",
            )
        )
    return problems
