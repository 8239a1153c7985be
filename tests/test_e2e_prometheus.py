"""End to end: the generated module + real SDK -> Python Prometheus exporter -> a real Prometheus -> every query.

Every PromQL expression of the EKS RL dashboard and every alert probe (the sub-expressions holding each selector) for
the python-prometheus pipeline must return data, so a wrong metric or label name anywhere fails this test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from rlobs.rl import naming, slos
from rlobs.rl.alerts import alerts
from rlobs.rl.catalog import load_catalog
from rlobs.rl.facts import workload_job
from rlobs.rl.grafana import rl_dashboard
from rlobs.rl.promrules import rule_groups
from rlobs.sizing import plan_profile
from testing.bundles import facts
from testing.helpers import profile, tool
from testing.otlp import render_app
from testing.prom import free_port, get, query, start, wait

pytestmark = pytest.mark.slow

CATALOG = load_catalog()
PROFILE = "eks-prometheus-exporter"
JOB = workload_job(profile(PROFILE))
DEADLINE = 25.0  # seconds to wait for every query to have data


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The fake RL loop serving /metrics, scraped every second by a real Prometheus loading the generated rules."""
    tmp_path = tmp_path_factory.mktemp("e2e")
    prometheus = tool("prometheus", "scrapes the generated module's /metrics")
    p = profile(PROFILE)
    app = render_app(tmp_path, PROFILE)
    app_port, prom_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RL_"))}
    env.update(
        {
            "PYTHONPATH": str(app),
            "OTEL_METRICS_EXPORTER": "prometheus",
            "OTEL_TRACES_EXPORTER": "none",
            "OTEL_EXPORTER_PROMETHEUS_HOST": "127.0.0.1",
            "OTEL_EXPORTER_PROMETHEUS_PORT": str(app_port),
            "RL_EXAMPLE_ITERATIONS": "1000000",
            "RL_EXAMPLE_SECONDS": "0.01",
            # Prometheus is stopped first at teardown: no scrape will take the SIGTERMed loop's last state.
            "RL_FINISH_LINGER_SECONDS": "0",
        }
    )
    loop = subprocess.Popen(
        [sys.executable, str(app / "example_rl_loop.py")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule_groups(facts(p))}))
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(tmp_path / "rules.yaml")],
        # The job label the bundle's rules select the workload by (the PodMonitor relabels to the same value).
        "scrape_configs": [{"job_name": JOB, "static_configs": [{"targets": [f"127.0.0.1:{app_port}"]}]}],
    }
    server = start(prometheus, tmp_path, config, prom_port)
    base = f"http://127.0.0.1:{prom_port}"
    try:
        deadline = time.monotonic() + DEADLINE
        wait(
            "Prometheus to be ready",
            lambda: urllib.request.urlopen(f"{base}/-/ready", timeout=2).status == 200,
            deadline,
        )
        wait(
            "the app to be scraped",
            lambda: [r["value"][1] for r in query(base, f'up{{job="{JOB}"}}')] == ["1"],
            deadline,
        )
        yield base, loop
    finally:
        for proc in (server, loop):
            proc.terminate()
        for proc in (server, loop):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        assert loop.returncode in (0, 143, -15), loop.stderr.read() if loop.stderr else ""


def _dashboard_queries() -> list[str]:
    p = profile(PROFILE)
    dash = rl_dashboard(facts(p))
    exprs = [t["expr"] for panel in dash["panels"] for t in panel.get("targets", [])]
    # label_values(<selector>, <label>); the `cluster` datasource variable picks the Prometheus, it queries nothing
    exprs += [v["query"]["query"] for v in dash["templating"]["list"] if v["type"] == "query"]
    return exprs


def _as_instant(expr: str) -> str:
    """Grafana variables -> what an 'All' selection sends; the range interval -> 1m."""
    expr = expr.replace("$__rate_interval", "1m")
    expr = re.sub(r'=~"\$[a-z]+"', '=~".*"', expr)
    lv = re.fullmatch(r"label_values\((.*), ([a-z_]+)\)", expr)
    if lv:  # a variable query: the label must exist on the selector's series
        return f"count by ({lv.group(2)}) ({lv.group(1)})"
    return expr


def _alert_probes() -> list[str]:
    """Each alert's probes, time-shifted into the few seconds of data the test has (names are never touched)."""
    p = profile(PROFILE)
    probes = []
    for a in facts(p).alerts:
        for probe in a.probes:
            probe = re.sub(r" offset \d+[smhd]", "", probe)  # a baseline that ends 30m ago has no data yet
            probe = re.sub(r":1m\]", ":1s]", probe)  # a subquery step that fits in seconds of data
            probes.append(probe)
    return probes


