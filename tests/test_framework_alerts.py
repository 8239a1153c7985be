"""A bundle true to its framework: an alert whose signals the framework's adapter does not supply is not rendered
(TRL has no loop or sync durations and no MFU), the bundle README says which alerts it gets and gives the line of
code that records each missing signal, and `alerts.recordedInCode` brings an alert back for code that records it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from rlobs.errors import ProfileError
from rlobs.profile.model import ProfileBase as Profile
from rlobs.rl.app import RULE_TESTS_FILE, RULES_FILE
from rlobs.targets import parse_profile
from testing.adapters import with_system
from testing.bundles import build
from testing.helpers import all_profiles, tool
from testing.otlp import CATALOG, Receiver, example_env, render_app

DEAD_FOR_TRL = {"RLLoopRegression", "RLSyncLatencyHigh", "RLMfuLow"}
TRL_ALERTS = ["RLTrainingStalled", "RLRewardCollapse", "RLLossSpike", "RLTelemetryTargetDown"]


def _files(p: Profile) -> dict[str, str]:
    return {r.path: r.text for r in build(p)}


def _rule_names(files: dict[str, str]) -> list[str]:
    groups = yaml.safe_load(files[RULES_FILE])["groups"]
    return [r["alert"] for g in groups for r in g["rules"] if "alert" in r]


def _trl(name: str, extra: str = "") -> Profile:
    if not extra:
        return with_system("trl", name)
    return parse_profile(all_profiles()[name].replace("system: verl", "system: trl") + extra, f"{name}.yaml")


def test_a_trl_eks_bundle_renders_only_the_alerts_trl_feeds() -> None:
    files = _files(_trl("eks-jark"))
    assert _rule_names(files) == TRL_ALERTS
    rules = [d for text in files.values() if "kind: PrometheusRule" in text for d in yaml.safe_load_all(text) if d]
    shipped = {r["alert"] for d in rules for g in d["spec"]["groups"] for r in g["rules"] if "alert" in r}
    assert shipped == set(TRL_ALERTS)
    assert not any(f"## {name}" in files["docs/runbook.md"] for name in DEAD_FOR_TRL)
    # verl feeds every signal the alerts read: nothing is left out.
    assert set(_rule_names(_files(with_system("verl", "eks-jark")))) >= DEAD_FOR_TRL


def test_a_trl_gke_bundle_has_no_dead_alert_policy() -> None:
    files = _files(_trl("gke-managed-otel"))
    policies = [json.loads(t) for p, t in files.items() if p.startswith("monitoring/alert-policies/")]
    names = " ".join(p["displayName"] for p in policies)
    assert policies and not any(name in names for name in DEAD_FOR_TRL), names


@pytest.mark.slow
def test_the_trl_bundles_rule_tests_pass_promtool(tmp_path: Path) -> None:
    promtool = tool("promtool", "runs the rule unit tests shipped in the bundle")
    files = _files(_trl("eks-jark"))
    for rel in (RULES_FILE, RULE_TESTS_FILE):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(files[rel], encoding="utf-8")
    run = subprocess.run([promtool, "test", "rules", RULE_TESTS_FILE], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(yaml.safe_load(files[RULE_TESTS_FILE])["tests"]) == len(TRL_ALERTS)


def test_the_readme_lists_the_alerts_and_the_lines_that_record_the_missing_signals() -> None:
    readme = _files(_trl("eks-jark"))["README.md"]
    section = readme.split("## The alerts trl feeds", 1)[1].split("\n## ", 1)[0]
    assert all(f"`{name}`" in section.split("Left out", 1)[0] for name in TRL_ALERTS)
    for name, signal, key in (
        ("RLMfuLow", "rl.train.mfu", "mfuLow"),
        ("RLLoopRegression", "rl.loop.duration", "loopRegression"),
        ("RLSyncLatencyHigh", "rl.sync.duration", "syncLatency"),
    ):
        assert f"- `{name}` (reads `{signal}`; profile key `alerts.recordedInCode: [{key}]`)" in section
    assert "import rlobs_telemetry" in section and "record_mfu(" in section


def test_recorded_in_code_brings_an_alert_back() -> None:
    names = _rule_names(_files(_trl("eks-jark", "alerts:\n  recordedInCode: [mfuLow]\n")))
    assert "RLMfuLow" in names and "RLLoopRegression" not in names
    with pytest.raises(ProfileError, match="recordedInCode"):
        _trl("eks-jark", "alerts:\n  recordedInCode: [mfu]\n")


@pytest.mark.slow
def test_the_readmes_lines_record_the_missing_signals(tmp_path: Path, receiver: Receiver) -> None:
    """The README's code block, run as is against the bundle's module, exports the three signals TRL lacks."""
    readme = _files(_trl("eks-jark"))["README.md"]
    (block,) = re.findall(r"```python\n(.*?)```", readme.split("## The alerts trl feeds", 1)[1], re.S)
    app = render_app(tmp_path)
    script = app / "train.py"
    script.write_text("mfu, duration_ms = 0.4, 1500.0\n" + textwrap.dedent(block), encoding="utf-8")
    env = example_env(app, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}", OTEL_TRACES_EXPORTER="none")
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    got = receiver.metric_points()
    for key in ("train_mfu", "loop_duration", "sync_duration"):
        assert CATALOG.metric(key).name in got, key
