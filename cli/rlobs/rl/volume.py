"""What a bundle will ingest before it is deployed: active series and samples per second per metric family (the RL
catalog's, and estimates for the third-party exporters a bundle scrapes), and money per month per backend at the
list prices in data/volume.yaml. Pure: counts in, figures out (each target says what its bundle scrapes, how often
and where it goes: rlobs.targets.<target>.volume)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from rlobs.profile.fields import duration_seconds
from rlobs.profile.model import ProfileBase
from rlobs.profile.objectives import Budget
from rlobs.profile.yamlsource import Path, load_yaml
from rlobs.resources import read_text
from rlobs.rl import naming
from rlobs.rl.catalog import Catalog, Metric, for_profile

# A target's count of its bundle (Target.volume): profile and its catalog in, families and costs out.
Count = Callable[[Any, Catalog], "Volume"]
# The longest export interval a lever suggests: Managed OpenTelemetry's limit (targets/gke/profile.py).
_LONGEST_EXPORT_S = 300


@dataclass(frozen=True, slots=True)
class Family:
    name: str  # the stored name (histograms: the family, its _bucket/_sum/_count series counted together)
    source: str  # rl, or the third-party exporter (data/volume.yaml third_party)
    series: int
    interval_s: float  # how often each series gets a sample (export or scrape interval)
    estimate: str = ""  # third-party: how the figure is estimated; RL families are counted, not estimated

    @property
    def samples_per_second(self) -> float:
        return self.series / self.interval_s


@dataclass(frozen=True, slots=True)
class Cost:
    backend: str  # data/volume.yaml backends key
    title: str
    usd_per_month: float
    source: str
    notes: tuple[str, ...] = ()  # what else the backend needs (memory, disk) or warns about (quota)
    endpoint: str = ""  # where the samples go, when the profile says (a remote-write URL): a fleet sums quotas by it
    samples_per_second: float = 0.0


@dataclass(frozen=True, slots=True)
class Lever:
    setting: str  # the profile key, dotted
    change: str  # what the plan tried, e.g. 30s -> 60s
    before: Totals
    after: Totals


@dataclass(frozen=True, slots=True)
class Totals:
    series: int
    samples_per_second: float
    usd_per_month: float


@dataclass(frozen=True, slots=True)
class Volume:
    name: str  # the profile's (or fleet cluster's) name
    families: tuple[Family, ...]
    costs: tuple[Cost, ...]
    levers: tuple[Lever, ...] = ()
    over: tuple[tuple[Path, str], ...] = field(default=())  # budget keys exceeded, with what

    @property
    def totals(self) -> Totals:
        return Totals(
            sum(f.series for f in self.families),
            sum(f.samples_per_second for f in self.families),
            sum(c.usd_per_month for c in self.costs),
        )


@cache
def prices() -> dict[str, Any]:
    data: dict[str, Any] = load_yaml(read_text("data", "volume.yaml"))
    return data


def month_samples(samples_per_second: float) -> float:
    return samples_per_second * float(prices()["month_seconds"])


def rl_series(metric: Metric, values: Mapping[str, int] | None = None) -> int:
    """Series of one catalog metric for one reporting process: a histogram's buckets (+Inf too), _sum and _count,
    times the values each metric-scope attribute can take (`values`: attribute name -> count)."""
    per = len(metric.buckets) + 3 if metric.kind == "histogram" else 1
    for name in metric.attributes:
        per *= (values or {}).get(name, 1)
    return per


def rl_families(catalog: Catalog, pipeline: naming.Pipeline, runs: int, interval_s: float) -> list[Family]:
    """The RL catalog's families: only rank 0 of a run reports, so one reporting process per run."""
    values = {a.name: len(a.values) for a in catalog.attributes if a.values}
    return [Family(naming.family(m, pipeline), "rl", rl_series(m, values) * runs, interval_s) for m in catalog.metrics]


def third_party(counts: Mapping[str, int], interval_s: float) -> list[Family]:
    """Estimated families of the third-party exporters: `counts` is exporter -> how many of what it is per (a GPU,
    a node, a pod, an engine)."""
    known = prices()["third_party"]
    out = []
    for name, count in counts.items():
        entry = known[name]
        out.append(
            Family(
                name,
                name,
                int(entry["series"]) * count,
                interval_s,
                f"{entry['series']}/{entry['per']}: {entry['basis']}",
            )
        )
    return out


def tiered(backend: str, samples: float) -> float:
    """USD for `samples` in one month at `backend`'s tiered list price."""
    entry = prices()["backends"][backend]
    unit, usd, floor = float(entry["unit"]), 0.0, 0.0
    for ceiling, price in entry["tiers"]:
        top = samples if ceiling is None else min(samples, float(ceiling))
        if top > floor:
            usd += (top - floor) / unit * float(price)
        if ceiling is None or samples <= float(ceiling):
            break
        floor = float(ceiling)
    return usd


def managed(backend: str, samples_per_second: float, notes: Iterable[str] = (), endpoint: str = "") -> Cost:
    entry = prices()["backends"][backend]
    usd = tiered(backend, month_samples(samples_per_second))
    return Cost(backend, entry["title"], usd, entry["source"], tuple(notes), endpoint, samples_per_second)


