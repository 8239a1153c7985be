"""End to end with no instrumentation code: a process that only logs through verl's `file` backend, the bundle's
app/ on its PYTHONPATH and the bundle's env -> the tailer (started by sitecustomize) -> the module's /metrics -> a
real Prometheus -> every RL dashboard query whose metrics verl supplies returns data."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from rlobs.rl import naming
from rlobs.rl.catalog import load_catalog
from rlobs.rl.facts import workload_job
from rlobs.rl.grafana import rl_dashboard
from testing.adapters import render_app, verl_site
from testing.bundles import facts
from testing.helpers import profile, tool
from testing.prom import free_port, start

pytestmark = pytest.mark.slow

CATALOG = load_catalog()
PROFILE = "eks-prometheus-exporter"  # run.system: verl, pipeline python-prometheus
DEADLINE = 30.0

# Logs one verl record (the keys of verl-project/verl@1dda039 ray_trainer.py:1762-1802) every 0.2 s through verl's
# Tracking with the file backend (testing.adapters.VERL_TRACKING), like a trainer with 0.2 s steps; it never imports
# rlobs.
_TRAINER = """
import time
from verl.utils.tracking import Tracking

tracking = Tracking("p", "e", ["file"])
step = 0
while True:
    step += 1
    data = {"training/global_step": step, "timing_s/step": 0.2, "timing_s/gen": 0.1, "timing_s/reward": 0.01,
            "timing_s/update_actor": 0.05, "timing_s/update_weights": 0.02, "perf/total_num_tokens": 4096,
            "perf/throughput": 2560.0, "perf/mfu/actor": 0.3, "critic/score/mean": 0.5, "num_turns/mean": 3,
            "actor/pg_loss": 0.01, "response_length/mean": 512.0}
    tracking.log(data=data, step=step)
    time.sleep(0.2)
"""


def _query(base: str, expr: str) -> list[Any]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=5) as response:
        return list(json.load(response)["data"]["result"])


def _supplied_queries() -> tuple[list[str], list[str]]:
    """(dashboard queries whose every metric verl supplies, the others), instant form."""
    p = profile(PROFILE)
    verl = CATALOG.framework("verl")
    assert verl is not None
    parts: dict[str, tuple[naming.Part, ...]] = {"histogram": ("bucket", "sum", "count")}
    series = {
        m.key: {naming.series(m, "python-prometheus", p) for p in parts.get(m.kind, ("",))} for m in CATALOG.metrics
    }
    supplied, other = [], []
    for panel in rl_dashboard(facts(p))["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"].replace("$__rate_interval", "1m").replace('=~"$run"', '=~".*"')
            for name in ("algorithm", "environment", "model"):
                expr = expr.replace(f'=~"${name}"', '=~".*"')
            used = [key for key, names in series.items() if any(re.search(rf"\b{n}\b", expr) for n in names)]
            covered = all(verl.coverage(key) != "not available" for key in used)
            (supplied if used and covered else other).append(expr)
    return supplied, other


def test_a_verl_run_fills_the_rl_dashboard_with_no_code(tmp_path: Path) -> None:
    prometheus = tool("prometheus", "scrapes the adapter-fed module's /metrics")
    app = render_app(tmp_path, profile(PROFILE))
    app_port, prom_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RL_"))}
    env.update(
        {
            "PYTHONPATH": f"{app}:{verl_site(tmp_path)}",
            "RLOBS_ADAPTER": "verl",
            "VERL_FILE_LOGGER_PATH": str(tmp_path / "verl.jsonl"),
            "RLOBS_TAIL_POLL_SECONDS": "0.2",
            "OTEL_METRICS_EXPORTER": "prometheus",
            "OTEL_TRACES_EXPORTER": "none",
            "OTEL_EXPORTER_PROMETHEUS_HOST": "127.0.0.1",
            "OTEL_EXPORTER_PROMETHEUS_PORT": str(app_port),
        }
    )
    job = workload_job(profile(PROFILE))
    trainer = subprocess.Popen(
        [sys.executable, "-c", _TRAINER],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    config = {
        "global": {"scrape_interval": "1s"},
        "scrape_configs": [{"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{app_port}"]}]}],
    }
    server = start(prometheus, tmp_path, config, prom_port)
    base = f"http://127.0.0.1:{prom_port}"
    supplied, other = _supplied_queries()
    assert len(supplied) >= 10
    try:
        deadline = time.monotonic() + DEADLINE
        empty = supplied
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):  # Prometheus still starting
                empty = [q for q in supplied if not _query(base, q)]
            if not empty:
                break
            time.sleep(0.5)
        assert not empty, empty
        print(
            f"\n{len(supplied)} dashboard queries have data from the verl tailer; {len(other)} need metrics verl lacks"
        )
        # Seconds became ms: the loop histogram's mean is 200 ms, not 0.2.
        loop = CATALOG.metric("loop_duration")
        sums, counts = (naming.series(loop, "python-prometheus", part) for part in ("sum", "count"))
        [mean] = _query(base, f"{sums} / {counts}")
        assert float(mean["value"][1]) == pytest.approx(200.0)
        [rate] = _query(base, naming.series(CATALOG.metric("tokens_rate"), "python-prometheus"))
        assert float(rate["value"][1]) == pytest.approx(4096 / 0.2)
        # Nothing per step on a series: one series per metric for the run.
        assert len(_query(base, naming.series(CATALOG.metric("train_steps"), "python-prometheus"))) == 1
    finally:
        for proc in (server, trainer):
            proc.terminate()
        for proc in (server, trainer):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
