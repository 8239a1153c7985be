from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.rl import naming, promrules
from rlobs.rl.catalog import load_catalog
from testing.bundles import build, facts
from testing.helpers import profile, tool
from testing.promql import parse

CATALOG = load_catalog()
CLASSIC = [p for p in naming.PIPELINES if not naming.dotted(p)]


def _write(tmp: Path, groups: list[dict[str, Any]], tests: dict[str, Any] | None = None) -> None:
    (tmp / "rl-alerts.rules.yaml").write_text(yaml.safe_dump({"groups": groups}, sort_keys=False), encoding="utf-8")
    if tests is not None:
        (tmp / "rl-alerts.test.yaml").write_text(yaml.safe_dump(tests, sort_keys=False), encoding="utf-8")


def test_rule_group_shape() -> None:
    p = profile("eks-jark")
    [group] = promrules.rule_groups(facts(p, "otel-collector"))
    assert group["name"] == "rlobs-rl-eks.rl-alerts"
    records = [r for r in group["rules"] if "record" in r]
    assert [r["record"] for r in records][:3] == ["rlobs:rl_run_newest", "rlobs:rl_run_state", "rlobs:rl_run_since"]
    # Prometheus evaluates a group's rules in order at one timestamp: a rule may read only the records before it.
    for i, rule in enumerate(group["rules"]):
        before = {r["record"] for r in records[:i]}
        assert set(re.findall(r"rlobs:\w+", rule["expr"])) <= before, rule.get("record") or rule["alert"]
    assert all(r["labels"] == {"job": "rl/grpo-trainer"} for r in records)  # two bundles never collide
    for rule in group["rules"][len(records) :]:
        assert set(rule) <= {"alert", "expr", "for", "keep_firing_for", "labels", "annotations"}
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}
        assert set(rule["annotations"]) == {"summary", "description", "runbook_url"}
        assert "{{ $labels.rl_run_id }}" in rule["annotations"]["summary"]
        assert rule["annotations"]["runbook_url"] == (
            "https://github.com/acme/gitops/blob/main/observability/docs/runbook.md#" + rule["alert"].lower()
        )


def _sections(runbook: str) -> set[str]:
    """The heading anchors of a runbook (GitHub/GitLab: the lower-cased heading text, here one CamelCase word)."""
    return {h.lower() for h in re.findall(r"(?m)^## (\S+)$", runbook)}


def test_every_alerts_runbook_link_resolves_to_a_section_slo_burns_included() -> None:
    """EKS: each PrometheusRule alert's runbook_url; GKE: each alert policy's documentation (the SLO burn-rate
    policies too), in profiles with `slos:`."""
    p = profile("eks-prometheus-exporter")
    files = {r.path: r.text for r in build(p)}
    rules = [r for g in promrules.rule_groups(facts(p)) for r in g["rules"] if "alert" in r]
    assert {r["alert"] for r in rules} >= {"RLGoodputBudgetBurn", "RLGoodputBudgetBurnSlow"}
    for rule in rules:
        path, _, anchor = rule["annotations"]["runbook_url"].partition("#")
        assert path.endswith("/docs/runbook.md") and anchor == rule["alert"].lower(), rule["alert"]
        assert anchor in _sections(files["docs/runbook.md"]), rule["alert"]
    files = {r.path: r.text for r in build(profile("gke-autopilot-jobset"))}
    policies = [json.loads(t) for f, t in files.items() if f.startswith("monitoring/") and "/dashboards/" not in f]
    policies = [d for d in policies if "conditions" in d]
    assert len([d for d in policies if d["documentation"]["subject"].startswith("RLGoodputBudgetBurn")]) == 3
    for policy in policies:
        (anchor,) = re.findall(r"`docs/runbook\.md#(\w+)`", policy["documentation"]["content"])
        assert anchor in _sections(files["docs/runbook.md"]), policy["displayName"]


def test_runbook_url_is_relative_without_an_https_repo() -> None:
    p = profile("gke-managed-otel")
    [group] = promrules.rule_groups(facts(p, "gke-telemetry-api"))
    assert group["rules"][0]["annotations"]["runbook_url"] == "docs/runbook.md#rltrainingstalled"
    assert '{{ index $labels "rl.run.id" }}' in group["rules"][0]["annotations"]["summary"]


def test_disabled_alerts_render_no_group() -> None:
    p = profile("eks-jark")
    off = p.model_copy(update={"alerts": p.alerts.model_copy(update={"enabled": False})})
    assert promrules.rule_groups(facts(off, "otel-collector")) == []


