"""`rlobs plan`: a profile's (or a fleet's) volume with its levers and budgets, and the text that shows it. Pure:
profiles in, data and text out (each target counts its own bundle: Target.volume)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from rlobs.profile.fields import duration_seconds
from rlobs.profile.model import Budget, ProfileBase
from rlobs.profile.yamlsource import Path
from rlobs.rl.catalog import Catalog, load_catalog
from rlobs.rl.volume import Lever, Totals, Volume, amp_quota, as_data, over_budget, prices, totals_data
from rlobs.targets import TARGETS

# The longest export interval a lever suggests: Managed OpenTelemetry's limit (targets/gke/profile.py).
_LONGEST_EXPORT_S = 300


@dataclass(frozen=True, slots=True)
class FleetVolume:
    name: str
    clusters: tuple[Volume, ...]
    totals: Totals
    over: tuple[tuple[Path, str], ...]  # the fleet budget's keys and the AMP workspaces above their quota


def plan_profile(profile: ProfileBase, catalog: Catalog | None = None) -> Volume:
    """The profile's volume, the effect of each lever it has, and the budget keys it is above."""
    catalog = catalog or load_catalog()
    volume = TARGETS[profile.target].volume(profile, catalog)
    return replace(
        volume,
        levers=tuple(_levers(profile, catalog, volume.totals)),
        over=tuple(over_budget(volume.totals, profile.plan.budget)),
    )


def _levers(profile: ProfileBase, catalog: Catalog, before: Totals) -> Iterator[Lever]:
    """Each profile setting that would lower the plan, tried once; shown only where it changes the figures."""
    w = profile.workload
    now = duration_seconds(w.export_interval)
    if now < _LONGEST_EXPORT_S:
        longer = f"{min(2 * now, _LONGEST_EXPORT_S)}s"
        tried = profile.model_copy(update={"workload": w.model_copy(update={"export_interval": longer})})
        after = TARGETS[profile.target].volume(tried, catalog).totals
        if after != before:
            yield Lever("workload.exportInterval", f"{w.export_interval} -> {longer}", before, after)


def plan_fleet(name: str, budget: Budget, profiles: list[ProfileBase]) -> FleetVolume:
    """Every cluster's plan, the fleet's totals against its budget, and each AMP workspace against its quota (the
    clusters that remote-write to one URL share it)."""
    catalog = load_catalog()
    clusters = tuple(plan_profile(p, catalog) for p in profiles)
    totals = Totals(
        sum(c.totals.series for c in clusters),
        sum(c.totals.samples_per_second for c in clusters),
        sum(c.totals.usd_per_month for c in clusters),
    )
    over = over_budget(totals, budget)
    workspaces: dict[str, float] = {}
    for cost in (c for v in clusters for c in v.costs if c.backend == "amp"):
        workspaces[cost.endpoint] = workspaces.get(cost.endpoint, 0.0) + cost.samples_per_second
    over += [(("clusters",), f"{url}: {m}") for url, rate in workspaces.items() for m in amp_quota(rate)]
    return FleetVolume(name, clusters, totals, tuple(over))


def fleet_data(f: FleetVolume) -> dict[str, Any]:
    return {
        "name": f.name,
        "totals": totals_data(f.totals),
        "clusters": [as_data(v) for v in f.clusters],
        "overBudget": [{"key": ".".join(map(str, k)), "message": m} for k, m in f.over],
    }


def text(v: Volume) -> str:
    """The plan as a terminal report: families, backends, levers, budget."""
    t = v.totals
    lines = [f"{v.name}: {t.series:,} active series, {t.samples_per_second:,.1f} samples/s"]
    width = max(len(f.name) for f in v.families)
    lines += [f"  {'FAMILY'.ljust(width)}  {'SERIES':>7}  {'SAMPLES/S':>10}  INTERVAL"]
    for f in v.families:
        mark = "  (estimate)" if f.estimate else ""
        rate = f"{f.samples_per_second:,.2f}"
        lines.append(f"  {f.name.ljust(width)}  {f.series:>7,}  {rate:>10}  {f.interval_s:g}s{mark}")
    lines.append(f"Per month, at list prices read {prices()['checked']}:")
    for c in v.costs:
        lines.append(f"  {c.title}: {c.usd_per_month:,.2f} USD ({c.source})")
        lines += [f"    {note}" for note in c.notes]
    for e in sorted({f.source: f.estimate for f in v.families if f.estimate}.items()):
        lines.append(f"Estimate, {e[0]}: {e[1]}")
    for lv in v.levers:
        lines.append(
            f"Lever {lv.setting} {lv.change}: {lv.before.samples_per_second:,.1f} -> "
            f"{lv.after.samples_per_second:,.1f} samples/s, {lv.before.usd_per_month:,.2f} -> "
            f"{lv.after.usd_per_month:,.2f} USD per month"
        )
    lines += [f"Over budget: {'.'.join(map(str, k))}: {m}" for k, m in v.over]
    return "\n".join(lines) + "\n"


def fleet_text(f: FleetVolume) -> str:
    t = f.totals
    out = "".join(text(v) + "\n" for v in f.clusters)
    out += (
        f"{f.name} (fleet, {len(f.clusters)} clusters): {t.series:,} active series, "
        f"{t.samples_per_second:,.1f} samples/s, {t.usd_per_month:,.2f} USD per month (each cluster priced alone)\n"
    )
    return out + "".join(f"Over budget: {'.'.join(map(str, k))}: {m}\n" for k, m in f.over)
