"""RL-run SLOs (`slos:`): burn-rate rules proven with promtool on EKS, Cloud Monitoring objects parsed strictly by
Google's libraries and checked against the provider's arguments on GKE, and nothing at all without `slos:`."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.errors import ProfileError
from rlobs.profile.yamlsource import load_located
from rlobs.rl import grafana, naming, promrules, slos
from rlobs.targets import parse_profile
from rlobs.targets import warnings as find
from rlobs.targets.gke import slo, tfpolicy
from testing.bundles import build, facts
from testing.gketf import SCHEMA, SLO_SCHEMA
from testing.helpers import GOOD, all_profiles, module, profile, tool
from testing.scenario_run import classic

EKS = "eks-prometheus-exporter"  # slos: goodput, stepsPerHour, timeToFirstStep
GKE = ("gke-autopilot-jobset", "gke-standard-rayjob")  # slos: goodput and time-based ones; terraform and scripts


def _slo_group(name: str) -> dict[str, Any]:
    (group,) = [g for g in promrules.rule_groups(facts(profile(name))) if g["name"].endswith(".rl-slos")]
    return group


def test_no_slos_unless_the_profile_asks() -> None:
    for name in ("eks-jark", "gke-managed-otel"):
        p = profile(name)
        assert p.slos is None
        assert not any(g["name"].endswith(".rl-slos") for g in promrules.rule_groups(facts(p)))
        assert not [r.path for r in build(p) if "slo" in r.path]
        assert slos.budget_query(facts(p)) == ""


def test_eks_rules_record_every_window_and_the_budget() -> None:
    rules = _slo_group(EKS)["rules"]
    records = [(r["record"], r["labels"]["slo"]) for r in rules if "record" in r]
    for key in ("goodput", "steps_per_hour", "time_to_first_step"):
        assert {f"{slos.ERRORS}{w}" for w in ("5m", "30m", "1h", "6h", "3d", "7d")} <= {
            n for n, k in records if k == key
        }
        assert (slos.BUDGET, key) in records
    # Rules read only the records before them (Prometheus evaluates a group in order at one timestamp).
    seen: set[str] = set()
    for r in rules:
        for name in (slos.BAD, slos.ERRORS, slos.BUDGET):
            if name + "{" in r["expr"] or name + "5m{" in r["expr"]:
                assert any(s.startswith(name) for s in seen), r
        seen.add(r.get("record", ""))
    alerts = {r["alert"]: r for r in rules if "alert" in r}
    assert sorted(alerts) == sorted(
        f"RL{t}BudgetBurn{s}" for t in ("Goodput", "StepsPerHour", "TimeToFirstStep") for s in ("", "Slow")
    )
    page = alerts["RLGoodputBudgetBurn"]
    # The workbook's page pairs (1h/5m at 14.4x, 6h/30m at 6x), capped at an error ratio of 1 (objective 0.2: a
    # healthy RL run trains a fifth to a half of its time, the rest rolls out, syncs and saves).
    assert "ratio_rate1h" in page["expr"] and "ratio_rate5m" in page["expr"] and ">= 1 " in page["expr"]
    assert "ratio_rate6h" in page["expr"] and page["expr"].count(">= 1 ") == 4
    assert page["labels"]["severity"] == "critical" and page["labels"]["slo_burn"] == "page"
    ticket = alerts["RLGoodputBudgetBurnSlow"]
    assert "ratio_rate3d" in ticket["expr"] and ">= 0.8" in ticket["expr"] and ticket["labels"]["severity"] == "warning"


def test_the_grafana_dashboard_shows_the_budget_left() -> None:
    board = grafana.rl_dashboard(facts(profile(EKS)))
    (panel,) = [p for p in board["panels"] if p["title"] == slos.BUDGET_TITLE]
    assert panel["targets"][0]["expr"] == 'rlobs:slo_budget_remaining{job="rl/grpo-trainer"}'
    assert not [
        p for p in grafana.rl_dashboard(facts(profile("eks-jark")))["panels"] if p["title"] == slos.BUDGET_TITLE
    ]


def _promtool_run(tmp: Path, groups: list[dict[str, Any]], tests: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    (tmp / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}, sort_keys=False), encoding="utf-8")
    (tmp / "test.yaml").write_text(yaml.safe_dump({**tests, "rule_files": ["rules.yaml"]}), encoding="utf-8")
    return subprocess.run(
        [tool("promtool", "runs the SLO rule tests"), "test", "rules", "test.yaml"], capture_output=True, text=True
    )


@pytest.mark.slow
def test_promtool_burning_budgets_fire_and_healthy_ones_stay_silent(tmp_path: Path) -> None:
    f = facts(profile(EKS))
    tests = {"evaluation_interval": "1m", "tests": slos.rule_tests(f)}
    assert len(tests["tests"]) == 6  # per SLO: one burning, one healthy
    run = _promtool_run(tmp_path, [_slo_group(EKS)], tests)
    assert run.returncode == 0, run.stdout + run.stderr
    # The tests can fail: alerts that never fire fail the burning cases, alerts that always fire the healthy ones.
    for broken, failing in ((" > 2", "got: nil"), (" or vector(1)", 'alertname="RLGoodputBudgetBurn"')):
        group = copy.deepcopy(_slo_group(EKS))
        for r in group["rules"]:
            if "alert" in r:
                r["expr"] = f"({r['expr']}){broken}"
        run = _promtool_run(tmp_path, [group], tests)
        assert run.returncode != 0 and failing in run.stdout + run.stderr, broken


def test_slo_keys_are_located_and_checked() -> None:
    text = all_profiles()[EKS].replace("goodput: {objective: 0.2}", "goodput: {objective: 1}")
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    (line,) = info.value.lines()
    assert "slos.goodput.objective" in line and "less than 1" in line
    with pytest.raises(ProfileError, match=r"slos\.windowDays"):
        parse_profile(all_profiles()[EKS] + "  windowDays: 31\n", "p.yaml")


def test_gke_renders_every_slo_without_a_warning() -> None:
    text = GOOD + "slos:\n  goodput: {objective: 0.2}\n  stepsPerHour: {min: 10}\n  timeToFirstStep: {max: 15m}\n"
    parse_profile(text, "p.yaml")
    assert [str(w) for w in find(load_located(text), "p.yaml") if "slos" in str(w)] == []


@pytest.mark.slow
def test_gke_promql_burn_policies_fire_on_a_spent_budget_and_stay_silent_on_a_healthy_one(tmp_path: Path) -> None:
    """Steps per hour and time to first step on GKE are PromQL policies (no SLO object can hold them). Cloud
    Monitoring evaluates a PromQL condition as Prometheus evaluates an alerting rule (scenario_run.policy_rules), so
    promtool runs the policies' own queries on the same burning and healthy workloads as the EKS rules, dotted names
    in the classic form (scenario_run.classic)."""
    f = facts(profile(GKE[1]))  # stepsPerHour and timeToFirstStep, scripts mode
    timed = tuple(o for o in slos.objectives(f) if o.bad)
    conditions = [p["conditions"][0]["conditionPrometheusQueryLanguage"] for _, p in slo.promql_policies(f, _none, {})]
    names = {o.key: [slos.alert_name(o, s) for s in (slos.PAGE, slos.TICKET)] for o in timed}
    assert sorted(c["alertRule"] for c in conditions) == sorted(n for pair in names.values() for n in pair)
    tests = []
    for o, burning, at, series in slos.cases(f, timed):
        firing = f'ALERTS{{alertname=~"{"|".join(names[o.key])}", alertstate="firing"}}'
        exp = [{"labels": f'{{alertname="{n}"}}', "value": 1} for n in names[o.key]] if burning else []
        tests.append(
            {
                "name": f"{o.key} {'burning' if burning else 'healthy'}",
                "interval": "1m",
                "input_series": [{"series": classic(s), "values": v} for s, v in series],
                "promql_expr_test": [
                    {"expr": f"count by (alertname) ({firing})", "eval_time": f"{at}m", "exp_samples": exp}
                ],
            }
        )
    for broken in ("", " > 2"):  # as rendered, and an alert that can never fire (the burning cases must fail)
        rules = [
            {"alert": c["alertRule"], "expr": f"({classic(c['query'])}){broken}", "labels": c["labels"]}
            for c in conditions
        ]
        group = {"name": conditions[0]["ruleGroup"], "interval": "1m", "rules": rules}
        run = _promtool_run(tmp_path, [group], {"evaluation_interval": "1m", "tests": tests})
        assert (run.returncode == 0) == (broken == ""), run.stdout + run.stderr


def _none(severity: str) -> list[str]:
    return []


def _bucket(name: str) -> str:
    f = facts(profile(name))
    return naming.label(f.catalog.attribute("time_bucket").name, f.pipeline)


def _files(name: str) -> dict[str, str]:
    return {r.path: r.text for r in build(profile(name))}


@pytest.mark.parametrize("name", GKE)
def test_google_client_libraries_accept_the_slo_objects(name: str) -> None:
    module("google.cloud.monitoring_v3", "Google's Service, ServiceLevelObjective and AlertPolicy parse the JSON")
    from google.cloud.monitoring_v3.types import AlertPolicy, Service, ServiceLevelObjective

    files = _files(name)
    Service.from_json(files[slo.SERVICE_FILE], ignore_unknown_fields=False)
    objective = ServiceLevelObjective.from_json(files[slo.SLO_FILE], ignore_unknown_fields=False)
    ratio = objective.service_level_indicator.request_based.good_total_ratio
    # Good: the train bucket; total: every bucket but `starting` (a run's start is timeToFirstStep's to judge).
    judged = f' AND metric.label."{_bucket(name)}"!="starting"'
    assert ratio.total_service_filter.endswith(judged)
    assert ratio.good_service_filter == ratio.total_service_filter.removesuffix(judged) + judged.replace(
        '!="starting"', '="train"'
    )
    assert objective.rolling_period.days == 7
    in_slos = [t for p, t in files.items() if p.startswith(slo.SLO_DIR) and "goodput" in p and "burn" in p]
    policies = [AlertPolicy.from_json(t, ignore_unknown_fields=False) for t in in_slos]
    windows = [[c.condition_threshold.filter.rsplit('"', 2)[1] for c in p.conditions] for p in policies]
    assert sorted(windows) == [["21600s", "1800s"], ["259200s", "21600s"], ["3600s", "300s"]]
    name_ = slo.slo_name(profile(name).gke.project, facts(profile(name)))  # type: ignore[attr-defined]
    assert all(
        f'select_slo_burn_rate("{name_}"' in c.condition_threshold.filter for p in policies for c in p.conditions
    )
    assert all(p.combiner == AlertPolicy.ConditionCombinerType.AND for p in policies)
    board = json.loads(next(t for p, t in files.items() if p.startswith("monitoring/dashboards/")))
    tile = board["mosaicLayout"]["tiles"][-1]["widget"]
    assert tile["title"] == slos.BUDGET_TITLE
    goodput, *timed = tile["xyChart"]["dataSets"]
    assert name_ in goodput["timeSeriesQuery"]["timeSeriesFilter"]["filter"]
    # The time-based SLOs' budgets, in PromQL (no SLO object to select), and their policies beside the others.
    keys = [o.key for o in slos.objectives(facts(profile(name))) if o.bad]
    assert [d["legendTemplate"] for d in timed] == keys
    burns = [AlertPolicy.from_json(t, ignore_unknown_fields=False) for p, t in files.items() if "budget-burn" in p]
    assert len(burns) == 2 * len(keys) and all(p.conditions[0].condition_prometheus_query_language.query for p in burns)


def test_google_client_libraries_reject_a_bad_slo_field() -> None:
    module("google.cloud.monitoring_v3", "Google's ServiceLevelObjective parses the SLO JSON")
    from google.cloud.monitoring_v3.types import ServiceLevelObjective

    data = json.loads(_files(GKE[0])[slo.SLO_FILE])
    data["serviceLevelIndicator"]["requestBased"]["goodTotalRatio"]["goodFilter"] = "x"
    with pytest.raises(Exception, match="goodFilter"):
        ServiceLevelObjective.from_json(json.dumps(data), ignore_unknown_fields=False)


def _keys(value: Any, path: str = "") -> list[tuple[str, str]]:
    if isinstance(value, list):
        return [k for v in value for k in _keys(v, path)]
    if not isinstance(value, dict) or path.endswith(("user_labels", ".labels")):  # maps: any key
        return []
    return [(path, k) for k in value] + [kk for k, v in value.items() for kk in _keys(v, f"{path}.{k}".lstrip("."))]


def test_terraform_slos_use_provider_arguments_and_match_the_json() -> None:
    files = _files(GKE[0])  # gke.manage: terraform
    resources = json.loads(files[slo.TF_FILE])["resource"]
    unknown = [
        (kind, f"{p}.{k}")
        for kind, table in (*SLO_SCHEMA.items(), ("google_monitoring_alert_policy", SCHEMA))
        for body in resources[kind].values()
        for p, k in _keys(body)
        if k not in table.get(p, set())
    ]
    assert unknown == []
    tf_slo = resources["google_monitoring_slo"][slo.GOODPUT]
    api = json.loads(files[slo.SLO_FILE])
    assert tf_slo["goal"] == api["goal"] and tf_slo["rolling_period_days"] * 86400 == int(api["rollingPeriod"][:-1])
    ratio = api["serviceLevelIndicator"]["requestBased"]["goodTotalRatio"]
    assert tf_slo["request_based_sli"]["good_total_ratio"]["good_service_filter"] == ratio["goodServiceFilter"]
    # The burn-rate policies (goodput's 3, then 2 a time-based SLO) wait for the SLO; the rest for the APIs.
    policies = resources["google_monitoring_alert_policy"]
    assert len(policies) == 5 and all(p["depends_on"] == ["google_monitoring_slo.goodput"] for p in policies.values())
    assert resources["google_monitoring_custom_service"]["rl"]["depends_on"] == ["google_project_service.apis"]
    bundle = profile(GKE[0]).metadata.name
    for stem in (p.rsplit("/", 1)[1][:-5] for p in files if "budget" in p and p.startswith(slo.SLO_DIR)):
        tf = policies[tfpolicy.resource_name(stem, bundle)]["conditions"][0]
        api_policy = json.loads(files[f"{slo.SLO_DIR}/{stem}.json"])["conditions"][0]
        threshold, promql = api_policy.get("conditionThreshold"), api_policy.get("conditionPrometheusQueryLanguage")
        if threshold:
            assert tf["condition_threshold"]["filter"] == threshold["filter"]
        else:
            assert tf["condition_prometheus_query_language"]["query"] == promql["query"]
    assert slo.TF_FILE not in _files(GKE[1])  # scripts mode: step 4 deploys the JSON


def test_terraform_with_only_time_based_slos_holds_only_their_policies() -> None:
    text = GOOD + "  manage: terraform\nslos:\n  stepsPerHour: {min: 10}\n"
    files = {r.path: r.text for r in build(parse_profile(text, "p.yaml"))}
    assert slo.SERVICE_FILE not in files and slo.SLO_FILE not in files
    resources = json.loads(files[slo.TF_FILE])["resource"]
    assert list(resources) == ["google_monitoring_alert_policy"]
    policies = resources["google_monitoring_alert_policy"]
    assert len(policies) == 2  # page and ticket
    # With no SLO to wait for, they wait for the APIs, as the other alert policies do.
    assert all(p["depends_on"] == ["google_project_service.apis"] for p in policies.values())


def test_ai_on_eks_mode_inhibits_tickets_in_its_alertmanagerconfig() -> None:
    from rlobs.targets.eks.alerting import alertmanager_config_cr
    from testing.crdschema import errors
    from testing.eks import schema as crd

    text = all_profiles()["eks-ai-on-eks"] + "slos:\n  goodput: {objective: 0.2}\n"
    p = parse_profile(text, "p.yaml")
    amc = alertmanager_config_cr(p)  # type: ignore[arg-type]
    assert errors(crd("prometheus-operator/crd-alertmanagerconfigs.v0.84.1.yaml"), amc) == []
    (inhibit,) = [r for r in amc["spec"]["inhibitRules"] if r["sourceMatch"][0]["name"] == slos.BURN_LABEL]
    assert inhibit["equal"] == ["rlobs_bundle", slos.SLO_LABEL]
    # The operator confines the config to alerts labelled with its namespace: the SLO alerts carry it too.
    (group,) = [g for g in promrules.rule_groups(facts(p)) if g["name"].endswith(".rl-slos")]
    assert all(r["labels"]["namespace"] == p.workload.namespace for r in group["rules"] if "alert" in r)
