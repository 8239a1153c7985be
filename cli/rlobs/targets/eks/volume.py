"""What an EKS bundle ingests (rlobs plan): its in-cluster Prometheus, and AMP when the values remote-write to one."""

from __future__ import annotations

from rlobs.profile.fields import duration_seconds
from rlobs.profile.yamlsource import get_at
from rlobs.rl.catalog import Catalog
from rlobs.rl.naming import Pipeline
from rlobs.rl.volume import Cost, Family, Volume, amp_quota, in_cluster, managed, rl_families, third_party
from rlobs.rl.workloads import RAY_KINDS
from rlobs.targets.eks.monitors import AGGREGATED, REMOTE_WRITE_INTERVAL, SCRAPE_INTERVAL
from rlobs.targets.eks.profile import EksProfile

_AGGREGATED_S = float(duration_seconds(REMOTE_WRITE_INTERVAL))
# GiB per unit of a Kubernetes quantity's suffix: binary Ki..Ti, decimal k..T.
_GIB = {
    **{unit: 2.0 ** (10 * i - 30) for i, unit in enumerate(("Ki", "Mi", "Gi", "Ti"), start=1)},
    **{unit: 10.0 ** (3 * i) / 2**30 for i, unit in enumerate("kMGT", start=1)},
}


def volume(profile: EksProfile, catalog: Catalog) -> Volume:
    plan, eks, w = profile.plan, profile.eks, profile.workload
    prom = eks.prometheus
    interval = float(duration_seconds(SCRAPE_INTERVAL))
    counts = {"node-exporter": plan.nodes, "kube-state-metrics": plan.nodes + plan.runs * plan.engines}
    if eks.dcgm_exporter:
        counts["dcgm"] = plan.nodes * plan.gpus_per_node
    if w.kind in RAY_KINDS:
        counts["ray"] = plan.nodes
    if w.rollout.port is not None or (w.kind in RAY_KINDS and w.rollout.metrics == "ray"):
        counts["vllm"] = plan.runs * plan.engines
    rl = rl_families(catalog, pipeline(profile), plan.runs, interval)
    families = [*rl, *third_party(counts, interval)]
    sent = families
    if prom.remote_write == "aggregated":  # the per-run records, the only series remote-written
        records = Family(f"{AGGREGATED}* (per-run records)", "rules", sum(f.series for f in rl), _AGGREGATED_S)
        families.append(records)
        sent = [records]
    series = sum(f.series for f in families)
    rate = sum(f.samples_per_second for f in families)
    costs: list[Cost] = [in_cluster(series, rate, duration_seconds(prom.retention), _gib(prom.storage_size))]
    out, out_rate = sum(f.series for f in sent), sum(f.samples_per_second for f in sent)
    # The remote-write URLs the kube-prometheus-stack overrides give its Prometheus, an AMP workspace's among them.
    writes = get_at(eks.helm_values, ("kube-prometheus-stack", "prometheus", "prometheusSpec", "remoteWrite")) or []
    urls = [entry.get("url") for entry in writes if isinstance(entry, dict)]
    amp = [url for url in urls if isinstance(url, str) and "aps-workspaces" in url]
    what = f"remote-writes {out:,} series, {out_rate:,.1f} samples/s ({prom.remote_write})"
    costs += [managed("amp", out_rate, [what], url, out, amp_quota(out_rate)) for url in amp]
    lever = ((("eks", "prometheus", "remote_write"), "aggregated"),) if amp else ()
    return Volume(profile.metadata.name, tuple(families), tuple(costs), settings=lever)


def _gib(size: str) -> float:
    number = size.rstrip("KiMGTmk")
    return float(number) * _GIB.get(size[len(number) :], 1 / 2**30)


def pipeline(profile: EksProfile) -> Pipeline:
    return "otel-collector" if profile.eks.metrics_pipeline == "otel-collector" else "python-prometheus"
