"""The behavioural suite: every scenario of testing/scenario_cases.py through promtool with the bundle's own rules,
on both EKS pipelines. Each scenario's expected alerts are written down in it; the suite requires 0 false
positives, 0 false negatives, 0 flaps (an alert that fires twice for one fault), and every time to fire within the
issue's bound for its kind of fault (the table: `make scenarios`, docs/scenarios.md)."""

from __future__ import annotations

import pytest

from testing.helpers import tool
from testing.scenario_cases import BUDGET_PAGES, STALL, scenarios
from testing.scenario_report import GKE, PIPELINES, judge
from testing.scenario_run import accounting, bundle, burns, merge, run

pytestmark = pytest.mark.slow

# The scenarios the suite started with: they stay.
ORIGINAL = {
    "healthy-grpo-cold-start",
    "converged-plateau",
    "noisy-rewards",
    "long-iterations",
    "finished",
    "stall",
    "crash",
    "nan-loss",
    "divergence",
    "reward-collapse",
    "low-mfu",
    "slow-loop",
    "slow-sync",
}


def test_the_suite_covers_the_issue() -> None:
    found = scenarios()
    assert len(found) >= 25
    assert set(found) >= ORIGINAL
    faults = {a for sc in found.values() for expected in sc.expected.values() for a in expected}
    assert len(faults) == 7  # every alert of an EKS bundle has a scenario that must fire it
    assert sum(1 for sc in found.values() if not any(sc.expected.values())) >= 15  # healthy runs
    # Time to fire at its worst: a hang or crash just after a step boundary or mid-step, a divergence and a collapse
    # on 10-minute iterations (their bounds grow with the iteration: 3x its p95, 3 iterations + `for`).
    assert {"hang-after-step", "hang-after-long-step", "hang-mid-long-step", "crash-after-long-step"} <= set(found)
    assert {"divergence-long-iterations", "collapse-long-iterations"} <= set(found)


def test_scenarios_sharing_a_promtool_test_never_write_one_series() -> None:
    """Scenarios share a promtool test (scenario_run.merge): an instance or run id two of them use is made unique, each
    run label maps back to its scenario and own run id, and through the collector (one `up` for every run) an outage
    has a test of its own."""
    found = scenarios()
    # Two scenarios with processes on instances a and b, an outage, and one run id (stall) in two scenarios.
    cases = {n: found[n] for n in ("restart-new-pod", "reused-run-id", "scrape-outage", "stall")}
    cases["again"] = found["stall"]
    for profile, tests in (("eks-prometheus-exporter", 1), ("eks-jark", 2)):
        merged = merge(bundle(profile, {}), cases)
        assert len(merged.inputs) == tests
        assert all(len({s["series"] for s in test}) == len(test) for test in merged.inputs)
        assert sorted(merged.owner.values()) == sorted({(n, p.run) for n, sc in cases.items() for p in sc.procs})
        assert merged.owner["stall/stall"] == ("stall", "stall") and merged.owner["again/stall"] == ("again", "stall")


# GKE's policies inline every lifecycle piece (a policy reads no recording rule), so a scenario costs promtool more
# on them than on the EKS rules: the suite runs one of each kind of fault and of quiet run on the default GKE
# pipeline, and `make scenarios` runs every scenario on both GKE pipelines.
GKE_SAMPLE = frozenset(
    {
        *("healthy-grpo-cold-start", "checkpoint-pause", "restart-new-pod", "scrape-outage", "hang-before-first-step"),
        *("hang-after-step", "crash", "nan-loss", "divergence", "reward-collapse", "low-mfu", "slow-loop", "slow-sync"),
    }
)


@pytest.mark.parametrize("profile", [*PIPELINES, next(iter(GKE))])
def test_every_scenario_fires_exactly_its_alerts_in_time(profile: str) -> None:
    """EKS: the bundle's PrometheusRule, on every scenario; GKE: its alert policies' PromQL conditions
    (scenario_run.policy_rules), on GKE_SAMPLE. A known wrong verdict (scenario_report.KNOWN) must still be wrong:
    it is listed, never hidden."""
    tool("promtool", "evaluates the bundle's rules on the scenarios")
    rows = judge(profile, run(profile, GKE_SAMPLE if profile in GKE else None))
    bad = [(r.scenario, r.run, r.alert, r.verdict, r.fired, r.ttf, r.limit) for r in rows if r.verdict != "ok"]
    assert [b for b, r in zip(bad, [r for r in rows if r.verdict != "ok"], strict=True) if not r.known] == []
    assert all(r.verdict != "ok" for r in rows if r.known)
    # One fault, one page: a stalled, failed or vanished run fires nothing but the stall page.
    stalled = {(r.scenario, r.run) for r in rows if r.alert == STALL and r.fired is not None}
    assert all(r.alert == STALL or r.fired is None for r in rows if (r.scenario, r.run) in stalled)


@pytest.mark.parametrize("profile", list(PIPELINES))
def test_time_accounting_adds_up_on_every_scenario(profile: str) -> None:
    """The expected accounting of each scenario is written down in it: the buckets Prometheus reads sum to the run's
    wall time within 2%, and each bucket is within 2% of its expected minutes."""
    tool("promtool", "reads the time accounting of the scenarios")
    found = scenarios()
    assert all(sc.accounting for sc in found.values())
    bad, worst = [], 0.0
    got_all = accounting(profile)
    assert set(got_all) == set(found)
    for name, got in got_all.items():
        expected = found[name].accounting
        wall = sum(expected.values())
        if abs(sum(got.values()) - wall) > 0.02 * wall:
            bad.append((name, "wall", wall, sum(got.values())))
        for bucket in {*expected, *got}:
            want, have = expected.get(bucket, 0.0), got.get(bucket, 0.0)
            if abs(have - want) > 0.02 * want + 1e-6:
                bad.append((name, bucket, round(want, 2), round(have, 2)))
            worst = max(worst, abs(have - want) / want if want else 0.0)
    print(f"\nworst bucket off by {worst:.2%}")
    assert bad == []


@pytest.mark.parametrize("profile", list(PIPELINES))
def test_the_goodput_slo_pages_on_the_scenarios_that_spend_its_budget(profile: str) -> None:
    """The goodput SLO's burn-rate page fires once on each scenario of BUDGET_PAGES (each scenario its own workload),
    after the fault's onset, and on no other. Its ticket is not judged here (see BUDGET_PAGES)."""
    tool("promtool", "evaluates the SLO rules on the scenarios")
    pages = {n: fired["RLGoodputBudgetBurn"] for n, fired in burns(profile).items() if "RLGoodputBudgetBurn" in fired}
    assert set(pages) == BUDGET_PAGES
    assert all(p.episodes == 1 and p.first >= (scenarios()[n].onset or 0.0) for n, p in pages.items())
