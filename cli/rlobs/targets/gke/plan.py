"""GKE with Managed OpenTelemetry: plan the bundle (scripts, Terraform, workload component, monitoring JSON, app)."""

from __future__ import annotations

from typing import Any

from rlobs.bundle.gitignore import gitignore
from rlobs.bundle.spec import DataFile, FileSpec, Plan, TemplateFile, file_table
from rlobs.rl import app, naming, workloads
from rlobs.rl import slos as rlslos
from rlobs.rl.catalog import Catalog
from rlobs.rl.facts import RlFacts, rl_facts, run_series, workload_job
from rlobs.targets.gke import monitoring, project, slo, tfpolicy, workload
from rlobs.targets.gke.profile import GkeProfile, GkeSpec
from rlobs.targets.gke.volume import pipeline, volume

DASHBOARDS_DIR = "monitoring/dashboards"
POLICIES_DIR = "monitoring/alert-policies"
WORKLOAD_DIR = "workload"


def equals(key: str, value: str) -> str:
    """A gcloud --filter for `key` exactly `value`: gcloud warns `=` is moving to word matching (rl-gke would match
    rl-gke-2), and `gcloud topic filters` gives `key <= value AND key >= value` as the equality test."""
    quoted = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{key}>={quoted} AND {key}<={quoted}"


def facts(profile: GkeProfile, catalog: Catalog) -> RlFacts:
    # Resource labels of prometheus_target, where every OTLP point lands: cluster <- k8s.cluster.name, namespace <-
    # k8s.namespace.name, job <- service.namespace/service.name (Telemetry API metrics, prometheus_target labels;
    # the workload patch sets all three resource attributes).
    gke = profile.gke
    scope = {"cluster": gke.cluster, "namespace": profile.workload.namespace, "job": workload_job(profile)}
    return rl_facts(profile, catalog, pipeline(profile), scope=scope, cluster=gke.cluster)


def _monitoring(
    rl: RlFacts, gke: GkeSpec, policy_data: list[tuple[str, dict[str, Any]]], slos: slo.SloObjects | None
) -> tuple[list[FileSpec], list[dict[str, str]], list[dict[str, str]]]:
    def by(terraform: str) -> str:
        """Who deploys a monitoring file, per gke.manage (the other path never touches it)."""
        return " (deployed by step 4)." if gke.manage == "scripts" else f" ({terraform})."

    def deployable(path: str, obj: dict[str, Any]) -> dict[str, str]:
        return {"path": path, "display_name": obj["displayName"], "filter": equals("displayName", obj["displayName"])}

    dashboard = monitoring.dashboard(rl, gke.user_labels, gke.dashboard_filters)
    dashboard = slo.with_budget_tile(dashboard, gke.project, rl)
    path = f"{DASHBOARDS_DIR}/{rl.name}.json"
    files: list[FileSpec] = [
        DataFile(path, "json", dashboard, f"Cloud Monitoring dashboard{by('deployed by Terraform')}")
    ]
    dashboards = [deployable(path, dashboard)]
    policies = []
    what = "Cloud Monitoring alert policy" + by(f"the content of {tfpolicy.FILE}")
    for folder, found in ((POLICIES_DIR, policy_data), (slo.SLO_DIR, slos.policies if slos else [])):
        for stem, policy in found:
            path = f"{folder}/{stem}.json"
            files.append(DataFile(path, "json", policy, what))
            policies.append(deployable(path, policy))
    if slos and slos.slo:
        by_what = by(f"the content of {slo.TF_FILE}")
        files.append(DataFile(slo.SERVICE_FILE, "json", slos.service, f"Cloud Monitoring service of the SLOs{by_what}"))
        files.append(DataFile(slo.SLO_FILE, "json", slos.slo, f"The goodput SLO (request-based){by_what}"))
    return files, dashboards, policies


