"""EKS with the JARK stack: plan the bundle (Terraform tfvars, Argo CD apps, Helm values, RL layer, workload)."""

from __future__ import annotations

from typing import Any

from rlobs.bundle.filters import to_json
from rlobs.bundle.gitignore import gitignore
from rlobs.bundle.spec import DataFile, FileSpec, Plan, TemplateFile, file_table
from rlobs.profile.gitweb import file_link
from rlobs.rl import adapters, app, slos, workloads
from rlobs.rl.alerts import RUNBOOK_PATH
from rlobs.rl.catalog import Catalog
from rlobs.rl.engines import load_engines
from rlobs.rl.facts import RlFacts, rl_facts, workload_job
from rlobs.rl.grafana import board_links, rl_dashboard
from rlobs.rl.identity import identity_rows
from rlobs.rl.labels import bundle_metadata
from rlobs.rl.tracker import tracker_env
from rlobs.targets.eks import argocd, dashboards, monitors, security, stack, tfvars, values, workload
from rlobs.targets.eks.profile import EksProfile, GitOps
from rlobs.targets.eks.stack import GRAFANA_DASHBOARD_LABEL, MONITORING, PROM_EXPORTER_PORT, RELEASE_LABEL
from rlobs.targets.eks.terraform import ARGOCD_NOTE
from rlobs.targets.eks.verify import verify_script
from rlobs.targets.eks.versions import (
    AI_ML_OBSERVABILITY_COMMIT,
    AI_ML_OBSERVABILITY_REPO,
    CHARTS,
    GRAFANA_OPENSEARCH_PLUGIN_VERSION,
    OPENSEARCH_VERSION,
    WEBHOOK_CERTGEN_IMAGE,
)
from rlobs.targets.eks.volume import pipeline, volume

README = "README.md"


def runbook(gitops: GitOps) -> str:
    """The runbook on the GitOps repository's web pages (profile.gitweb), else relative to the bundle (a warning)."""
    link = file_link(gitops.repo_url, gitops.target_revision, f"{gitops.path}/{RUNBOOK_PATH}")
    return RUNBOOK_PATH if link is None else link


def facts(profile: EksProfile, catalog: Catalog) -> RlFacts:
    return rl_facts(
        profile,
        catalog,
        pipeline(profile),
        runbook=runbook(profile.eks.gitops),
        scope={"job": workload_job(profile)},
        cluster=profile.eks.cluster.name,
    )


def _dashboard_configmap(bundle: str, name: str, dashboard: dict[str, Any]) -> dict[str, Any]:
    metadata = bundle_metadata(name, MONITORING, bundle, selected_by=GRAFANA_DASHBOARD_LABEL)
    return workloads.configmap(metadata, {f"{name}.json": to_json(dashboard)})


# file (under rl-layer/) -> what it is, for the bundle README.
_DASHBOARDS = {
    "rl": "Grafana dashboard ConfigMap: the RL golden signals.",
    "training": "Grafana dashboard ConfigMap: Ray and GPU (DCGM) training.",
    "inference": "Grafana dashboard ConfigMap: the rollout engine's serving metrics (workload.rollout).",
}


def _rollout_readme(profile: EksProfile) -> dict[str, Any]:
    rollout = profile.workload.rollout
    data = load_engines()
    engine = data.engine(rollout.engine)
    if rollout.metrics == "ray":
        title, source = f"{engine.title} via Ray", f"{data.ray_prefix}{engine.key}_* through Ray's metrics agent"
    else:
        title = engine.title
        where = [f"port {rollout.port} of the workload's pods"] if rollout.port else []
        if engine.key == "vllm":
            where.insert(0, "the Ray Serve port")
        source = f"/metrics on {' and '.join(where)}" if where else "/metrics: set workload.rollout.port to scrape it"
    return {"title": title, "source": source, "serve_port": engine.key == "vllm" and rollout.metrics == "engine"}


def _layer(profile: EksProfile, facts: RlFacts, objs: dict[str, dict[str, Any]]) -> list[FileSpec]:
    links = board_links(facts)
    boards = {
        "rl": rl_dashboard(facts),
        "training": dashboards.training_dashboard(profile, links),
        "inference": dashboards.inference_dashboard(profile, links),
    }
    files: list[FileSpec] = [
        DataFile(f"rl-layer/{n}", "yaml", obj, monitors.DESCRIPTIONS[n]) for n, obj in objs.items()
    ]
    files += [
        DataFile(
            f"rl-layer/dashboard-{key}.yaml",
            "yaml",
            _dashboard_configmap(facts.name, f"rlobs-{facts.name}-{key}", dashboard),
            _DASHBOARDS[key],
        )
        for key, dashboard in boards.items()
    ]
    return sorted(files, key=lambda f: f.path)


# The stack's own objects (eks.mode: rlobs): file under stack/ -> (its object, what it is for the README).
_STACK = {
    "opensearch-cluster.yaml": (
        stack.opensearch_cluster,
        "OpenSearch + Dashboards (opensearch-operator CR), credentials from Secrets.",
    ),
    "fluentbit-output.yaml": (stack.log_output, "FluentBit ClusterOutput: node container logs to OpenSearch over TLS."),
}