def amp_quota(samples_per_second: float) -> list[str]:
    quota = int(prices()["backends"]["amp"]["quota_samples_per_second"])
    if samples_per_second <= quota:
        return []
    return [f"{samples_per_second:,.0f} samples/s is above the workspace's default ingestion quota of {quota:,}/s"]


def in_cluster(series: int, samples_per_second: float, retention_s: float, volume_gib: float) -> Cost:
    """The in-cluster Prometheus: the head's memory for the active series, the disk the retention fills, and what
    the gp3 volume the bundle requests costs."""
    entry = prices()["backends"]["prometheus"]
    gib = 2.0**30
    memory = series * float(entry["bytes_per_series"]) / gib
    disk = samples_per_second * retention_s * float(entry["bytes_per_sample"]) / gib
    notes = [f"about {memory:.2f} GiB of memory for the head block", f"about {disk:.1f} GiB of disk for the retention"]
    if disk > volume_gib:
        notes.append(f"more than the {volume_gib:g} GiB volume eks.prometheus.storageSize requests")
    usd = volume_gib * float(entry["gp3_usd_per_gib_month"])
    return Cost("prometheus", entry["title"], usd, entry["source"], tuple(notes), "", samples_per_second)


def over_budget(totals: Totals, budget: Budget, at: Path = ("plan", "budget")) -> list[tuple[Path, str]]:
    """(budget key, what exceeds it) for each limit the totals are above."""
    checks = (
        ("series", totals.series, budget.series, "{:,.0f} active series"),
        ("samplesPerSecond", totals.samples_per_second, budget.samples_per_second, "{:,.1f} samples/s"),
        ("moneyPerMonth", totals.usd_per_month, budget.money_per_month, "{:,.2f} USD per month"),
    )
    return [
        (
            (*at, key),
            f"expected at most {limit:,g}, got a plan of " + shown.format(value) + " (rlobs plan shows where)",
        )
        for key, value, limit, shown in checks
        if limit is not None and value > limit
    ]


def planned(profile: ProfileBase, catalog: Catalog, count: Count) -> Volume:
    """The target's count of the profile's bundle (`catalog`: the profile's, catalog.for_profile), with the effect of
    each lever and the budget keys it is above."""
    volume = count(profile, catalog)
    totals = volume.totals
    return replace(
        volume,
        levers=tuple(_levers(profile, catalog, count, totals)),
        over=tuple(over_budget(totals, profile.plan.budget)),
    )


def _levers(profile: ProfileBase, catalog: Catalog, count: Count, before: Totals) -> Iterator[Lever]:
    """Each profile setting that would lower the plan, tried once; shown only where it changes the figures."""
    w = profile.workload
    tries: list[tuple[str, str, str, Any]] = []
    now = duration_seconds(w.export_interval)
    if now < _LONGEST_EXPORT_S:
        longer = f"{min(2 * now, _LONGEST_EXPORT_S)}s"
        tries.append(("workload.exportInterval", "export_interval", f"{w.export_interval} -> {longer}", longer))
    bounds = next((m.buckets for m in catalog.metrics if m.kind == "histogram"), ())
    if len(bounds) > 1:
        fewer = bounds[1::2]  # every other boundary: the same range at half the resolution
        tries.append(("workload.histogramBuckets", "histogram_buckets", f"{len(bounds)} -> {len(fewer)}", fewer))
    for setting, key, change, value in tries:
        tried = profile.model_copy(update={"workload": w.model_copy(update={key: value})})
        after = count(tried, for_profile(catalog, tried)).totals
        if after != before:
            yield Lever(setting, change, before, after)


def totals_data(t: Totals) -> dict[str, Any]:
    return {
        "series": t.series,
        "samplesPerSecond": round(t.samples_per_second, 3),
        "samplesPerMonth": round(month_samples(t.samples_per_second)),
        "moneyPerMonth": round(t.usd_per_month, 2),
    }


def as_data(v: Volume) -> dict[str, Any]:
    """The plan as JSON data (rlobs plan --format json), stable keys and rounding."""
    return {
        "name": v.name,
        "totals": totals_data(v.totals),
        "families": [
            {
                "name": f.name,
                "source": f.source,
                "series": f.series,
                "intervalSeconds": f.interval_s,
                "samplesPerSecond": round(f.samples_per_second, 3),
                "estimate": f.estimate,
            }
            for f in v.families
        ],
        "backends": [
            {
                "backend": c.backend,
                "title": c.title,
                "moneyPerMonth": round(c.usd_per_month, 2),
                "source": c.source,
                "notes": list(c.notes),
            }
            for c in v.costs
        ],
        "prices": {"checked": prices()["checked"]},
        "levers": [
            {
                "setting": lv.setting,
                "change": lv.change,
                "before": totals_data(lv.before),
                "after": totals_data(lv.after),
            }
            for lv in v.levers
        ],
        "overBudget": [{"key": ".".join(str(p) for p in path), "message": m} for path, m in v.over],
    }
