"""Links to the run in W&B or MLflow: Grafana data and dashboard links, PrometheusRule annotations expanded by real
Prometheus templating (promtool), Cloud Monitoring documentation links, and the workload env."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.profile.model import ProfileBase as Profile
from rlobs.profile.model import Tracker
from rlobs.rl import promrules, tracker
from rlobs.rl.catalog import load_catalog
from testing import expansion
from testing.bundles import build, facts
from testing.helpers import module, profile, tool

CATALOG = load_catalog()
WANDB = {"kind": "wandb", "entity": "rl-team", "project": "grpo"}
MLFLOW = {"kind": "mlflow", "url": "https://mlflow.example.com", "experiment": "42"}
# Variables the bundle may leave for Grafana or Prometheus to expand; anything else `${...}`/`{{...}}` is a bug.
GRAFANA_VARIABLE = re.compile(r"\$\{__field\.labels(\.rl_run_id|\[\"rl\.run\.id\"\])\}")


def _with_tracker(name: str, spec: dict[str, Any]) -> Profile:
    p = profile(name)
    return p.model_copy(update={"workload": p.workload.model_copy(update={"tracker": Tracker.model_validate(spec)})})


def _files(p: Profile) -> dict[str, str]:
    return {r.path: r.text for r in build(p)}


def _env(text: str) -> list[dict[str, Any]]:
    patch = yaml.safe_load(text)
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "env" in node and isinstance(node["env"], list):
                found.extend(node["env"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(patch)
    return found


def test_wandb_links_on_the_eks_dashboard_and_rules() -> None:
    p = _with_tracker("eks-jark", WANDB)
    files = _files(p)
    [board] = yaml.safe_load(files["rl-layer/dashboard-rl.yaml"])["data"].values()
    board = json.loads(board)
    assert board["links"] == [
        {
            "title": "W&B project grpo",
            "type": "link",
            "url": "https://wandb.ai/rl-team/grpo",
            "targetBlank": True,
            "icon": "external link",
        }
    ]
    per_run = [
        panel
        for panel in board["panels"]
        if panel["type"] == "timeseries" and any("rl_run_id" in t["legendFormat"] for t in panel["targets"])
    ]
    assert per_run
    for panel in per_run:
        [link] = panel["fieldConfig"]["defaults"]["links"]
        assert link["url"] == "https://wandb.ai/rl-team/grpo/runs/${__field.labels.rl_run_id}"
        assert GRAFANA_VARIABLE.sub("", json.dumps(link)).count("${") == 0
    rule = yaml.safe_load(files["rl-layer/rl-prometheusrule.yaml"])
    for r in (r for r in rule["spec"]["groups"][0]["rules"] if "alert" in r):
        assert r["annotations"]["tracker_url"] == "https://wandb.ai/rl-team/grpo/runs/{{ $labels.rl_run_id }}"
    env = _env(files["workload/otel-env-patch.yaml"])
    names = [e["name"] for e in env]
    # No run id in the profile: the W&B run is the RayJob's (the run id the app module takes too), defined before it.
    assert names.index("RLOBS_OWNER_UID") < names.index("WANDB_RUN_ID")
    assert {e["name"]: e["value"] for e in env if e["name"].startswith("WANDB_")} == {
        "WANDB_RUN_ID": "$(RLOBS_OWNER_UID)",
        "WANDB_RESUME": "allow",
        "WANDB_ENTITY": "rl-team",
        "WANDB_PROJECT": "grpo",
    }


def test_no_links_without_a_tracker() -> None:
    files = _files(profile("eks-jark"))
    assert "tracker_url" not in "".join(files.values())
    assert "WANDB_" not in files["workload/otel-env-patch.yaml"]


@pytest.mark.parametrize("name", ["gke-managed-otel", "gke-autopilot-jobset"])
@pytest.mark.parametrize("spec", [WANDB, MLFLOW])
def test_gke_policies_link_the_run_within_the_api_limits(spec: dict[str, Any], name: str) -> None:
    """The run is linked only when the profile names it: a run id picked at run time is not in the policy."""
    p = _with_tracker(name, spec)
    files = _files(p)
    policies = [json.loads(t) for path, t in files.items() if path.startswith("monitoring/alert-policies/")]
    assert policies
    run_id = p.workload.run.id
    run = [{"displayName": f"W&B run {run_id}", "url": f"https://wandb.ai/rl-team/grpo/runs/{run_id}"}]
    expected = (
        [*(run if run_id else []), {"displayName": "W&B project grpo", "url": "https://wandb.ai/rl-team/grpo"}]
        if spec["kind"] == "wandb"
        else [{"displayName": "MLflow experiment 42", "url": "https://mlflow.example.com/#/experiments/42"}]
    )
    for policy in policies:
        links = policy["documentation"]["links"]
        assert links == expected
        assert len(links) <= 3 and all(len(x["url"]) <= 2083 and len(x["displayName"]) <= 63 for x in links)
        assert "${" not in json.dumps(links)
    [board] = [json.loads(t) for path, t in files.items() if path.startswith("monitoring/dashboards/")]
    [tile] = [t for t in board["mosaicLayout"]["tiles"] if "text" in t["widget"]]
    assert tile["widget"]["text"]["content"] == " · ".join(f"[{x['displayName']}]({x['url']})" for x in expected)
    env = {e["name"]: e.get("value") for e in _env(files["workload/otel-env-patch.yaml"])}
    if spec["kind"] == "mlflow":
        assert env["MLFLOW_TRACKING_URI"] == "https://mlflow.example.com"
        assert env["MLFLOW_EXPERIMENT_ID"] == "42"
        assert "WANDB_RUN_ID" not in env


@pytest.mark.slow
@pytest.mark.parametrize("spec", [WANDB, MLFLOW])
def test_prometheus_expands_the_tracker_annotation(spec: dict[str, Any], tmp_path: Path) -> None:
    """promtool runs the rules' annotation templates for the rule tests: the link comes out with the run id filled
    in and nothing left unexpanded."""
    promtool = tool("promtool", "expands the alert annotations as Prometheus does")
    p = _with_tracker("eks-jark", spec)
    f = facts(p, "otel-collector")
    rules, tests = expansion.one_annotation(
        {"groups": promrules.rule_groups(f)}, promrules.rule_tests(f), "tracker_url"
    )
    expected = expansion.expected(tests, "tracker_url")
    assert expected and not any("{{" in u or "${" in u for u in expected)
    if spec["kind"] == "wandb":
        assert "https://wandb.ai/rl-team/grpo/runs/failed" in expected
    (tmp_path / "rl-alerts.rules.yaml").write_text(yaml.safe_dump(rules))
    (tmp_path / "rl-alerts.test.yaml").write_text(yaml.safe_dump(tests, sort_keys=False))
    run = subprocess.run(
        [promtool, "test", "rules", "rl-alerts.test.yaml"], capture_output=True, text=True, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_self_hosted_wandb_sdk_is_pointed_at_its_api_host() -> None:
    env = tracker.tracker_env(_with_tracker("eks-jark", {**WANDB, "url": "https://app.wandb.example.com/"}))
    assert {"name": "WANDB_BASE_URL", "value": "https://api.wandb.example.com/"} in env
    assert "WANDB_BASE_URL" not in {e["name"] for e in tracker.tracker_env(_with_tracker("eks-jark", WANDB))}


def test_go_template_literal_keeps_braces_literal() -> None:
    assert tracker.go_template_literal("https://x/{{ y }}") == 'https://x/{{ "{{" }} y }}'
    assert tracker.go_template_literal("https://wandb.ai/a/b") == "https://wandb.ai/a/b"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "wandb", "project": "p"}, "expected entity"),
        ({"kind": "mlflow", "experiment": "1"}, "expected url"),
        ({"kind": "mlflow", "url": "https://m/{{x}}", "experiment": "1"}, "of RFC 3986 characters"),
        # What Grafana ($var, ${var}, [[var]]), Kubernetes env ($(VAR)) and the Markdown tile link would act on.
        *(
            ({"kind": "mlflow", "url": f"https://m/{bad}", "experiment": "1"}, "without $ [ ] ( )")
            for bad in ("$system", "${run}", "[[run]]", "$(HOME)", "a)b", "it's")
        ),
        ({"kind": "wandb", "entity": "a/b", "project": "p"}, "a name of letters"),
    ],
)
def test_tracker_profile_rules(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Tracker.model_validate(spec)


def test_gke_tracker_tile_survives_the_apis_round_trip() -> None:
    """The Markdown tile is in the form the API stores (Google's Dashboard proto), so Terraform plans stay empty."""
    module("google.cloud.monitoring_dashboard_v1", "round-trips the dashboard through Google's proto")
    from google.cloud.monitoring_dashboard_v1.types import Dashboard

    from rlobs.targets.gke import monitoring

    config = monitoring.dashboard(facts(_with_tracker("gke-managed-otel", WANDB)))
    parsed = Dashboard.from_json(json.dumps(config), ignore_unknown_fields=False)
    api = json.loads(
        Dashboard.to_json(parsed, use_integers_for_enums=False, always_print_fields_with_no_presence=False)
    )
    assert api == config
    assert any("text" in t["widget"] for t in api["mosaicLayout"]["tiles"])


def _mlflow_stub(run_id: str | None) -> Any:
    """Stands in for an imported mlflow: mlflow.active_run() is None or a Run whose info.run_id is set
    (mlflow/tracking/fluent.py active_run; mlflow/entities/run_info.py RunInfo.run_id)."""
    from types import SimpleNamespace

    run = None if run_id is None else SimpleNamespace(info=SimpleNamespace(run_id=run_id))
    return SimpleNamespace(active_run=lambda: run)


@pytest.mark.parametrize(
    ("env", "active", "expected"),
    [
        ("3f2a9c0d5e6b4a1f8c7d6e5f4a3b2c1d", "unset", "3f2a9c0d5e6b4a1f8c7d6e5f4a3b2c1d"),  # MLFLOW_RUN_ID only
        ("from-env", "active-run-id", "active-run-id"),  # the active run wins: it is the one being logged to
        ("from-env", None, "from-env"),  # mlflow imported, no active run
        (None, "unset", None),  # no MLflow at all: no attribute
    ],
    ids=["env", "active-run-wins", "imported-no-run", "no-mlflow"],
)
def test_the_mlflow_run_id_is_on_the_loop_span_and_never_on_a_metric_point(
    env: str | None, active: str | None, expected: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from testing.adapters import load_app

    app = load_app(tmp_path, "verl", monkeypatch)
    spans = InMemorySpanExporter()
    monkeypatch.setattr(app.telemetry, "_span_exporters", lambda: [spans])
    if env is None:
        monkeypatch.delenv("MLFLOW_RUN_ID", raising=False)
    else:
        monkeypatch.setenv("MLFLOW_RUN_ID", env)
    if active == "unset":
        monkeypatch.delitem(sys.modules, "mlflow", raising=False)
    else:
        monkeypatch.setitem(sys.modules, "mlflow", _mlflow_stub(active))
    t = app.telemetry
    for i in range(2):
        with t.loop(i), t.phase("train"):
            t.record_train_step(tokens=100, duration_ms=5.0)
            t.record_loss(0.5)
    t.flush()
    if active == "unset":
        assert "mlflow" not in sys.modules  # asked, never imported
    key = CATALOG.attribute("tracker_run_id").name
    finished = spans.get_finished_spans()
    loops = [s for s in finished if s.name == CATALOG.span("loop").name]
    assert len(loops) == 2
    assert all(s.attributes.get(key) == expected for s in loops)
    assert all(key not in s.attributes for s in finished if s not in loops)  # the loop span only
    points = [p for ps in app.points().values() for p in ps]
    assert points
    run_id = CATALOG.attribute("run_id").name
    for p in points:
        assert key not in p.attributes
        # No RL_RUN_ID and no run id in the profile: the tracker's run is the run id, the one series of the run.
        others = {str(v) for k, v in p.attributes.items() if k != run_id}
        assert expected is None or (p.attributes[run_id] == expected and expected not in others)


# Grafana's own data-link variables, and the formats rlobs may apply to a dashboard variable.
GRAFANA_BUILTIN = re.compile(r"^__field\.labels(\.[a-z_]+|\[\"[a-z.]+\"\])$")
VARIABLE_REF = re.compile(r"\$\{([^}]*)\}")
# The longest rl.run.id the profile accepts (AttrValue: 128 characters), with the characters that need encoding.
LONGEST_RUN = ("a+b@c" * 26)[:128]


def _expand(text: str, variables: set[str]) -> str:
    """Grafana's expansion of the dashboard variables rlobs defines in a link (the run id, percent-encoded where the
    link asks for it); a Grafana built-in is left; anything else is a bug."""
    from urllib.parse import quote

    def one(match: re.Match[str]) -> str:
        name, _, fmt = match.group(1).partition(":")
        if GRAFANA_BUILTIN.match(match.group(1)):
            return LONGEST_RUN
        assert name in variables, f"unexpanded variable ${{{match.group(1)}}} in {text}"
        assert fmt in ("", "percentencode"), fmt
        return quote(LONGEST_RUN, safe="") if fmt else LONGEST_RUN

    return VARIABLE_REF.sub(one, text)


@pytest.mark.parametrize("spec", [WANDB, MLFLOW], ids=["wandb", "mlflow"])
@pytest.mark.parametrize("key", ["training", "inference", "rl"])
def test_every_eks_dashboard_links_to_the_tracker_with_nothing_left_unexpanded(spec: dict[str, Any], key: str) -> None:
    from urllib.parse import urlsplit

    from rlobs.rl.tracker import MAX_URL

    files = _files(_with_tracker("eks-jark", spec))
    [text] = yaml.safe_load(files[f"rl-layer/dashboard-{key}.yaml"])["data"].values()
    board = json.loads(text)
    variables = {v["name"] for v in board["templating"]["list"]}
    links = list(board["links"])
    series = [p for p in board["panels"] if p["type"] == "timeseries"]
    data_links = [link for p in series for link in p["fieldConfig"]["defaults"].get("links", [])]
    assert links and data_links
    if key != "rl":
        assert all(p["fieldConfig"]["defaults"].get("links") for p in series)  # every panel, not some
    home = "https://wandb.ai/rl-team/grpo" if spec is WANDB else "https://mlflow.example.com/#/experiments/42"
    assert home in {link["url"] for link in links}
    for link in links + data_links:
        url = _expand(link["url"], variables)
        _expand(link["title"], variables)
        assert len(url) <= MAX_URL and "{" not in url and " " not in url, url
        parts = urlsplit(url)
        assert parts.scheme == "https" and parts.netloc
        if spec is WANDB and key != "rl":
            assert link["url"].endswith("${run:percentencode}") or link["url"] == home
    if spec is WANDB and key != "rl":
        [run] = [v for v in board["templating"]["list"] if v["name"] == "run"]
        assert run["definition"] == "label_values(rl_train_steps_total, rl_run_id)"
        assert not run["includeAll"] and not run["multi"]  # a link names one run
        assert _expand("${run:percentencode}", variables).startswith("a%2Bb%40c")  # `+` and `@` encoded


def test_the_expansion_check_catches_an_unknown_variable() -> None:
    with pytest.raises(AssertionError, match="unexpanded"):
        _expand("https://wandb.ai/x/runs/${job}", {"run"})
