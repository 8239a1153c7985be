"""What a bundle will ingest and cost before it is deployed: series, samples/s and USD a month (data/volume.yaml)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache, reduce
from typing import Any

from pydantic.alias_generators import to_camel

from rlobs.profile.fields import duration_seconds
from rlobs.profile.model import ProfileBase
from rlobs.profile.objectives import Budget
from rlobs.profile.yamlsource import Path, load_yaml
from rlobs.resources import read_text
from rlobs.rl import naming
from rlobs.rl.catalog import Catalog, Metric, for_profile, load_catalog

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
    series: int = 0  # what it receives, where that is not the whole plan (a remote write)
    quota: tuple[str, ...] = ()  # the backend's limits the plan is above (rlobs plan --check fails)


@dataclass(frozen=True, slots=True)
class Lever:
    setting: str  # the profile key, dotted
    change: str  # from the value before to the value after, e.g. 30s -> 60s
    before: Totals
    after: Totals
    set: bool = False  # the profile sets it (before: its default); else the plan tried it (before: the profile)
    # Where the bundle remote-writes: the remote write's (series, samples/s) before and after
    remote: tuple[tuple[int, float], tuple[int, float]] | None = None


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
    # The target's own lever settings: (attribute path in the profile, the value to try unset, or None)
    settings: tuple[tuple[tuple[str, ...], Any], ...] = ()
    over: tuple[tuple[Path, str], ...] = ()  # budget keys exceeded, with what

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


def rl_series(metric: Metric, values: Mapping[str, int]) -> int:
    """Series of a metric for one process: a histogram's buckets, +Inf, _sum and _count; `values`: attribute -> n."""
    per = len(metric.buckets) + 3 if metric.kind == "histogram" else 1
    return per * math.prod(values.get(name, 1) for name in metric.attributes)


def rl_families(catalog: Catalog, pipeline: naming.Pipeline, runs: int, interval_s: float) -> list[Family]:
    """The RL catalog's families: only rank 0 of a run reports, so one reporting process per run."""
    values = {a.name: len(a.values) for a in catalog.attributes if a.values}
    return [Family(naming.family(m, pipeline), "rl", rl_series(m, values) * runs, interval_s) for m in catalog.metrics]


def third_party(counts: Mapping[str, int], interval_s: float) -> list[Family]:
    """Estimated families of the third-party exporters; `counts`: exporter -> how many of what it is per (GPU, node)."""
    known = prices()["third_party"]
    return [
        Family(name, name, int(e["series"]) * count, interval_s, f"{e['series']}/{e['per']}: {e['basis']}")
        for name, count in counts.items()
        for e in [known[name]]
    ]


def tiered(backend: str, samples: float) -> float:
    """USD for `samples` in one month at `backend`'s tiered list price."""
    entry = prices()["backends"][backend]
    unit, usd, floor = float(entry["unit"]), 0.0, 0.0
    for ceiling, price in entry["tiers"]:  # each tier bills the samples between the tier below and its ceiling
        top = samples if ceiling is None else min(samples, float(ceiling))
        usd += max(0.0, top - floor) / unit * float(price)
        floor = top
    return usd


def managed(
    backend: str,
    samples_per_second: float,
    notes: Iterable[str] = (),
    endpoint: str = "",
    series: int = 0,
    quota: Iterable[str] = (),
) -> Cost:
    entry = prices()["backends"][backend]
    usd = tiered(backend, month_samples(samples_per_second))
    return Cost(
        backend, entry["title"], usd, entry["source"], tuple(notes), endpoint, samples_per_second, series, tuple(quota)
    )


def amp_quota(samples_per_second: float) -> list[str]:
    quota = int(prices()["backends"]["amp"]["quota_samples_per_second"])
    if samples_per_second <= quota:
        return []
    return [f"{samples_per_second:,.0f} samples/s is above the workspace's default ingestion quota of {quota:,}/s"]


def cloud_monitoring_quota(series_per_resource: int) -> list[str]:
    quota = int(prices()["backends"]["gmp"]["quota_series_per_resource"])
    if series_per_resource <= quota:
        return []
    return [f"{series_per_resource:,} series per run is above Cloud Monitoring's {quota:,} per monitored resource"]


def in_cluster(series: int, samples_per_second: float, retention_s: float, volume_gib: float) -> Cost:
    entry = prices()["backends"]["prometheus"]
    gib = 2.0**30
    memory = series * float(entry["bytes_per_series"]) / gib
    disk = samples_per_second * retention_s * float(entry["bytes_per_sample"]) / gib
    notes = [f"about {memory:.2f} GiB of memory for the head block", f"about {disk:.1f} GiB of disk for the retention"]
    if disk > volume_gib:
        notes.append(f"more than the {volume_gib:g} GiB volume eks.prometheus.storageSize requests")
    usd = volume_gib * float(entry["gp3_usd_per_gib_month"])
    return Cost("prometheus", entry["title"], usd, entry["source"], tuple(notes), "", samples_per_second)


