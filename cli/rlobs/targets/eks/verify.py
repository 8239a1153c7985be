"""scripts/verify.sh of the EKS bundle: what it checks, from the objects the bundle renders."""

from __future__ import annotations

from typing import Any

from rlobs.bundle.spec import TemplateFile
from rlobs.rl.facts import RlFacts, run_series
from rlobs.rl.labels import BUNDLE_LABEL
from rlobs.rl.workloads import RAY_KINDS
from rlobs.targets.eks import monitors
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.eks.stack import ARGOCD, MONITORING, PROMETHEUS_PORT, PROMETHEUS_SERVICE

FILE = "scripts/verify.sh"

# The monitors (files under rl-layer/) that scrape the workload or carry its metrics -> whether they must have
# targets: the RL metrics' own route must; the Ray pods and the rollout engine may not be running yet.
_WORKLOAD_MONITORS = {
    "rl-app-podmonitor.yaml": True,
    "otel-collector-servicemonitor.yaml": True,
    "ray-head-servicemonitor.yaml": False,
    "ray-workers-podmonitor.yaml": False,
    "rollout-engine-podmonitor.yaml": False,
}


def _pools(profile: EksProfile, layer: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each endpoint's scrape pool, as the Prometheus Operator names its job (`serviceMonitor/<ns>/<name>/<i>`)."""
    pools = []
    for file, required in _WORKLOAD_MONITORS.items():
        obj = layer.get(file)
        if obj is None or (file.startswith("ray-") and profile.workload.kind not in RAY_KINDS):
            continue
        kind, meta, spec = obj["kind"], obj["metadata"], obj["spec"]
        endpoints = spec.get("endpoints") or spec["podMetricsEndpoints"]
        what = monitors.DESCRIPTIONS[file].rstrip(".").replace("`", "")
        for i, endpoint in enumerate(endpoints):
            pool = f"{kind[0].lower()}{kind[1:]}/{meta['namespace']}/{meta['name']}/{i}"
            port = endpoint.get("port", endpoint.get("portNumber"))
            pools.append({"pool": pool, "required": required, "what": f"{what}; port {port}"})
    return pools


def verify_script(
    profile: EksProfile,
    rl: RlFacts,
    root: dict[str, Any],
    apps: dict[str, dict[str, Any]],
    layer: dict[str, dict[str, Any]],
) -> TemplateFile:
    groups = layer["rl-prometheusrule.yaml"]["spec"]["groups"]
    run_id = profile.workload.run.id
    context = {
        "profile": profile,
        "apps": [a["metadata"]["name"] for a in (root, *apps.values())],
        "layer_app": apps["rl-layer.yaml"]["metadata"]["name"],
        "argocd": ARGOCD,
        "selector": f"{BUNDLE_LABEL}={profile.metadata.name}",
        "prometheus": {"namespace": MONITORING, "service": PROMETHEUS_SERVICE, "port": PROMETHEUS_PORT},
        "pools": _pools(profile, layer),
        "rule_group": groups[0]["name"] if groups else "",
        "rule_count": len(groups[0]["rules"]) if groups else 0,
        "data_query": f"count({run_series(rl, 'run_state')})",
        "runs": f"run {run_id}" if run_id else f"the runs of workload {profile.workload.name}",
    }
    what = "Checks Argo CD synced the bundle, Prometheus scrapes the workload, the rules loaded, the run's series."
    return TemplateFile(FILE, "sh", "eks/scripts/verify.sh.j2", what, context, executable=True)