def _workload(profile: GkeProfile, catalog: Catalog) -> list[FileSpec]:
    w = profile.workload
    header = f"Kustomize Component of profile {profile.metadata.name}: add `components: [<path to this folder>]`"
    files: list[FileSpec] = [
        DataFile(
            f"{WORKLOAD_DIR}/kustomization.yaml",
            "yaml",
            workload.kustomization(profile),
            "Kustomize Component to include from your workload's kustomization.",
            header=header,
        ),
        DataFile(
            f"{WORKLOAD_DIR}/{workloads.ENV_PATCH_FILE}",
            "yaml",
            workload.patch(profile, catalog),
            "Adds the OTLP and RL env to the RL container.",
            header=f"Points {w.kind} {w.name}'s OTLP exporters at the managed collector.",
        ),
    ]
    schema_what = "Merge keys for the CRD's lists, so the patch merges them by name."
    env = workload.container_env(profile, catalog)
    files += workloads.beside_patch(w, env, profile.metadata.name, WORKLOAD_DIR, schema_what)
    if profile.gke.instrumentation_resource:
        files.append(
            DataFile(
                f"{WORKLOAD_DIR}/{workload.INSTRUMENTATION_FILE}",
                "yaml",
                workload.instrumentation(profile),
                "The managed Instrumentation resource (Preview).",
                header=(
                    "Managed OpenTelemetry's Instrumentation resource (Preview; see README.md for its caveats).\n"
                    "Applies only after Managed OpenTelemetry is enabled, and only to pods created afterwards."
                ),
            )
        )
    return files


# Inputs of main.tf, in file order, with their descriptions.
_TF_INPUTS = {
    "project_id": "GCP project ID.",
    "location": "Region or zone of the GKE cluster.",
    "cluster_name": "Name of the GKE cluster.",
    "namespace": "Kubernetes namespace of the RL workload.",
    "kubernetes_service_account": "Kubernetes ServiceAccount of the workload.",
    "gcp_service_account": "Google service account the workload acts as.",
    "services": "Google Cloud APIs to enable.",
    "writer_roles": "Roles the workload's identity gets to write metrics, traces (and logs).",
}


def _tfvars(profile: GkeProfile, identity: project.Identity) -> dict[str, Any]:
    """Only the inputs main.tf reads for this profile: a declared but unused variable is dead input."""
    gke = profile.gke
    tfvars: dict[str, Any] = {"project_id": gke.project}
    if gke.cluster_mode != "existing":
        tfvars |= {"location": gke.location, "cluster_name": gke.cluster}
    tfvars["namespace"] = profile.workload.namespace
    accounts = {"kubernetes_service_account": identity.ksa, "gcp_service_account": identity.gsa}  # "": none
    tfvars |= {key: account for key, account in accounts.items() if account}
    return tfvars | {"services": list(project.apis(profile)), "writer_roles": list(project.roles(profile))}


def _terraform(
    profile: GkeProfile,
    context: dict[str, Any],
    policy_data: list[tuple[str, dict[str, Any]]],
    slos: slo.SloObjects | None,
) -> list[FileSpec]:
    if profile.gke.manage != "terraform":
        return []
    tfvars = _tfvars(profile, context["identity"])
    apis = ["google_project_service.apis"]
    policies = tfpolicy.resources(profile.metadata.name, policy_data, apis)
    files: list[FileSpec] = [
        TemplateFile(
            "terraform/main.tf",
            "hcl",
            "gke/terraform/main.tf.j2",
            "APIs, managed OTel (on a cluster it creates), IAM and dashboards (google-beta provider).",
            context,
        ),
        TemplateFile(
            "terraform/variables.tf",
            "hcl",
            "gke/terraform/variables.tf.j2",
            "Inputs of main.tf.",
            {**context, "variables": tf_variables(tfvars, _TF_INPUTS)},
        ),
        DataFile(
            "terraform/terraform.tfvars",
            "hcl",
            tfvars,
            "This profile's values for main.tf.",
            header=f"Values of profile {profile.metadata.name} for main.tf (terraform init && terraform apply).",
        ),
    ]
    if policies:
        what = "The alert policies of monitoring/alert-policies/ as google_monitoring_alert_policy resources."
        files.append(DataFile(tfpolicy.FILE, "json", policies, what))
    if slos:
        what = "The SLOs' service, goodput SLO and burn-rate policies of monitoring/slos/ as Terraform resources."
        files.append(DataFile(slo.TF_FILE, "json", slo.resources(slos, profile.metadata.name, apis), what))
    return files


def tf_variables(values: dict[str, Any], descriptions: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "type": _tf_type(v), "description": descriptions[k]} for k, v in values.items()]