def over_budget(totals: Totals, budget: Budget) -> list[tuple[Path, str]]:
    checks = (
        ("series", totals.series, budget.series, "{:,.0f} active series"),
        ("samplesPerSecond", totals.samples_per_second, budget.samples_per_second, "{:,.1f} samples/s"),
        ("moneyPerMonth", totals.usd_per_month, budget.money_per_month, "{:,.2f} USD per month"),
    )
    return [
        (
            ("plan", "budget", key),
            f"expected at most {limit:,g}, got a plan of " + shown.format(value) + " (rlobs plan shows where)",
        )
        for key, value, limit, shown in checks
        if limit is not None and value > limit
    ]


def planned(profile: ProfileBase, catalog: Catalog, count: Count) -> Volume:
    """The target's count (`catalog`: catalog.for_profile's), with each lever's effect and the budget keys exceeded."""
    volume = count(profile, catalog)
    return replace(
        volume,
        levers=tuple(_levers(profile, catalog, count, volume)),
        over=tuple(over_budget(volume.totals, profile.plan.budget)),
    )


def _levers(profile: ProfileBase, catalog: Catalog, count: Count, volume: Volume) -> Iterator[Lever]:
    """Each lever the profile sets against its default, and each unset one tried once; those that change the figures."""
    w = profile.workload
    seconds = duration_seconds(w.export_interval)
    bounds = next((m.buckets for m in catalog.metrics if m.kind == "histogram"), ())
    tries: list[tuple[tuple[str, ...], Any]] = [
        (("workload", "export_interval"), f"{min(2 * seconds, _LONGEST_EXPORT_S)}s"),
        (("workload", "histogram_buckets"), bounds[1::2] or None),  # the same range at half the resolution
        (("workload", "drop_attributes"), None),
        *volume.settings,
    ]
    base, now = load_catalog(), volume
    for path, suggested in tries:
        current, default = _value(profile, path), _default(profile, path)
        other = default if current != default else suggested
        if current == default and (suggested is None or suggested == current):
            continue
        tried = _with(profile, path, other)
        then = count(tried, for_profile(base, tried))
        if then.totals != now.totals:
            setting, was, will = ".".join(to_camel(p) for p in path), _shown(other, base), _shown(current, base)
            if current != default:
                yield Lever(setting, f"{was} -> {will}", then.totals, now.totals, set=True, remote=_remote(then, now))
            else:
                yield Lever(setting, f"{will} -> {was}", now.totals, then.totals, remote=_remote(now, then))


def _remote(before: Volume, after: Volume) -> tuple[tuple[int, float], tuple[int, float]] | None:
    sent = [[c for c in v.costs if c.endpoint] for v in (before, after)]
    if not any(sent):
        return None
    b, a = ((sum(c.series for c in s), sum(c.samples_per_second for c in s)) for s in sent)
    return b, a


def _value(model: Any, path: tuple[str, ...]) -> Any:
    return reduce(getattr, path, model)


def _default(model: Any, path: tuple[str, ...]) -> Any:
    return type(_value(model, path[:-1])).model_fields[path[-1]].get_default(call_default_factory=True)


def _with(model: Any, path: tuple[str, ...], value: Any) -> Any:
    head, *rest = path
    return model.model_copy(update={head: _with(getattr(model, head), tuple(rest), value) if rest else value})


def _shown(value: Any, catalog: Catalog) -> str:
    if value is None:  # histogramBuckets unset: the catalog's
        value = next(m.buckets for m in catalog.metrics if m.kind == "histogram")
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]" if not value or isinstance(value[0], str) else str(len(value))
    return str(value)


def totals_data(t: Totals) -> dict[str, Any]:
    return {
        "series": t.series,
        "samplesPerSecond": round(t.samples_per_second, 3),
        "samplesPerMonth": round(month_samples(t.samples_per_second)),
        "moneyPerMonth": round(t.usd_per_month, 2),
    }


def as_data(v: Volume) -> dict[str, Any]:
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
                "overQuota": list(c.quota),
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
                "set": lv.set,
                **(
                    {
                        "remoteWrite": {
                            k: {"series": n, "samplesPerSecond": round(r, 3)}
                            for k, (n, r) in zip(("before", "after"), lv.remote, strict=True)
                        }
                    }
                    if lv.remote
                    else {}
                ),
            }
            for lv in v.levers
        ],
        "overBudget": [{"key": ".".join(str(p) for p in path), "message": m} for path, m in v.over],
    }
