"""GKE with Managed OpenTelemetry: plan the bundle (scripts, Terraform, workload component, monitoring JSON, app)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlobs.bundle.spec import FileSpec, Plan
from rlobs.profile.model import Profile
from rlobs.rl import app, naming, workloads
from rlobs.rl.catalog import Catalog
from rlobs.targets.gke import monitoring, project, workload

SCRIPTS = (
    "01-enable-apis.sh",
    "02-enable-managed-otel.sh",
    "03-grant-iam.sh",
    "04-deploy-monitoring.sh",
    "05-verify.sh",
)
DASHBOARDS_DIR = "monitoring/dashboards"
POLICIES_DIR = "monitoring/alert-policies"
WORKLOAD_DIR = "workload"
# User label on every dashboard and alert policy of a bundle (value: metadata.name, a DNS label, so a valid label
# value): step 4 deletes the labelled ones the bundle no longer has. Dashboard.labels and AlertPolicy.userLabels are
# both string maps (monitoring v1 and v3 discovery).
BUNDLE_LABEL = "rlobs_bundle"


@dataclass(frozen=True, slots=True)
class Deployable:
    """A dashboard or alert policy file and the gcloud --filter that finds it by display name."""

    path: str
    display_name: str
    filter: str


def equals(key: str, value: str) -> str:
    """A gcloud --filter true only where `key` is exactly `value`. Not `key=value`: gcloud warns that `=` is moving
    to word matching, under which rlobs_bundle="rl-gke" would also match rl-gke-2; `gcloud topic filters` gives
    `key <= value AND key >= value` as the equality test."""
    quoted = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{key}>={quoted} AND {key}<={quoted}"


def _monitoring(profile: Profile, catalog: Catalog) -> tuple[list[FileSpec], list[Deployable], list[Deployable]]:
    gke, name = project.gke(profile), profile.metadata.name
    files: list[FileSpec] = []
    dashboard = monitoring.dashboard(profile, catalog)
    dashboard = {**dashboard, "labels": {**dashboard.get("labels", {}), BUNDLE_LABEL: name}}
    path = f"{DASHBOARDS_DIR}/{name}.json"
    files.append(FileSpec(path, "json", data=dashboard))
    dashboards = [Deployable(path, dashboard["displayName"], equals("displayName", dashboard["displayName"]))]
    policies: list[Deployable] = []
    if profile.alerts.enabled:
        for stem, policy in monitoring.alert_policies(profile, catalog):
            policy = {**policy, "userLabels": {**policy.get("userLabels", {}), BUNDLE_LABEL: name}}
            if gke.notification_channels and not policy.get("notificationChannels"):
                policy = {**policy, "notificationChannels": list(gke.notification_channels)}
            path = f"{POLICIES_DIR}/{stem}.json"
            files.append(FileSpec(path, "json", data=policy))
            policies.append(Deployable(path, policy["displayName"], equals("displayName", policy["displayName"])))
    return files, dashboards, policies


def _workload(profile: Profile, catalog: Catalog) -> list[FileSpec]:
    gke = project.gke(profile)
    header = f"Kustomize Component of profile {profile.metadata.name}: add `components: [<path to this folder>]`"
    files = [
        FileSpec(f"{WORKLOAD_DIR}/kustomization.yaml", "yaml", data=workload.kustomization(profile), header=header),
        FileSpec(
            f"{WORKLOAD_DIR}/{workloads.ENV_PATCH_FILE}",
            "yaml",
            data=workload.patch(profile, catalog),
            header=f"Points {profile.workload.kind} {profile.workload.name}'s OTLP exporters at the managed collector.",
        ),
    ]
    schema = workloads.openapi(profile.workload.kind)
    if schema is not None:
        files.append(FileSpec(f"{WORKLOAD_DIR}/{workloads.OPENAPI_FILE}", "json", data=schema))
    if gke.instrumentation_resource:
        files.append(
            FileSpec(
                f"{WORKLOAD_DIR}/{workload.INSTRUMENTATION_FILE}",
                "yaml",
                data=workload.instrumentation(profile),
                header=(
                    "Managed OpenTelemetry's Instrumentation resource (Preview; see README.md for its caveats).\n"
                    "Applies only after Managed OpenTelemetry is enabled, and only to pods created afterwards."
                ),
            )
        )
    return files


def _terraform(profile: Profile, context: dict[str, Any]) -> list[FileSpec]:
    gke, identity = project.gke(profile), project.identity(profile)
    # Only the inputs main.tf reads for this profile: the cluster's name and location only when Terraform creates
    # it, the service accounts only for the identity that names them (a declared but unused variable is dead input).
    tfvars: dict[str, Any] = {"project_id": gke.project}
    if gke.cluster_mode != "existing":
        tfvars |= {"location": gke.location, "cluster_name": gke.cluster}
    tfvars["namespace"] = profile.workload.namespace
    if identity.mode in ("gsa", "ksa"):
        tfvars["kubernetes_service_account"] = identity.ksa
    if identity.mode == "gsa":
        tfvars["gcp_service_account"] = identity.gsa
    tfvars |= {"services": list(project.apis(profile)), "writer_roles": list(project.roles(profile))}
    descriptions = {
        "project_id": "GCP project ID.",
        "location": "Region or zone of the GKE cluster.",
        "cluster_name": "Name of the GKE cluster.",
        "namespace": "Kubernetes namespace of the RL workload.",
        "kubernetes_service_account": "Kubernetes ServiceAccount of the workload.",
        "gcp_service_account": "Google service account the workload acts as.",
        "services": "Google Cloud APIs to enable.",
        "writer_roles": "Roles the workload's identity gets to write metrics, traces (and logs).",
    }
    variables = [
        {"name": k, "type": "list(string)" if isinstance(v, list) else "string", "description": descriptions[k]}
        for k, v in tfvars.items()
    ]
    return [
        FileSpec("terraform/main.tf", "text", template="gke/terraform/main.tf.j2", context=context),
        FileSpec(
            "terraform/variables.tf",
            "text",
            template="gke/terraform/variables.tf.j2",
            context={**context, "variables": variables},
        ),
        FileSpec(
            "terraform/terraform.tfvars",
            "hcl",
            data=tfvars,
            header=f"Values of profile {profile.metadata.name} for main.tf (terraform init && terraform apply).",
        ),
    ]


def plan(profile: Profile, catalog: Catalog) -> Plan:
    gke = project.gke(profile)
    pipeline = naming.pipeline_for(profile)
    monitoring_files, dashboards, policies = _monitoring(profile, catalog)
    context: dict[str, Any] = {
        "profile": profile,
        "gke": gke,
        "apis": project.apis(profile),
        "roles": project.roles(profile),
        "identity": project.identity(profile),
        "min_gke": project.MIN_GKE_VERSION,
        "min_gcloud": project.MIN_GCLOUD_VERSION,
        "scope": project.OTEL_SCOPE,
        "google_beta_version": project.GOOGLE_BETA_VERSION,
        "terraform_version": project.TERRAFORM_VERSION,
        "collector_name": workload.COLLECTOR_NAME,
        "collector_namespace": workload.COLLECTOR_NAMESPACE,
        "endpoint_resolved": workload.RESOLVED_ENDPOINT,
        "dashboards": dashboards,
        "policies": policies,
        # What step 4 lists before deploying, to delete afterwards what this bundle no longer has.
        "bundle_dashboards": equals(f"labels.{BUNDLE_LABEL}", profile.metadata.name),
        "bundle_policies": equals(f"userLabels.{BUNDLE_LABEL}", profile.metadata.name),
        "steps": SCRIPTS,
        "pipeline": pipeline,
        "example_query": _example_query(profile, catalog, pipeline),
        "env": workload.container_env(profile, catalog),
    }
    files = [
        FileSpec(f"scripts/{name}", "sh", template=f"gke/scripts/{name}.j2", context=context, executable=True)
        for name in SCRIPTS
    ]
    files.append(
        FileSpec("scripts/setup.sh", "sh", template="gke/scripts/setup.sh.j2", context=context, executable=True)
    )
    files += _terraform(profile, context)
    files += _workload(profile, catalog)
    files += monitoring_files
    files += app.app_files(profile, catalog, pipeline)
    context["metrics"] = [
        {
            "name": m.name,
            "type": naming.monitoring_type(m, pipeline),
            "promql": naming.selector(m, pipeline, "bucket" if m.kind == "histogram" else ""),
        }
        for m in catalog.metrics
    ]
    context["files"] = [(f.path, _describe(f.path)) for f in sorted(files, key=lambda f: f.path)]
    files.append(FileSpec("README.md", "md", template="gke/README.md.j2", context=context))
    return Plan(profile.metadata.name, tuple(files))


_DESCRIPTIONS = {
    "scripts/setup.sh": "Runs steps 01-05 in order (`--dry-run` prints them).",
    "scripts/01-enable-apis.sh": "Enables the Google Cloud APIs.",
    "scripts/02-enable-managed-otel.sh": "Enables Managed OpenTelemetry (creating the cluster if the profile says so).",
    "scripts/03-grant-iam.sh": "Grants the workload's identity the roles to write telemetry.",
    "scripts/04-deploy-monitoring.sh": "Creates or updates the dashboards and alert policies; deletes stale ones.",
    "scripts/05-verify.sh": "Checks the managed collector and prints where the data shows up.",
    "terraform/main.tf": "Steps 1-3 and the dashboards as Terraform (google-beta provider).",
    "terraform/variables.tf": "Inputs of main.tf.",
    "terraform/terraform.tfvars": "This profile's values for main.tf.",
    f"{WORKLOAD_DIR}/kustomization.yaml": "Kustomize Component to include from your workload's kustomization.",
    f"{WORKLOAD_DIR}/{workloads.ENV_PATCH_FILE}": "Adds the OTLP and RL env to the RL container.",
    f"{WORKLOAD_DIR}/{workloads.OPENAPI_FILE}": "Merge keys for the CRD's lists, so the patch merges them by name.",
    f"{WORKLOAD_DIR}/{workload.INSTRUMENTATION_FILE}": "The managed Instrumentation resource (Preview).",
}


def _describe(path: str) -> str:
    if path in _DESCRIPTIONS:
        return _DESCRIPTIONS[path]
    if path.startswith(DASHBOARDS_DIR):
        return "Cloud Monitoring dashboard (deployed by step 4 or Terraform)."
    if path.startswith(POLICIES_DIR):
        return "Cloud Monitoring alert policy (deployed by step 4)."
    return app.DESCRIPTIONS[path]


def _example_query(profile: Profile, catalog: Catalog, pipeline: naming.Pipeline) -> str:
    loop = catalog.metric("loop_duration")
    selector = naming.selector(loop, pipeline, "count", {catalog.attribute("run_id").name: profile.workload.run_id})
    return f"sum(rate({selector}[5m]))"