def test_python_prometheus_names_are_what_the_exporter_serves(stack: tuple[str, subprocess.Popen[str]]) -> None:
    base, _ = stack
    expected = set()
    for m in CATALOG.metrics:
        parts: tuple[naming.Part, ...] = ("bucket", "sum", "count") if m.kind == "histogram" else ("",)
        expected |= {naming.series(m, "python-prometheus", part) for part in parts}

    def all_there() -> Any:
        names = set(get(f"{base}/api/v1/label/__name__/values")["data"])
        return True if expected <= names else sorted(expected - names)

    wait("every catalog series", all_there, time.monotonic() + DEADLINE)
    labels = set(get(f"{base}/api/v1/labels")["data"])
    assert {naming.label(a.name, "python-prometheus") for a in CATALOG.identity} <= labels
    # The collector's _ratio must NOT appear here: the Python exporter maps unit 1 to nothing.
    assert query(base, naming.series(CATALOG.metric("train_mfu"), "otel-collector")) == []


def test_every_dashboard_query_and_alert_probe_returns_data(stack: tuple[str, subprocess.Popen[str]]) -> None:
    base, _ = stack
    queries = [_as_instant(q) for q in _dashboard_queries()] + _alert_probes()
    assert len(queries) >= 40

    def all_have_data() -> Any:
        empty = [q for q in queries if not query(base, q)]
        return empty or True

    wait("every query to return data", all_have_data, time.monotonic() + DEADLINE)
    print(
        f"\n{len(queries)} PromQL queries returned data ({len(_dashboard_queries())} dashboard, "
        f"{len(_alert_probes())} alert probes)"
    )
    # A misspelt name returns nothing: the check above can fail.
    right = next(q for q in queries if "rl_loop_duration_milliseconds_bucket" in q)
    wrong = right.replace("rl_loop_duration_milliseconds_bucket", "rl_loop_duration_bucket")
    assert query(base, wrong) == []


def test_generated_rules_evaluate_cleanly_in_prometheus(stack: tuple[str, subprocess.Popen[str]]) -> None:
    base, _ = stack

    def evaluated() -> Any:
        rules = [r for g in get(f"{base}/api/v1/rules")["data"]["groups"] for r in g["rules"]]
        # Every alert is loaded (beside the lifecycle recording rules), and every rule was evaluated.
        alerting = [r for r in rules if r["type"] == "alerting"]
        # ...and each SLO's page and ticket (slos: in the profile).
        expected = len(alerts(profile(PROFILE).alerts, CATALOG, "python-prometheus"))
        done = len(alerting) == expected + 2 * len(slos.objectives(facts(profile(PROFILE))))
        done = done and all(r.get("lastEvaluation", "").startswith("20") for r in rules)
        if done and all(r["health"] == "ok" for r in rules):
            return True
        return [(r["name"], r["health"], r.get("lastError")) for r in rules]

    wait("the generated rules to evaluate", evaluated, time.monotonic() + DEADLINE)
    # A healthy fake run: no alert of a run is even pending (firing on bad data: the promtool rule tests). The
    # workload's goodput SLO may burn: the fake loop trains a sliver of its time, far below the profile's 0.9.
    pending = get(f"{base}/api/v1/alerts")["data"]["alerts"]
    assert [a for a in pending if slos.SLO_LABEL not in a["labels"]] == []


def test_the_plan_is_what_prometheus_holds(stack: tuple[str, subprocess.Popen[str]]) -> None:
    """rlobs plan's RL series and samples per second, against a real Prometheus scraping the bundle's workload.

    The test scrapes every second, not at the bundle's interval, so that a rate can be measured in seconds: the
    plan's samples per second are scaled by the two intervals' ratio."""
    base, _ = stack
    p = profile(PROFILE)
    planned = [f for f in plan_profile(p).families if f.source == "rl"]
    series = sum(f.series for f in planned)
    rate = sum(f.samples_per_second for f in planned) * planned[0].interval_s  # at one scrape a second

    def held() -> Any:
        found = query(base, 'count({__name__=~"rl_.*"})')
        return True if found and abs(float(found[0]["value"][1]) - series) <= 0.1 * series else found

    wait("the plan's series count", held, time.monotonic() + DEADLINE)
    measured = float(query(base, 'count({__name__=~"rl_.*"})')[0]["value"][1])
    window = 10
    time.sleep(window)
    # The raw samples of the last window (count_over_time would drop the names and clash).
    raw = query(base, f'{{__name__=~"rl_.*"}}[{window}s]')
    per_second = sum(len(r["values"]) for r in raw) / window
    print(f"\nplan {series} series, {rate:.1f} samples/s; Prometheus {measured:.0f} series, {per_second:.1f} samples/s")
    assert abs(measured - series) <= 0.1 * series
    assert abs(per_second - rate) <= 0.1 * rate
