"""Kubernetes version support windows: the packaged calendar is what tools/kube_versions.py reads from its pinned
source, and `validate` warns (exit 0) for a version past standard support and refuses (exit 2) one that is past
all support or not released, each at its line. Every case fixes the day it is judged on."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from rlobs.main import app
from rlobs.profile.kube_versions import TODAY_ENV
from rlobs.resources import read_text
from testing.helpers import REPO, all_profiles

runner = CliRunner()


def _tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    assert spec and spec.loader
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_the_packaged_calendar_is_built_from_its_pinned_source() -> None:
    # The tool's pinned source: the two product pages at its COMMIT kept beside the tests (or a checkout named here).
    source = Path(os.environ.get("RLOBS_ENDOFLIFE_DATE") or REPO / "tests/upstream/endoflife.date")
    tool = _tool("kube_versions")
    assert tool.COMMIT in (source / "README.md").read_text(encoding="utf-8") or "RLOBS_ENDOFLIFE_DATE" in os.environ
    assert tool.build(source) == json.loads(read_text("data", "kubernetes_versions.json"))


def test_the_calendar_names_its_source_and_orders_its_dates() -> None:
    table = json.loads(read_text("data", "kubernetes_versions.json"))
    assert table["source"]["repository"] == "endoflife-date/endoflife.date" and len(table["source"]["commit"]) == 40
    for provider in ("eks", "gke"):
        assert table[provider]["calendar"].startswith("https://")
        for version, w in table[provider]["versions"].items():
            dates = [w["released"], w["endOfStandardSupport"], w["endOfExtendedSupport"] or "9999"]
            assert dates == sorted(dates), (provider, version)


def _validate(tmp_path: Path, version: str, today: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, int]:
    text = all_profiles()["eks-jark"]
    assert 'kubernetesVersion: "1.35"' in text
    profile = tmp_path / "p.yaml"
    profile.write_text(text.replace('kubernetesVersion: "1.35"', f'kubernetesVersion: "{version}"'), encoding="utf-8")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "kubernetesVersion:" in t)
    monkeypatch.setenv(TODAY_ENV, today)
    result = runner.invoke(app, ["validate", str(profile)])
    about = [x for x in result.stderr.splitlines() if "kubernetesVersion" in x]
    return result.exit_code, "\n".join(about), line


def test_a_version_past_standard_support_warns_with_its_dates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, warning, line = _validate(tmp_path, "1.34", "2026-12-03", monkeypatch)
    assert code == 0
    assert warning.startswith(f"{tmp_path / 'p.yaml'}:{line}:5: warning: eks.cluster.kubernetesVersion: ")
    assert "ended on 2026-12-02" in warning and "until 2027-12-02" in warning


@pytest.mark.parametrize(("version", "today"), [("1.34", "2026-12-02"), ("1.35", "2026-12-03")])
def test_a_version_in_standard_support_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str, today: str
) -> None:
    assert _validate(tmp_path, version, today, monkeypatch)[:2] == (0, "")


@pytest.mark.parametrize(
    ("version", "today", "expected"),
    [
        ("1.29", "2026-12-03", "its support ended on 2026-03-23"),
        ("1.34", "2027-12-03", "its support ended on 2027-12-02"),
        ("1.36", "2026-06-01", "which EKS has not released"),
        ("1.41", "2026-12-03", "offers on 2026-12-03 (1.32 to 1.36"),
    ],
)
def test_an_unsupported_version_is_refused_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str, today: str, expected: str
) -> None:
    code, error, line = _validate(tmp_path, version, today, monkeypatch)
    assert code == 2
    assert error.startswith(f"error: {tmp_path / 'p.yaml'}:{line}:") and expected in error, error


def test_an_unset_version_is_judged_as_its_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\n".join(t for t in all_profiles()["eks-jark"].splitlines() if "kubernetesVersion:" not in t) + "\n"
    profile = tmp_path / "p.yaml"
    profile.write_text(text, encoding="utf-8")
    monkeypatch.setenv(TODAY_ENV, "2027-04-01")  # 1.35, the default, is then in extended support
    result = runner.invoke(app, ["validate", str(profile)])
    assert result.exit_code == 0
    assert "warning: eks.cluster: expected a Kubernetes version in EKS standard support" in result.stderr
    assert "unset: that is its default" in result.stderr


@pytest.mark.parametrize("command", ["validate", "render"])
def test_a_bad_day_in_the_environment_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setenv(TODAY_ENV, "next tuesday")
    out = tmp_path / "out"
    args = [command, str(REPO / "blueprints" / "eks-jark.yaml"), *(["-o", str(out)] if command == "render" else [])]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr == "error: RLOBS_TODAY: expected a date like 2026-12-03, got 'next tuesday'\n"
