"""The GCP project set-up for GKE Managed OpenTelemetry: APIs, cluster flags, IAM roles and principals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rlobs.targets.gke.profile import GkeProfile

# GKE version that ships Managed OpenTelemetry, and the gcloud that has --managed-otel-scope on GA
# `clusters create / create-auto / update` (shared gke-managed-otel.md §1.1; gcloud 576.0.0 release notes).
MIN_GKE_VERSION = "1.34.1-gke.2178000"
MIN_GCLOUD_VERSION = "576.0.0"
OTEL_SCOPE = "COLLECTION_AND_INSTRUMENTATION_COMPONENTS"
# google_container_cluster.managed_opentelemetry_config exists on google-beta from 7.17.0 (Google's Terraform
# sample gke_standard_regional_with_managed_otel). `< 8`: a major release may make breaking changes
# (https://googlecloudplatform.github.io/magic-modules/develop/breaking-changes/make-a-breaking-change), and 8.0
# makes monitoring_config.enable_components a set. Written as a range, not `~> 7.17`, so the bound is explicit.
GOOGLE_BETA_VERSION = ">= 7.17, < 8"
# Terraform 1.x keeps its compatibility promise within 1.x; main.tf needs nothing newer than 1.3.
TERRAFORM_VERSION = "~> 1.3"

# The RL tutorial enables container, monitoring, cloudtrace and telemetry; the how-to adds logging for OTLP logs.
BASE_APIS = (
    "cloudtrace.googleapis.com",
    "container.googleapis.com",
    "monitoring.googleapis.com",
    "telemetry.googleapis.com",
)
LOGGING_API = "logging.googleapis.com"
# Creating the workload's Google service account (gke.workloadIdentity.gcpServiceAccount) needs the IAM API.
IAM_API = "iam.googleapis.com"

# Writer roles for the workload's identity. monitoring.metricWriter and cloudtrace.agent are what reports of
# PermissionDenied were fixed with (shared gke-managed-otel.md §1.6); the Telemetry API's own writer roles
# (https://cloud.google.com/iam/docs/roles-permissions/telemetry) cover the OTLP path the managed collector uses.
BASE_ROLES = (
    "roles/cloudtrace.agent",
    "roles/monitoring.metricWriter",
    "roles/telemetry.metricsWriter",
    "roles/telemetry.tracesWriter",
)
LOGGING_ROLES = ("roles/logging.logWriter",)


@dataclass(frozen=True, slots=True)
class Identity:
    """Who gets the writer roles: a Google service account, one KSA, or every KSA of the namespace."""

    mode: Literal["gsa", "ksa", "namespace"]
    member: str  # IAM member; PROJECT_NUMBER stands for the project's number where the principal needs it
    gsa: str  # the Google service account email ("" unless mode is gsa)
    ksa: str  # the Kubernetes ServiceAccount ("" for mode namespace)
    wi_member: str  # the member granted roles/iam.workloadIdentityUser on the GSA ("" unless mode is gsa)
    gsa_id: str = ""  # the GSA's account ID, the email's part before @ ("" unless mode is gsa)
    gsa_project: str = ""  # the project the GSA lives in, named by its email's domain ("" unless mode is gsa)


def apis(profile: GkeProfile) -> tuple[str, ...]:
    gsa = (IAM_API,) if identity(profile).mode == "gsa" else ()
    return tuple(sorted(BASE_APIS + ((LOGGING_API,) if profile.gke.logs else ()) + gsa))


def roles(profile: GkeProfile) -> tuple[str, ...]:
    return tuple(sorted(BASE_ROLES + (LOGGING_ROLES if profile.gke.logs else ())))


def identity(profile: GkeProfile) -> Identity:
    # https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity#principal-identifiers
    spec, ns = profile.gke, profile.workload.namespace
    pool = f"{spec.project}.svc.id.goog"
    prefix = f"iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/workloadIdentityPools/{pool}"
    wi = spec.workload_identity
    if wi is None:
        return Identity("namespace", f"principalSet://{prefix}/namespace/{ns}", "", "", "")
    ksa = wi.kubernetes_service_account
    if wi.gcp_service_account is not None:
        gsa = wi.gcp_service_account
        # User-managed service accounts are ID@PROJECT.iam.gserviceaccount.com
        # (https://cloud.google.com/iam/docs/service-account-types#user-managed).
        account, _, domain = gsa.partition("@")
        project = domain.removesuffix(".iam.gserviceaccount.com")
        return Identity(
            "gsa", f"serviceAccount:{gsa}", gsa, ksa, f"serviceAccount:{pool}[{ns}/{ksa}]", account, project
        )
    return Identity("ksa", f"principal://{prefix}/subject/ns/{ns}/sa/{ksa}", "", ksa, "")
