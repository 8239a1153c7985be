"""Per GCP project, one Terraform root whose for_each instances are what each cluster's own terraform/ would create."""

from __future__ import annotations

from typing import Any

from rlobs.bundle.spec import DataFile, FileSpec, TemplateFile
from rlobs.errors import RlobsError
from rlobs.profile.fleet import Fleet, Member
from rlobs.profile.kind import CLUSTERS_DIR
from rlobs.rl.catalog import Catalog
from rlobs.targets.gke import monitoring, project, tfpolicy
from rlobs.targets.gke import plan as gke_plan
from rlobs.targets.gke.fleetspec import dashboards, projects
from rlobs.targets.gke.profile import GkeProfile

GKE_DIR = "gke"
# A cluster's folder under a project's Terraform root: gke/<project>/terraform/ -> clusters/<name>/.
_TO_CLUSTERS = "../../.."
LOCALS = "rl_alert_policies"
# What each variable is, in file order.
_DESCRIPTIONS = {
    "project_id": "GCP project ID.",
    "services": "Google Cloud APIs to enable (every cluster's).",
    "clusters": "The project's clusters, by name: what each cluster's own resources read.",
    "workloads": "The workloads' Kubernetes principals (namespace, or namespace/KSA), each bound once.",
    "service_accounts": "The Google service accounts the workloads act as, by email.",
    "writers": "Each (writer role, principal) binding, keyed `<role> <principal>`.",
}


def root(project_id: str) -> str:
    return f"{GKE_DIR}/{project_id}/terraform"


def dashboard_path(project_id: str) -> str:
    """The per-project dashboard (views.gkeDashboards: per-project), relative to gke/<project>/."""
    return f"{gke_plan.DASHBOARDS_DIR}/{project_id}.json"


def _clusters(fleet: Fleet, members: list[tuple[Member, GkeProfile]]) -> dict[str, dict[str, Any]]:
    clusters: dict[str, dict[str, Any]] = {}
    for m, p in members:
        entry: dict[str, Any] = {}
        if p.gke.cluster_mode != "existing":
            entry |= {"location": p.gke.location, "deletion_protection": bool(p.gke.deletion_protection)}
        if dashboards(fleet.spec) == "per-cluster":
            dashboard = f"{CLUSTERS_DIR}/{m.name}/{gke_plan.DASHBOARDS_DIR}/{p.metadata.name}.json"
            entry["dashboard"] = f"{_TO_CLUSTERS}/{dashboard}"
        clusters[m.name] = entry
    return clusters


def tfvars(fleet: Fleet, members: list[tuple[Member, GkeProfile]]) -> dict[str, Any]:
    """terraform.tfvars.json of one project's root: every map a for_each iterates over, with static keys."""
    first = members[0][1]
    form = project.identity(first).mode
    workloads: dict[str, dict[str, Any]] = {}
    accounts: dict[str, tuple[str, list[str]]] = {}  # GSA email -> (the workload's name, its clusters)
    roles: dict[str, set[str]] = {}  # principal (or GSA) -> the union of its clusters' writer roles
    for m, p in members:
        ident = project.identity(p)
        # The key of the workload's Kubernetes principal: its namespace, or namespace/KSA.
        key = p.workload.namespace if ident.mode == "namespace" else f"{p.workload.namespace}/{ident.ksa}"
        work: dict[str, Any] = {"namespace": p.workload.namespace}
        if form != "namespace":
            work["kubernetes_service_account"] = ident.ksa
        if form == "gsa":
            work["gcp_service_account"] = ident.gsa
            accounts.setdefault(ident.gsa, (p.workload.name, []))[1].append(m.name)
        if workloads.setdefault(key, work) != work:
            raise RlobsError(f"project {first.gke.project}: principal {key} acts as two Google service accounts")
        roles.setdefault(ident.gsa if form == "gsa" else key, set()).update(project.roles(p))
    clusters = _clusters(fleet, members)
    out: dict[str, Any] = {
        "project_id": first.gke.project,
        "services": sorted({api for _, p in members for api in project.apis(p)}),
        **({"clusters": clusters} if any(clusters.values()) else {}),
        "workloads": workloads,
    }
    if form == "gsa":
        # The single-cluster display name, naming every cluster whose workload acts as the account.
        out["service_accounts"] = {
            email: {"display_name": f"RL workload {workload} (rlobs bundle {', '.join(names)})"}
            for email, (workload, names) in accounts.items()
        }
    out["writers"] = {
        f"{role} {holder}": {"role": role, "workload": holder} for holder, rs in roles.items() for role in sorted(rs)
    }
    return out


# The repeated blocks of google_monitoring_alert_policy that rlobs sets (google-beta
# resource_monitoring_alert_policy.go: conditions and documentation.links are TypeList blocks of Elem *schema.Resource):
# as `dynamic` blocks, one per element of the instance's list, so clusters may have different counts.
_REPEATED = frozenset({"conditions", "links"})
# The string-map arguments (user_labels, labels): attributes, never blocks.
_MAPS = frozenset(tfpolicy.snake(f) for f in tfpolicy.MAP_FIELDS)


