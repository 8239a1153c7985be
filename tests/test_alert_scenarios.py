"""Every alert of the bundle on every realistic scenario, evaluated by promtool: each fault fires its own alert and
nothing else, and no alert fires on a healthy run (cold start, plateau, noisy rewards, long iterations, clean end)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.rl import naming, promrules
from rlobs.rl.facts import RlFacts
from testing.bundles import facts
from testing.helpers import profile, tool
from testing.scenarios import MINUTES, SCENARIOS, Run, buckets, values

pytestmark = pytest.mark.slow

# gauge/counter series of a run: catalog key -> the Run field
_SCALARS = {
    "run_state": "state",
    "train_steps": "steps",
    "train_loss": "loss",
    "loss_nonfinite": "nonfinite",
    "reward_mean": "reward",
    "train_mfu": "mfu",
}
_HISTOGRAMS = {"loop_duration": "loops", "sync_duration": "syncs"}


def _series(rl: RlFacts, name: str, run: Run) -> list[dict[str, str]]:
    labels = {**rl.scope, rl.catalog.attribute("run_id").name: name}
    out = []
    for key, attr in _SCALARS.items():
        selector = naming.selector(rl.catalog.metric(key), rl.pipeline, "", labels)
        out.append({"series": selector, "values": values(getattr(run, attr))})
    for key, attr in _HISTOGRAMS.items():
        metric = rl.catalog.metric(key)
        for le, samples in buckets(getattr(run, attr), metric.buckets, run.state).items():
            selector = naming.selector(metric, rl.pipeline, "bucket", {**labels, "le": le})
            out.append({"series": selector, "values": values(samples)})
    return out


def _test_file(rl: RlFacts) -> dict[str, Any]:
    series = [s for name, (run, _) in SCENARIOS.items() for s in _series(rl, name, run)]
    checks = []
    for alert in rl.alerts:
        firing = sorted(name for name, (_, expected) in SCENARIOS.items() if alert.name in expected)
        checks.append(
            {
                "eval_time": f"{MINUTES}m",
                "alertname": alert.name,
                "exp_alerts": [promrules.expected_alert(rl, alert, run) for run in firing],
            }
        )
    return {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [{"name": "scenarios", "interval": "1m", "input_series": series, "alert_rule_test": checks}],
    }


@pytest.mark.parametrize("name", ["eks-jark", "eks-prometheus-exporter"])
def test_each_fault_fires_its_alert_and_no_healthy_run_fires(name: str, tmp_path: Path) -> None:
    promtool = tool("promtool", "evaluates the bundle's rules on the scenarios")
    rl = facts(profile(name))
    assert {a.name for a in rl.alerts} >= {a for _, expected in SCENARIOS.values() for a in expected}
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": promrules.rule_groups(rl)}), encoding="utf-8")
    (tmp_path / "scenarios.test.yaml").write_text(yaml.safe_dump(_test_file(rl)), encoding="utf-8")
    proc = subprocess.run(
        [promtool, "test", "rules", "scenarios.test.yaml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]


def test_the_scenarios_cover_every_alert() -> None:
    rl = facts(profile("eks-jark"))
    faults = {a for _, expected in SCENARIOS.values() for a in expected}
    assert faults == {a.name for a in rl.alerts}
    assert sum(1 for _, expected in SCENARIOS.values() if not expected) >= 5  # healthy runs


def test_two_bundles_in_one_cluster_alert_on_their_own_runs_only(tmp_path: Path) -> None:
    """Team A's and team B's bundles in one cluster, each with a run of the same id: A's stalled run fires A's alert
    once and never B's; B's healthy run fires nothing in either bundle."""
    from rlobs.targets import parse_profile
    from testing.helpers import all_profiles

    promtool = tool("promtool", "evaluates two bundles' rules on one cluster's series")
    text = all_profiles()["eks-jark"]
    team_b = text.replace("name: rl-eks", "name: rl-eks-b", 1).replace("namespace: rl\n", "namespace: team-b\n", 1)
    a, b = facts(profile("eks-jark")), facts(parse_profile(team_b, "b.yaml"))
    assert a.scope != b.scope
    stalled, healthy = SCENARIOS["stall"][0], SCENARIOS["converged-plateau"][0]
    series = _series(a, "r1", stalled) + _series(b, "r1", healthy)  # one run id in both namespaces
    groups = promrules.rule_groups(a) + promrules.rule_groups(b)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}), encoding="utf-8")
    checks = [
        {
            "eval_time": f"{MINUTES}m",
            "alertname": alert.name,
            "exp_alerts": [promrules.expected_alert(a, alert, "r1")] if alert.name == "RLTrainingStalled" else [],
        }
        for alert in a.alerts
    ]
    test = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": checks}],
    }
    (tmp_path / "two.test.yaml").write_text(yaml.safe_dump(test), encoding="utf-8")
    proc = subprocess.run([promtool, "test", "rules", "two.test.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-1000:]