def test_rule_tests_cover_every_alert() -> None:
    p = profile("eks-jark")
    tests = promrules.rule_tests(facts(p, "otel-collector"))
    names = [t["promql_expr_test"][0]["expr"].split('"')[1] for t in tests["tests"]]
    rules = promrules.rule_groups(facts(p, "otel-collector"))[0]["rules"]
    assert names == [r["alert"] for r in rules if "alert" in r]
    for t in tests["tests"]:
        assert t["promql_expr_test"][0]["exp_samples"], t["name"]  # something must fire
        assert "not for" in t["name"]


def test_rule_tests_refuse_dotted_names() -> None:
    with pytest.raises(ValueError, match="classic"):
        promrules.rule_tests(facts(profile("gke-managed-otel"), "gke-telemetry-api"))


def test_dotted_rules_parse_as_prometheus3_promql() -> None:
    [group] = promrules.rule_groups(facts(profile("gke-managed-otel"), "gke-telemetry-api"))
    for rule in group["rules"]:
        parse(rule["expr"])
    with pytest.raises(ValueError):
        parse(group["rules"][0]["expr"].replace(")", "", 1))


@pytest.mark.slow
@pytest.mark.parametrize("pipeline", CLASSIC)
def test_promtool_check_rules(pipeline: naming.Pipeline, tmp_path: Path) -> None:
    promtool = tool("promtool", "checks the generated alerting rules")
    groups = promrules.rule_groups(facts(profile("eks-jark"), pipeline))
    _write(tmp_path, groups)
    run = subprocess.run([promtool, "check", "rules", "rl-alerts.rules.yaml"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    # The Prometheus pipelines: 11 recording rules and 7 alerts; GKE's collector: the 6 RL alerts inline.
    expected = 6 if pipeline == "gke-gmp-collector" else 18
    assert f"SUCCESS: {expected} rules found" in run.stdout


# One case per distinct rule set: eks-jark's own pipeline (otel-collector) is the bundle's shipped tests/ folder, which
# test_bundled_rule_tests_pass_promtool runs (the same rules and tests: it checks they equal promrules' output).
@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "pipeline"),
    [("eks-jark", p) for p in CLASSIC if p != "otel-collector"] + [("gke-managed-otel", "gke-gmp-collector")],
)
def test_promtool_test_rules(name: str, pipeline: naming.Pipeline, tmp_path: Path) -> None:
    promtool = tool("promtool", "runs the generated rule unit tests")
    p = profile(name)
    _write(tmp_path, promrules.rule_groups(facts(p, pipeline)), promrules.rule_tests(facts(p, pipeline)))
    run = subprocess.run([promtool, "test", "rules", "rl-alerts.test.yaml"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.slow
def test_promtool_catches_a_silent_alert_and_a_wrong_name(tmp_path: Path) -> None:
    """The generated tests can fail: an alert that never fires, or a misnamed series, is caught."""
    promtool = tool("promtool", "runs the generated rule unit tests")
    p = profile("eks-jark")
    groups = promrules.rule_groups(facts(p, "otel-collector"))
    tests = promrules.rule_tests(facts(p, "otel-collector"))
    first = sum(1 for r in groups[0]["rules"] if "record" in r)
    for i, rule in enumerate(groups[0]["rules"][first:]):
        broken = copy.deepcopy(groups)
        # A threshold nobody can cross: the bad run stays silent, so the test must fail.
        broken[0]["rules"][first + i]["expr"] = f"({rule['expr']}) and on() vector(0) > 1"
        _write(tmp_path, broken, {**tests, "tests": [tests["tests"][i]]})  # this alert's case only: fast
        run = subprocess.run([promtool, "test", "rules", "rl-alerts.test.yaml"], capture_output=True, text=True)
        assert run.returncode != 0, f"{rule['alert']} still passed with an impossible condition"
    wrong = copy.deepcopy(groups)
    mfu = first + 3
    wrong[0]["rules"][mfu]["expr"] = wrong[0]["rules"][mfu]["expr"].replace("rl_train_mfu_ratio", "rl_train_mfu")
    _write(tmp_path, wrong, {**tests, "tests": [tests["tests"][3]]})
    run = subprocess.run([promtool, "test", "rules", "rl-alerts.test.yaml"], capture_output=True, text=True)
    assert run.returncode != 0 and "RLMfuLow" in run.stdout + run.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", ["eks-jark", "eks-prometheus-exporter"])
def test_bundled_rule_tests_pass_promtool(name: str, tmp_path: Path) -> None:
    """What ships: the bundle's tests/ folder runs as is, and its rules equal the PrometheusRule's groups."""
    from rlobs.rl.app import RULE_TESTS_FILE, RULES_FILE
    from testing.bundles import build, pipeline_of

    promtool = tool("promtool", "runs the rule unit tests shipped in the bundle")
    p = profile(name)
    if name == "eks-jark":  # test_promtool_test_rules leaves this pipeline's rules to this test
        assert pipeline_of(p) == "otel-collector"
    files = {r.path: r.text for r in build(p)}
    for rel in (RULES_FILE, RULE_TESTS_FILE):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(files[rel], encoding="utf-8")
    run = subprocess.run([promtool, "test", "rules", RULE_TESTS_FILE], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    shipped = yaml.safe_load(files[RULES_FILE])["groups"]
    assert shipped == promrules.rule_groups(facts(p))
    assert yaml.safe_load(files[RULE_TESTS_FILE])["tests"] == promrules.rule_tests(facts(p))["tests"]
    rule_docs = [d for text in files.values() if "kind: PrometheusRule" in text for d in yaml.safe_load_all(text) if d]
    assert any(d.get("spec", {}).get("groups") == shipped for d in rule_docs if d.get("kind") == "PrometheusRule")


@pytest.mark.slow
def test_rule_tests_follow_custom_thresholds(tmp_path: Path) -> None:
    """The synthetic series adapt to the profile's thresholds and windows, so users' own settings stay tested."""
    from rlobs.targets import parse_profile
    from testing.helpers import all_profiles

    promtool = tool("promtool", "runs the generated rule unit tests")
    text = all_profiles()["eks-jark"] + (
        "alerts:\n"
        "  stall: {window: 5m, for: 2m, severity: warning}\n"
        "  rewardCollapse: {drop: 0.3, baseline: 30m, for: 10m}\n"
        "  lossSpike: {factor: 10, baseline: 2h, for: 1m}\n"
        "  mfuLow: {threshold: 0.5, for: 10m}\n"
        "  loopRegression: {factor: 3, window: 10m, baseline: 1h, for: 5m}\n"
        "  syncLatency: {thresholdMs: 5000, window: 5m, for: 3m, severity: critical}\n"
    )
    p = parse_profile(text, "custom.yaml")
    groups = promrules.rule_groups(facts(p, "otel-collector"))
    by_name = {r["alert"]: r["expr"] for r in groups[0]["rules"] if "alert" in r}
    assert "< 0.5" in by_name["RLMfuLow"] and "> 5000" in by_name["RLSyncLatencyHigh"]
    _write(tmp_path, groups, promrules.rule_tests(facts(p, "otel-collector")))
    run = subprocess.run([promtool, "test", "rules", "rl-alerts.test.yaml"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.slow
def test_alertmanager_config_inhibits_and_routes_the_platform_warning(tmp_path: Path) -> None:
    """amtool reads the rendered config: 2 inhibit rules; the target-down warning never reaches the RL receiver."""
    import json

    from rlobs.targets.eks import alerting

    amtool = tool("amtool", "checks the Alertmanager config")
    p = profile("eks-jark")
    config = json.loads(
        json.dumps(alerting.alertmanager_config(p.metadata.name, p.eks.alertmanager_receivers)).replace(
            alerting.AM_SECRETS, str(tmp_path)
        )
    )
    for r in p.eks.alertmanager_receivers:
        (tmp_path / r.secret_ref.name).mkdir(exist_ok=True)
        (tmp_path / r.secret_ref.name / r.secret_ref.key).write_text("https://hooks.example.com/x\n", encoding="utf-8")
    (tmp_path / "am.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    check = subprocess.run([amtool, "check-config", str(tmp_path / "am.yaml")], capture_output=True, text=True)
    assert check.returncode == 0 and "2 inhibit rules" in check.stdout, check.stdout + check.stderr

    def route(*labels: str) -> str:
        args = [amtool, "config", "routes", "test", f"--config.file={tmp_path / 'am.yaml'}", *labels]
        return subprocess.run(args, capture_output=True, text=True).stdout.strip()

    bundle = f"rlobs_bundle={p.metadata.name}"
    assert route(bundle, "severity=critical", "alertname=RLTrainingStalled") == "rl-oncall"
    assert route(bundle, "rlobs_route=platform", "severity=warning", "alertname=RLTelemetryTargetDown") == "null"
