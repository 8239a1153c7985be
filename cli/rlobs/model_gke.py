"""The `gke:` section of a profile: GCP project, cluster and Cloud Monitoring settings."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from rlobs.fields import DnsLabel, Model, matching

# https://cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin
ProjectId = Annotated[
    str,
    AfterValidator(
        matching(
            r"[a-z][a-z0-9-]{4,28}[a-z0-9]",
            "a GCP project ID (6-30 lowercase letters, digits and '-', starting with a letter, "
            "not ending with '-') like rl-obs-dev",
        )
    ),
]
# Regions (us-central1) and zones (us-central1-a): https://cloud.google.com/compute/docs/regions-zones
Location = Annotated[
    str,
    AfterValidator(
        matching(r"[a-z]+(-[a-z]+)+[0-9]+(-[a-z])?", "a GCP region or zone like us-central1 or us-central1-a")
    ),
]
# https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster.FIELDS.name
ClusterName = Annotated[
    str,
    AfterValidator(
        matching(
            r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?",
            "a GKE cluster name (1-40 lowercase letters, digits and '-', starting with a letter, "
            "not ending with '-') like rl-cluster",
        )
    ),
]
NotificationChannel = Annotated[
    str,
    AfterValidator(
        matching(
            r"projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/notificationChannels/[0-9]+",
            "a notification channel name like projects/my-project/notificationChannels/123",
        )
    ),
]
ServiceAccountEmail = Annotated[
    str,
    AfterValidator(
        matching(
            r"[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com",
            "a service account email like rl-trainer@my-project.iam.gserviceaccount.com",
        )
    ),
]


class WorkloadIdentity(Model):
    kubernetes_service_account: DnsLabel = Field(description="The Kubernetes ServiceAccount the workload runs as.")
    gcp_service_account: ServiceAccountEmail | None = Field(
        None,
        description="Bind to this Google service account; when unset, roles go to the KSA principal directly.",
    )


class GkeSpec(Model):
    project: ProjectId
    location: Location
    cluster: ClusterName
    cluster_mode: Literal["existing", "create-standard", "create-autopilot"] = Field(
        "existing", description="Enable managed OpenTelemetry on an existing cluster, or create one with it."
    )
    naming: Literal["telemetry-api", "gmp-collector"] = Field(
        "telemetry-api",
        description="How metric names reach Cloud Monitoring: managed OTel keeps dots (telemetry-api); "
        "a self-run collector with the googlemanagedprometheus exporter underscores them (gmp-collector).",
    )
    logs: bool = Field(False, description="Also enable the Cloud Logging API.")
    instrumentation_resource: bool = Field(
        False, description="Also render the managed `Instrumentation` resource (Preview) for the namespace."
    )
    workload_identity: WorkloadIdentity | None = None
    notification_channels: tuple[NotificationChannel, ...] = Field(
        (), description="Channels the alert policies notify."
    )
