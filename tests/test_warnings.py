"""Warnings, not errors: untouched blueprint placeholders and alerts that notify nobody, located like problems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlobs.blueprints import load_blueprints
from rlobs.main import app
from rlobs.profile.warnings import FLEET_PLACEHOLDERS
from rlobs.profile.yamlsource import load_located, load_yaml
from rlobs.targets import TARGETS, parse_profile, placeholders
from rlobs.targets import warnings as find
from testing.helpers import GOOD, all_profiles

runner = CliRunner()

OWN_GKE = GOOD + "  notificationChannels: [projects/rl-prod/notificationChannels/1]\n"


def _warnings(text: str) -> list[str]:
    parse_profile(text, "p.yaml")  # a warning is only ever about a valid profile
    return [f"{w}" for w in find(load_located(text), "p.yaml")]


def test_placeholders_are_the_blueprints_own_values() -> None:
    found = placeholders()
    for bp in load_blueprints().values():
        data = load_yaml(bp.text)
        for path in [*FLEET_PLACEHOLDERS, *(p for t in TARGETS.values() for p in t.PLACEHOLDERS)]:
            value: object = data
            for part in path:
                value = value.get(part) if isinstance(value, dict) else None
            assert value is None or value in found, (bp.name, path)
    assert {"https://github.com/acme/gitops.git", "acme/gitops", "my-rl-project"} <= set(found)


def test_the_eks_blueprint_as_shipped_warns_at_its_repository() -> None:
    text = all_profiles()["eks-jark"]
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "repoUrl:" in t)
    assert _warnings(text) == [
        f"p.yaml:{line}:5: eks.gitops.repoUrl: expected your own GitOps repository (Argo CD syncs the bundle from "
        "it), got the blueprint's placeholder 'https://github.com/acme/gitops.git'"
    ]


@pytest.mark.parametrize("url", ["git@github.com:acme/gitops.git", "ssh://git@github.com/acme/gitops.git"])
def test_the_placeholder_repository_is_found_in_any_url_form(url: str) -> None:
    text = all_profiles()["eks-jark"].replace("https://github.com/acme/gitops.git", url)
    (warning,) = _warnings(text)
    assert "eks.gitops.repoUrl" in warning and "'acme/gitops'" in warning


def test_the_gke_blueprint_as_shipped_warns_at_its_project_and_its_empty_channels() -> None:
    lines = _warnings(all_profiles()["gke-managed-otel"])
    assert [w.split(": ")[1] for w in lines] == ["gke.project", "gke.notificationChannels"]
    assert "got the blueprint's placeholder 'my-rl-project'" in lines[0]
    assert "every alert policy fires but notifies nobody" in lines[1]


def test_a_placeholder_inside_another_value_is_found() -> None:
    text = OWN_GKE.replace("projects/rl-prod/", "projects/my-rl-project/")
    (warning,) = _warnings(text)
    assert warning.startswith("p.yaml:16:26: gke.notificationChannels[0]: expected your own GCP project ID")


def test_gke_without_channels_warns_at_the_section_and_not_when_alerts_are_off() -> None:
    (warning,) = _warnings(GOOD)
    assert warning.startswith("p.yaml:12:1: gke.notificationChannels: expected a notification channel, got none")
    assert _warnings(GOOD + "alerts: {enabled: false}\n") == []
    assert _warnings(OWN_GKE) == []


def _eks(receivers: str) -> str:
    text = all_profiles()["eks-jark"].replace("acme/gitops", "rl-team/gitops")
    start = text.index("  alertmanagerReceivers:")
    end = text.index("  # terraformVariables:")
    return text[:start] + receivers + text[end:]


@pytest.mark.parametrize(
    ("receivers", "warned"),
    [
        ("", True),
        ("  alertmanagerReceivers: []\n", True),
        (
            "  alertmanagerReceivers:\n    - {name: ops, type: pagerduty, alerts: cluster, "
            "secretRef: {name: pd, key: routing-key}}\n",
            True,
        ),
        (
            "  alertmanagerReceivers:\n    - {name: ops, type: pagerduty, alerts: all, "
            "secretRef: {name: pd, key: routing-key}}\n",
            False,
        ),
    ],
)
def test_eks_alerts_without_a_receiver_for_them_warn(receivers: str, warned: bool) -> None:
    found = _warnings(_eks(receivers))
    assert [w.split(": ")[1] for w in found] == (["eks.alertmanagerReceivers"] if warned else [])
    if warned:
        assert "the RL alerts fire but notify nobody" in found[0]


def test_validate_prints_warnings_on_stderr_and_exits_0(tmp_path: Path) -> None:
    profile = tmp_path / "gke.yaml"
    profile.write_text(all_profiles()["gke-managed-otel"], encoding="utf-8")
    result = runner.invoke(app, ["validate", str(profile)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{profile}: ok (rl-gke)\n"
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and all(line.startswith(f"{profile}:") and ": warning: gke." in line for line in lines)


def test_json_output_carries_the_warnings_as_data_only(tmp_path: Path) -> None:
    profile = tmp_path / "gke.yaml"
    profile.write_text(all_profiles()["gke-managed-otel"], encoding="utf-8")
    for argv in (["validate"], ["render", "--dry-run", "-o", str(tmp_path / "o")]):
        result = runner.invoke(app, [*argv, "--format", "json", str(profile)])
        assert result.exit_code == 0, result.output
        assert result.stderr == ""
        (entry,) = json.loads(result.stdout)
        assert [w["path"] for w in entry["warnings"]] == ["gke.project", "gke.notificationChannels"]
        assert entry["warnings"][0]["line"] > 1


def test_render_prints_the_warnings_and_writes_the_bundle(tmp_path: Path) -> None:
    profile = tmp_path / "eks.yaml"
    profile.write_text(all_profiles()["eks-jark"], encoding="utf-8")
    result = runner.invoke(app, ["render", str(profile), "-o", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o/README.md").exists()
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"{profile}:") and ": warning: eks.gitops.repoUrl: " in line


def test_a_profile_that_does_not_validate_reports_its_error_and_no_budget(tmp_path: Path) -> None:
    # Warnings are looked for in every profile that parses; only a valid one is sized against plan.budget.
    profile = tmp_path / "gke.yaml"
    budget = "plan: {budget: {series: 1}}\n"
    profile.write_text(GOOD + budget, encoding="utf-8")
    assert "plan.budget.series" in runner.invoke(app, ["validate", str(profile)]).stderr
    profile.write_text(GOOD.replace("my-project", "BAD_PROJECT") + budget, encoding="utf-8")
    result = runner.invoke(app, ["validate", str(profile)])
    assert result.exit_code == 2, result.output
    assert "gke.project: expected a GCP project ID" in result.stderr and "plan.budget" not in result.stderr