def _refs(value: Any, base: str, field: str = "") -> Any:
    """Arguments reading each instance's value at `base`: blocks stay blocks, repeated ones `dynamic` over its list."""
    if isinstance(value, dict) and field not in _MAPS:
        body: dict[str, Any] = {}
        for key, sub in value.items():
            if key in _REPEATED:
                content = _refs(sub[0], f"{key}.value", key)
                body.setdefault("dynamic", {})[key] = {"for_each": f"${{{base}.{key}}}", "content": content}
            else:
                body[key] = _refs(sub, f"{base}.{key}", key)
        return body
    return f"${{{base}}}"


def policies(by_cluster: dict[str, list[tuple[str, dict[str, Any]]]], bundles: dict[str, str]) -> dict[str, Any]:
    """alert_policies.tf.json of a project's root: per RL alert, one resource for_each over a local map by cluster."""
    per_alert: dict[str, dict[str, Any]] = {}
    for cluster, found in by_cluster.items():
        for stem, policy in found:
            name = tfpolicy.resource_name(stem, bundles[cluster])
            per_alert.setdefault(name, {})[cluster] = tfpolicy.arguments(policy)
    if not per_alert:
        return {}
    resources: dict[str, Any] = {}
    for name, instances in per_alert.items():
        if any(a["documentation"].get("links") for a in instances.values()):
            # Documentation links (which a policy without a tracker leaves out) as an empty list when another
            # cluster's policy has them, so every instance has the attribute the dynamic block reads.
            for args in instances.values():
                args["documentation"].setdefault("links", [])
        # a sample instance with every repeated block present, for the dynamic blocks' content
        template = next(a for a in instances.values() if a["documentation"].get("links") != [])
        resources[name] = {
            "provider": "google-beta",
            "for_each": f"${{local.{LOCALS}.{name}}}",
            "project": "${var.project_id}",
            **_refs(template, "each.value"),
            "depends_on": ["google_project_service.apis"],
        }
    return {"locals": {LOCALS: per_alert}, "resource": {tfpolicy.RESOURCE: resources}}


def project_dashboard(fleet: Fleet, project_id: str, members: list[tuple[Member, GkeProfile]], catalog: Catalog) -> Any:
    """The project's one dashboard: its clusters' (which must agree) over all of them, with a `cluster` filter."""
    clusters = [p.gke.cluster for _, p in members]
    # displayName and labels name each cluster's own bundle.
    boards = [monitoring.dashboard(gke_plan.facts(p, catalog), clusters=clusters) for _, p in members]
    shared = [{k: v for k, v in b.items() if k not in ("displayName", "labels")} for b in boards]
    if any(b != shared[0] for b in shared):
        names = ", ".join(m.name for m, _ in members)
        raise RlobsError(
            f"views.gkeDashboards is per-project, but the dashboards of {names} (project {project_id}) differ "
            "(gke.naming, workload.tracker, the workload's name or namespace, or the run attributes): use per-cluster"
        )
    labels = {**members[0][1].gke.user_labels, "rlobs": "", "rlobs_fleet": fleet.name}
    return {"displayName": f"RL golden signals ({fleet.name}, {project_id})", "labels": labels, **shared[0]}


def project_files(fleet: Fleet, catalog: Catalog) -> list[FileSpec]:
    files: list[FileSpec] = []
    per_project = dashboards(fleet.spec) == "per-project"
    for project_id, members in sorted(projects(fleet.members, "terraform").items()):
        first = members[0][1]
        values = tfvars(fleet, members)
        context = {
            "fleet": fleet.name,
            "project": project_id,
            "clusters": [m.name for m, _ in members],
            "cluster_mode": first.gke.cluster_mode,
            "identity": project.identity(first).mode,
            "per_project": per_project,
            "project_dashboard": dashboard_path(project_id),
            "min_gke": project.MIN_GKE_VERSION,
            "scope": project.OTEL_SCOPE,
            "google_beta_version": project.GOOGLE_BETA_VERSION,
            "terraform_version": project.TERRAFORM_VERSION,
        }
        base = root(project_id)
        files += [
            TemplateFile(
                f"{base}/main.tf",
                "hcl",
                "gke/fleet-terraform/main.tf.j2",
                "Per GCP project: one Terraform root whose resources iterate over its gke.manage: terraform clusters.",
                context,
            ),
            TemplateFile(
                f"{base}/variables.tf",
                "hcl",
                "gke/fleet-terraform/variables.tf.j2",
                "Inputs of main.tf (the maps its resources iterate over).",
                {**context, "variables": gke_plan.tf_variables(values, _DESCRIPTIONS)},
            ),
            DataFile(
                f"{base}/terraform.tfvars.json",
                "json",
                values,
                "The project's clusters, principals and bindings: the maps main.tf iterates over.",
            ),
        ]
        by_cluster = {
            m.name: monitoring.alert_policies(gke_plan.facts(p, catalog), p.gke.channels_for, p.gke.user_labels)
            for m, p in members
        }
        alert_data = policies(by_cluster, {m.name: p.metadata.name for m, p in members})
        if alert_data:
            what = "Per GCP project: each RL alert policy for every cluster (for_each over a local map)."
            files.append(DataFile(f"{base}/alert_policies.tf.json", "json", alert_data, what))
        if per_project:
            path = f"{GKE_DIR}/{project_id}/{dashboard_path(project_id)}"
            board = project_dashboard(fleet, project_id, members, catalog)
            what = "Per GCP project: one Cloud Monitoring dashboard with a cluster filter (deployed by Terraform)."
            files.append(DataFile(path, "json", board, what))
    return files
