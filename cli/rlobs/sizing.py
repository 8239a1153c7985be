"""`rlobs plan`: a profile's or a fleet's volume with its levers and budgets, and the text that shows it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from rlobs.profile.model import ProfileBase
from rlobs.profile.objectives import Budget
from rlobs.profile.yamlsource import Path
from rlobs.rl.catalog import Catalog, for_profile, load_catalog
from rlobs.rl.volume import Totals, Volume, amp_quota, as_data, month_samples, over_budget, planned, prices, totals_data
from rlobs.targets import TARGETS


@dataclass(frozen=True, slots=True)
class FleetVolume:
    name: str
    clusters: tuple[Volume, ...]
    totals: Totals
    over: tuple[tuple[Path, str], ...]  # the fleet budget's keys and the AMP workspaces above their quota


def plan_profile(profile: ProfileBase, catalog: Catalog | None = None) -> Volume:
    return planned(profile, for_profile(catalog or load_catalog(), profile), TARGETS[profile.target].volume)


def plan_fleet(name: str, budget: Budget, profiles: list[ProfileBase]) -> FleetVolume:
    """Each AMP workspace is checked against its quota once: the clusters that remote-write to one URL share it."""
    catalog = load_catalog()
    clusters = tuple(plan_profile(p, catalog) for p in profiles)
    totals = Totals(
        sum(c.totals.series for c in clusters),
        sum(c.totals.samples_per_second for c in clusters),
        sum(c.totals.usd_per_month for c in clusters),
    )
    over = over_budget(totals, budget)
    workspaces: defaultdict[str, float] = defaultdict(float)
    for cost in (c for v in clusters for c in v.costs if c.backend == "amp"):
        workspaces[cost.endpoint] += cost.samples_per_second
    over += [(("clusters",), f"{url}: {m}") for url, rate in workspaces.items() for m in amp_quota(rate)]
    # Cloud Monitoring's limit is per monitored resource, so clusters do not add up: each is checked alone.
    over += [
        (("clusters",), f"{v.name}: {m}") for v in clusters for c in v.costs if c.backend == "gmp" for m in c.quota
    ]
    return FleetVolume(name, clusters, totals, tuple(over))


def fleet_data(f: FleetVolume) -> dict[str, Any]:
    return {
        "name": f.name,
        "totals": totals_data(f.totals),
        "clusters": [as_data(v) for v in f.clusters],
        "overBudget": [{"key": ".".join(map(str, k)), "message": m} for k, m in f.over],
    }


def text(v: Volume) -> str:
    t = v.totals
    lines = [f"{v.name}: {t.series:,} active series, {t.samples_per_second:,.1f} samples/s"]
    width = max(len(f.name) for f in v.families)
    lines += [f"  {'FAMILY'.ljust(width)}  {'SERIES':>7}  {'SAMPLES/S':>10}  INTERVAL"]
    for f in v.families:
        mark = "  (estimate)" if f.estimate else ""
        rate = f"{f.samples_per_second:,.2f}"
        lines.append(f"  {f.name.ljust(width)}  {f.series:>7,}  {rate:>10}  {f.interval_s:g}s{mark}")
    lines.append(
        f"Per month: {month_samples(t.samples_per_second):,.0f} samples, at list prices read {prices()['checked']}:"
    )
    for c in v.costs:
        lines.append(f"  {c.title}: {c.usd_per_month:,.2f} USD ({c.source})")
        lines += [f"    {note}" for note in c.notes] + [f"    over quota: {q}" for q in c.quota]
    for source, estimate in sorted({f.source: f.estimate for f in v.families if f.estimate}.items()):
        lines.append(f"Estimate, {source}: {estimate}")
    for lv in v.levers:
        mark = "set in the profile, against its default" if lv.set else "unset, tried"
        remote = ""
        if lv.remote:
            (s0, r0), (s1, r1) = lv.remote
            remote = f"; remote write {s0:,} -> {s1:,} series, {r0:,.1f} -> {r1:,.1f} samples/s"
        lines.append(f"Lever {lv.setting} {lv.change} ({mark}): {_effect(lv.before, lv.after)}{remote}")
    lines += [f"Over budget: {'.'.join(map(str, k))}: {m}" for k, m in v.over]
    return "\n".join(lines) + "\n"


def _effect(before: Totals, after: Totals) -> str:
    return (
        f"{before.series:,} -> {after.series:,} series, {before.samples_per_second:,.1f} -> "
        f"{after.samples_per_second:,.1f} samples/s, {before.usd_per_month:,.2f} -> {after.usd_per_month:,.2f} USD per "
        "month"
    )


def fleet_text(f: FleetVolume) -> str:
    t = f.totals
    out = "".join(
        f"{v.name}: {v.totals.series:,} series, {v.totals.samples_per_second:,.1f} samples/s, "
        + ", ".join(f"{c.title} {c.usd_per_month:,.2f} USD" for c in v.costs)
        + "".join(f"\n  over budget: {'.'.join(map(str, k))}: {m}" for k, m in v.over)
        + "\n"
        for v in f.clusters
    )
    out += (
        f"{f.name} (fleet, {len(f.clusters)} clusters): {t.series:,} active series, "
        f"{t.samples_per_second:,.1f} samples/s, {t.usd_per_month:,.2f} USD per month (each cluster priced alone)\n"
    )
    return out + "".join(f"Over budget: {'.'.join(map(str, k))}: {m}\n" for k, m in f.over)