_TF_TYPES = {bool: "bool", str: "string", list: "list(string)"}


def _tf_type(value: Any) -> str:
    """The Terraform type of a tfvars value (maps of objects whose attributes are all alike)."""
    if type(value) in _TF_TYPES:
        return _TF_TYPES[type(value)]
    first = next(iter(value.values()))
    fields = ", ".join(f"{k} = {_tf_type(v)}" for k, v in first.items())
    return f"map(object({{ {fields} }}))" if fields else "map(object({}))"


# The numbered steps and what each does, in run order; setup.sh runs them all.
STEPS = {
    "01-enable-apis.sh": "Enables the Google Cloud APIs.",
    "02-enable-managed-otel.sh": "Enables Managed OpenTelemetry (creating the cluster if the profile says so).",
    "03-grant-iam.sh": "Creates the Google service account if missing and grants the workload's identity the roles.",
    "04-deploy-monitoring.sh": "Creates or updates the dashboards and alert policies; deletes stale ones.",
    "05-verify.sh": "Waits for the managed collector, then checks that this run's metrics arrive.",
}


def steps(gke: GkeSpec) -> tuple[str, ...]:
    """With gke.manage terraform, only managed OTel on an existing cluster stays a script (Terraform sets
    managed_opentelemetry_config only on a cluster it manages), and verifying, which changes nothing."""
    if gke.manage == "scripts":
        return tuple(STEPS)
    own = ("02-enable-managed-otel.sh",) if gke.cluster_mode == "existing" else ()
    return (*own, "05-verify.sh")


def _scripts(gke: GkeSpec, context: dict[str, Any]) -> list[FileSpec]:
    chosen = {name: STEPS[name] for name in steps(gke)}
    if gke.manage == "scripts":
        chosen["setup.sh"] = "Runs steps 01-05 in order (`--dry-run` prints them)."
    return [
        TemplateFile(f"scripts/{name}", "sh", f"gke/scripts/{name}.j2", what, context, executable=True)
        for name, what in chosen.items()
    ]


def plan(profile: GkeProfile, catalog: Catalog) -> Plan:
    gke = profile.gke
    rl = facts(profile, catalog)
    policy_data = monitoring.alert_policies(rl, gke.channels_for, gke.user_labels)
    slos = slo.objects(rl, gke.project, gke.channels_for, gke.user_labels)
    monitoring_files, dashboards, policies = _monitoring(rl, gke, policy_data, slos)
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
        "slos": slos
        and slos.slo
        and {
            "service": slos.service_id,
            "service_file": slo.SERVICE_FILE,
            "slo": slo.GOODPUT,
            "slo_file": slo.SLO_FILE,
        },
        "timed_slos": [o.key for o in rlslos.objectives(rl) if o.bad],
        # What step 4 lists before deploying, to delete afterwards what this bundle no longer has.
        "bundle_dashboards": equals(f"labels.{monitoring.BUNDLE_LABEL}", rl.name),
        "bundle_policies": equals(f"userLabels.{monitoring.BUNDLE_LABEL}", rl.name),
        "steps": steps(gke),
        "pipeline": rl.pipeline,
        "example_query": f"sum(rate({run_series(rl, 'train_steps')}[5m]))",
        "data_query": f"count({run_series(rl, 'run_state')})",
        "tf_policies": tfpolicy.FILE if policies and gke.manage == "terraform" else "",
        "env": workload.container_env(profile, catalog),
    }
    files = [
        *_scripts(gke, context),
        *_terraform(profile, context, policy_data, slos),
        *_workload(profile, catalog),
        *monitoring_files,
        *app.app_files(rl),
        gitignore(),
    ]
    readme = {
        **context,
        "metrics": [
            {
                "name": m.name,
                "type": naming.monitoring_type(m, rl.pipeline),
                "promql": naming.selector(m, rl.pipeline, "bucket" if m.kind == "histogram" else ""),
            }
            for m in catalog.metrics
        ],
        "files": file_table(files),
        **app.readme_context(rl, volume, context["env"]),
    }
    files.append(TemplateFile("README.md", "md", "gke/README.md.j2", "This file.", readme))
    return Plan(profile.metadata.name, tuple(files))
