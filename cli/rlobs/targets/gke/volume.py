"""What a GKE bundle ingests (rlobs plan): only the RL families (it scrapes no exporter), priced as GMP samples."""

from __future__ import annotations

from rlobs.profile.fields import duration_seconds
from rlobs.rl.catalog import Catalog
from rlobs.rl.naming import Pipeline
from rlobs.rl.volume import Volume, cloud_monitoring_quota, managed, rl_families
from rlobs.targets.gke.profile import GkeProfile

# Histograms are counted as Prometheus counts them (each bucket, _sum and _count a series): Cloud Monitoring keeps a
# histogram as one distribution series, so this is an upper bound on what GMP bills.
HISTOGRAMS = "counted with every bucket, as Prometheus stores them: an upper bound on a distribution's bill"


def volume(profile: GkeProfile, catalog: Catalog) -> Volume:
    interval = float(duration_seconds(profile.workload.export_interval))
    families = tuple(rl_families(catalog, pipeline(profile), profile.plan.runs, interval))
    rate = sum(f.samples_per_second for f in families)
    # Each run's rank 0 is one monitored resource (prometheus_target): its series count against the limit alone.
    quota = cloud_monitoring_quota(sum(f.series for f in families) // profile.plan.runs)
    return Volume(profile.metadata.name, families, (managed("gmp", rate, [f"histograms {HISTOGRAMS}"], quota=quota),))


def pipeline(profile: GkeProfile) -> Pipeline:
    """Managed OpenTelemetry keeps dotted names; a self-run collector's googlemanagedprometheus exporter does not."""
    return "gke-telemetry-api" if profile.gke.naming == "telemetry-api" else "gke-gmp-collector"
