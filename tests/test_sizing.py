"""`rlobs plan` in-process: text and JSON for each blueprint and the example fleet, --check, budget warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlobs.main import app
from testing.helpers import GOOD, REPO

runner = CliRunner()
BLUEPRINTS = [REPO / "blueprints" / n for n in ("eks-jark.yaml", "gke-managed-otel.yaml", "fleet/rl-fleet.yaml")]


@pytest.mark.parametrize("path", BLUEPRINTS, ids=lambda p: p.name)
def test_every_blueprint_and_the_fleet_print_a_plan(path: Path) -> None:
    result = runner.invoke(app, ["plan", str(path)])
    assert result.exit_code == 0, result.output
    assert "active series" in result.stdout and "samples/s" in result.stdout and "USD" in result.stdout
    data = json.loads(runner.invoke(app, ["plan", str(path), "--format", "json"]).stdout)
    plans = data.get("clusters", [data])
    assert all(p["prices"]["checked"] and all(b["source"].startswith("https://") for b in p["backends"]) for p in plans)
    assert data["totals"]["series"] == sum(p["totals"]["series"] for p in plans)


def _budgeted(tmp_path: Path, series: int) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(GOOD + f"plan:\n  budget:\n    series: {series}\n")
    return path


def test_check_exits_1_above_a_budget_and_0_below(tmp_path: Path) -> None:
    above = runner.invoke(app, ["plan", str(_budgeted(tmp_path, 100)), "--check"])
    assert above.exit_code == 1
    assert "Over budget: plan.budget.series: expected at most 100, got a plan of 181 active series" in above.stdout
    assert runner.invoke(app, ["plan", str(_budgeted(tmp_path, 100))]).exit_code == 0  # no --check: a report
    assert runner.invoke(app, ["plan", str(_budgeted(tmp_path, 1000)), "--check"]).exit_code == 0


def test_validate_warns_above_a_budget_with_the_located_key(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(_budgeted(tmp_path, 100)), "--format", "json"])
    assert result.exit_code == 0, result.output
    (verdict,) = json.loads(result.stdout)
    (warning,) = [w for w in verdict["warnings"] if w["path"] == "plan.budget.series"]
    assert (warning["line"], warning["column"]) == (18, 5)  # the series: key GOOD's budget sets
    assert warning["message"] == "expected at most 100, got a plan of 181 active series (rlobs plan shows where)"


def test_a_fleet_checks_its_own_budget(tmp_path: Path) -> None:
    text = (REPO / "blueprints" / "fleet" / "rl-fleet.yaml").read_text() + "plan:\n  budget:\n    series: 1000\n"
    path = tmp_path / "fleet.yaml"
    path.write_text(text)
    result = runner.invoke(app, ["plan", str(path), "--check"])
    assert result.exit_code == 1
    assert "Over budget: plan.budget.series" in result.stdout
