"""Real runs of the generated module, scraped by a real Prometheus evaluating the bundle's own rules (windows in
seconds): a NaN loss fires the loss alert, a trainer ending in sys.exit(1) fires the stall alert, a clean finish and
a healthy run fire nothing. A SIGKILLed trainer vanishes, and the lost path waits out Prometheus' 5-minute lookback:
tests/test_alert_scenarios.py proves that one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from rlobs.rl import naming
from rlobs.rl.catalog import load_catalog
from rlobs.rl.facts import workload_job
from rlobs.rl.promrules import rule_groups
from rlobs.rl.slos import SLO_LABEL
from rlobs.targets import parse_profile
from testing.bundles import facts
from testing.helpers import all_profiles, tool
from testing.otlp import render_app
from testing.prom import free_port, get, query, wait

pytestmark = pytest.mark.slow

PROFILE = "eks-prometheus-exporter"
# The same rules with windows a test can wait for; everything else is the bundle's own.
ALERTS = """alerts:
  stall: {window: 20s, for: 5s, forgetAfter: 2m}
  lossSpike: {baseline: 30s, for: 5s}
"""
RUN = """
import math, sys, time
import rlobs_telemetry as telemetry

mode = sys.argv[1]
for i in range(100000):
    with telemetry.loop(i):
        with telemetry.phase("train"):
            with telemetry.train_step(tokens=128):
                time.sleep(0.02)
            telemetry.record_loss(math.nan if mode == "nan" and i >= 100 else 0.2)
    time.sleep(0.1)
    if mode == "crash" and i == 120:
        sys.exit(1)  # as Hydra ends every failed run: the module exports the failed state first
    if mode == "finished" and i == 120:
        telemetry.finish()
        sys.exit(0)
"""
MODES = ("healthy", "nan", "crash", "finished")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("alerts")
    prometheus = tool("prometheus", "evaluates the bundle's rules on real runs")
    profile = parse_profile(all_profiles()[PROFILE] + ALERTS, f"{PROFILE}.yaml")
    app = render_app(tmp, PROFILE)
    (app / "run.py").write_text(RUN, encoding="utf-8")
    ports = {mode: free_port() for mode in MODES}
    procs = []
    for mode, port in ports.items():
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RL_"))}
        env |= {
            "PYTHONPATH": str(app),
            "OTEL_METRICS_EXPORTER": "prometheus",
            "OTEL_TRACES_EXPORTER": "none",
            "OTEL_EXPORTER_PROMETHEUS_HOST": "127.0.0.1",
            "OTEL_EXPORTER_PROMETHEUS_PORT": str(port),
            "RL_RUN_ID": mode,
            "RL_FINISH_LINGER_SECONDS": "10",
        }
        procs.append(subprocess.Popen([sys.executable, str(app / "run.py"), mode], env=env, stderr=subprocess.PIPE))
    (tmp / "rules.yaml").write_text(yaml.safe_dump({"groups": rule_groups(facts(profile))}), encoding="utf-8")
    targets = [f"127.0.0.1:{p}" for p in ports.values()]
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(tmp / "rules.yaml")],
        "scrape_configs": [{"job_name": workload_job(profile), "static_configs": [{"targets": targets}]}],
    }
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    prom_port = free_port()
    server = subprocess.Popen(
        [
            prometheus,
            f"--config.file={tmp / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp / 'data'}",
            f"--web.listen-address=127.0.0.1:{prom_port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{prom_port}"
    finally:
        for proc in (server, *procs):
            proc.kill()
            proc.wait(timeout=10)


def _firing(base: str) -> set[tuple[str, str]]:
    alerts: list[dict[str, Any]] = get(f"{base}/api/v1/alerts")["data"]["alerts"]
    # A workload's SLO burn (label `slo`, no run) is the budget of all its runs, judged by tests/test_slo.py.
    firing = [a for a in alerts if a["state"] == "firing" and SLO_LABEL not in a["labels"]]
    return {(a["labels"]["alertname"], a["labels"].get("rl_run_id", "")) for a in firing}


def _why(base: str) -> Any:
    """What is firing, and the run states Prometheus holds: the message when a wait times out."""
    state = naming.series(load_catalog().metric("run_state"), "python-prometheus")
    states = query(base, f"last_over_time({state}[5m])")
    current = query(base, state)
    return {
        "firing": sorted(_firing(base)),
        "last": {r["metric"]["rl_run_id"]: r["value"][1] for r in states},
        "current": sorted(r["metric"]["rl_run_id"] for r in current),
    }


def test_faults_fire_and_clean_runs_do_not(runs: str) -> None:
    expected = {("RLLossSpike", "nan"), ("RLTrainingStalled", "crash")}
    deadline = time.monotonic() + 90
    wait(
        "the NaN loss and the failed trainer to fire",
        lambda: expected <= _firing(runs) or _why(runs),
        deadline,
    )
    # The finished run's last state (finished) reached Prometheus before it exited...
    state = naming.series(load_catalog().metric("run_state"), "python-prometheus")
    last = query(runs, f'last_over_time({state}{{rl_run_id="finished"}}[5m])')
    assert [r["value"][1] for r in last] == ["0"]
    # ...and no other run fires, long after the finished one is gone.
    time.sleep(8)
    assert _firing(runs) == expected