def _stack_files(
    profile: EksProfile,
    chart_values: dict[str, dict[str, Any]],
    root: dict[str, Any],
    apps: dict[str, dict[str, Any]],
) -> list[FileSpec]:
    files: list[FileSpec] = [
        DataFile(
            "argocd/root-app.yaml",
            "yaml",
            root,
            "The app-of-apps root; the only object you apply by hand.",
            header="Apply once: kubectl apply -f argocd/root-app.yaml (Argo CD then syncs argocd/apps/).",
        )
    ]
    files += [
        DataFile(
            f"argocd/apps/{n}",
            "yaml",
            obj,
            "One Argo CD Application per component, pinned chart versions, sync waves.",
        )
        for n, obj in sorted(apps.items())
    ]
    files += [
        DataFile(
            f"values/{chart}.yaml",
            "yaml",
            vals,
            "Helm values of each chart (read by the Applications through `$values`).",
            header=f"Helm values for {chart} {CHARTS[chart].version} (argocd/apps/ reads them via $values).",
        )
        for chart, vals in chart_values.items()
    ]
    if profile.eks.mode == "rlobs":
        files += [DataFile(f"stack/{n}", "yaml", make(profile), what) for n, (make, what) in _STACK.items()]
    return files


def plan(profile: EksProfile, catalog: Catalog) -> Plan:
    eks = profile.eks
    rl = facts(profile, catalog)
    # Each fact once per plan: several files and the README read them.
    chart_values = values.values(profile)
    ray_logs = workload.ray_logs(profile)
    root, apps = argocd.root(profile), argocd.applications(profile)
    layer = monitors.monitors(profile, rl)
    files: list[FileSpec] = [
        tfvars.blueprint_tfvars(profile),
        *_stack_files(profile, chart_values, root, apps),
        *_layer(profile, rl, layer),
        *_workload_files(profile, catalog, ray_logs=ray_logs),
        *app.app_files(rl),
        verify_script(profile, rl, root, apps, layer),
        gitignore(),
    ]
    files.append(
        TemplateFile(
            README,
            "md",
            "eks/README.md.j2",
            "This file.",
            {
                "profile": profile,
                "eks": eks,
                "charts": CHARTS,
                "deployed_charts": sorted(chart_values),
                "prom_exporter_port": PROM_EXPORTER_PORT,
                "slo_group": (group := slos.rule_group(rl)),
                "slo_alerts": [r for r in group["rules"] if "alert" in r] if group else [],
                "identity_envs": [row["env"] for row in identity_rows(profile, catalog)],
                "release_label": RELEASE_LABEL,
                "stack": stack.stack(eks),
                "files": sorted([*file_table(files), (README, "This file.")]),
                "ray_logs": ray_logs,
                "ray_kind": profile.workload.kind in workloads.RAY_KINDS,
                "ray_head_monitor": next(
                    (f.path for f in files if f.path.endswith("/ray-head-servicemonitor.yaml")), None
                ),
                # Argo CD takes an SSH key for ssh:// and scp-like URLs, a user and token for https://.
                "gitops_ssh": not eks.gitops.repo_url.startswith("https://"),
                "ray_logs_index": workload.RAY_LOGS_INDEX,
                "security_config": security.security_config(log_writer=ray_logs),
                "log_writer_user": security.LOG_WRITER_USER,
                "log_writer_role": security.log_writer_role(),
                "admin_hash_var": security.ADMIN_HASH_VAR,
                "log_writer_hash_var": security.LOG_WRITER_HASH_VAR,
                "grafana_plugin_version": GRAFANA_OPENSEARCH_PLUGIN_VERSION,
                "opensearch_version": OPENSEARCH_VERSION,
                "certgen_image": "{registry}/{repository}:{tag}".format(**WEBHOOK_CERTGEN_IMAGE),
                "ref_repo": AI_ML_OBSERVABILITY_REPO,
                "ref_commit": AI_ML_OBSERVABILITY_COMMIT,
                "argocd_note": ARGOCD_NOTE,
                "rollout": _rollout_readme(profile),
                "extra_envs": [e["name"] for e in adapters.adapter_env(profile, catalog) + tracker_env(profile)],
                **app.readme_context(rl, volume, workload.env(profile, catalog)),
            },
        )
    )
    return Plan(profile.metadata.name, tuple(files))


def _workload_files(profile: EksProfile, catalog: Catalog, *, ray_logs: bool) -> list[FileSpec]:
    w = profile.workload
    files: list[FileSpec] = [
        DataFile(
            "workload/kustomization.yaml",
            "yaml",
            workload.component(profile, with_logs=ray_logs),
            "Kustomize Component for your workload's kustomization.",
            header=f"A Kustomize Component: add it under `components:` of the kustomization that builds {w.kind} "
            f"{w.name}.",
        ),
        DataFile(
            f"workload/{workloads.ENV_PATCH_FILE}",
            "yaml",
            workload.env_patch(profile, catalog),
            "OTel SDK env, RL_* identity env and the scrape label for the RL container.",
        ),
    ]
    schema_what = "Merge keys of the CRD's lists, so Kustomize merges containers, env, volumes by name."
    files += workloads.beside_patch(w, workload.env(profile, catalog), profile.metadata.name, "workload", schema_what)
    if ray_logs:
        files += [
            DataFile(
                f"workload/{workload.LOGS_PATCH_FILE}",
                "yaml",
                workload.logs_patch(profile),
                "FluentBit sidecar + shared /tmp/ray volume on the Ray head.",
            ),
            DataFile(
                f"workload/{workload.LOG_CONFIG_FILE}",
                "yaml",
                workload.fluentbit_config(profile),
                "The sidecar's config: Ray session logs to OpenSearch.",
            ),
        ]
    return files
