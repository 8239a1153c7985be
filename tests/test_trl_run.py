"""A real TRL GRPO run on CPU (a tiny random model, no network) with the bundle's RlobsCallback, exporting to a real
OTLP/gRPC receiver: progress at every optimizer step with logging_steps=10, a NaN loss that transformers' default
NaN filter keeps out of the logs is counted, the time after train() returns is a pause, the run ends finished, and
the callback costs well under 1 ms of CPU per optimizer step and changes no loss (the same seed without it). Real TRL
runs scraped by a real Prometheus with the bundle's rules page their faults only, in time. Needs the `trl` extra
(torch, transformers, trl, datasets, accelerate): skipped without it, failed when RLOBS_REQUIRE_TOOLS=1 (.ci/run
installs it)."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from rlobs.rl import naming
from rlobs.rl.facts import workload_job
from rlobs.rl.promrules import rule_groups
from rlobs.rl.slos import SLO_LABEL
from rlobs.targets import parse_profile
from testing.adapters import render_app, with_system
from testing.bundles import facts
from testing.helpers import REQUIRE_TOOLS, all_profiles, tool
from testing.otlp import CATALOG, Receiver, example_env
from testing.prom import free_port, query, start

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "testing" / "trl_grpo.py"
NEEDS = ("torch", "transformers", "trl", "datasets", "accelerate")
FINISHED, TRAINING, STARTING, PAUSED = 0, 1, 2, 3


def _needs_trl() -> None:
    missing = [name for name in NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        why = f"the real TRL run needs {', '.join(missing)}: pip install '.[trl]' (torch first, see pyproject.toml)"
        if REQUIRE_TOOLS:
            pytest.fail(f"RLOBS_REQUIRE_TOOLS=1: {why}")
        pytest.skip(why)


@pytest.fixture
def trl_app(tmp_path: Path) -> Path:
    _needs_trl()
    return render_app(tmp_path, with_system("trl"))


def test_a_real_grpo_run(trl_app: Path, receiver: Receiver, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    env = example_env(
        trl_app,
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}",
        OTEL_TRACES_EXPORTER="none",
        OTEL_METRIC_EXPORT_INTERVAL="100",  # every few tenths of a step: each step's progress is seen
    )
    command = [sys.executable, str(SCRIPT), str(out), "--steps", "10", "--logging-steps", "10", "--nan-at", "10"]
    slow = ["--reward-seconds", "0.3", "--linger", "1"]  # healthy steps slower than the export interval
    run = subprocess.run([*command, *slow], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["steps"] == 10
    # The one log of the run (step 10) shows a finite loss: the default filter replaced the NaN ...
    assert len(result["losses"]) == 1 and math.isfinite(result["losses"][0])
    # ... and the NaN is counted, once.
    assert _total(receiver, "loss_nonfinite") == 1
    assert _total(receiver, "train_steps") == 10
    # Progress at every optimizer step, though the framework logged once.
    progress = receiver.gauge_values(CATALOG.metric("progress_time").name)
    assert len(set(progress)) == 10, progress
    states = receiver.gauge_values(CATALOG.metric("run_state").name)
    seen = [s for i, s in enumerate(states) if i == 0 or s != states[i - 1]]
    assert seen == [STARTING, TRAINING, PAUSED, FINISHED]  # PAUSED: after train() returned, until exit
    # The adapter's own CPU time per optimizer step, measured inside its hooks (tools/bench_trl.py compares whole runs).
    per_step_ms = result["hooks_cpu"] / result["steps"] * 1000
    assert per_step_ms < 1.0, f"{per_step_ms:.3f} ms of CPU per optimizer step"
    # The same seed without the callback trains to the same losses: the adapter only reads.
    bare = tmp_path / "bare.json"
    command[command.index(str(out))] = str(bare)
    run = subprocess.run([*command, "--no-adapter"], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(bare.read_text(encoding="utf-8"))["losses"] == result["losses"]


def _total(receiver: Receiver, key: str) -> float:
    (point,) = receiver.metric_points()[CATALOG.metric(key).name].sum.data_points
    return float(point.as_double if point.HasField("as_double") else point.as_int)


def test_a_two_process_torchrun_run_always_has_its_series(trl_app: Path, tmp_path: Path) -> None:
    """torchrun --nproc_per_node 2 (gloo on CPU), both ranks with the same /metrics port: rank 0 serves the run's
    series from start to end, and nothing about telemetry reaches the training log."""
    import contextlib
    import re
    import urllib.request

    from testing.prom import free_port

    port = free_port()
    env = example_env(
        trl_app,
        OTEL_METRICS_EXPORTER="prometheus",
        OTEL_TRACES_EXPORTER="none",
        OTEL_EXPORTER_PROMETHEUS_HOST="127.0.0.1",
        OTEL_EXPORTER_PROMETHEUS_PORT=str(port),
        RL_FINISH_LINGER_SECONDS="20",  # waits for two of this test's scrapes, a fraction of a second
    )
    torchrun = Path(sys.executable).parent / "torchrun"
    command = [str(torchrun), "--nproc_per_node", "2", "--master_port", str(free_port()), str(SCRIPT)]
    command += [str(tmp_path / "run.json"), "--steps", "6", "--logging-steps", "10", "--reward-seconds", "0.3"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    scrapes: list[str] = []
    while proc.poll() is None:
        with contextlib.suppress(OSError):  # not serving yet, or already gone
            scrapes.append(urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode())
        time.sleep(0.2)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    series = [s for s in scrapes if "rl_run_state{" in s]
    assert series, "no scrape had the run's series"
    states = [float(m) for s in series for m in re.findall(r"^rl_run_state\{[^}]*\} (\S+)", s, re.M)]
    assert states[-1] == FINISHED and TRAINING in states
    steps = re.findall(r"^rl_train_steps_total\{[^}]*\} (\S+)", series[-1], re.M)
    assert steps == ["6.0"]  # one series (rank 0's), with every step
    assert "telemetry is off" not in out + err and "rlobs_telemetry" not in out + err


# The bundle's rules (python-prometheus, TRL) with windows a test can wait for, a 30-second start-up budget among them.
PROM_PROFILE = "eks-prometheus-exporter"
PROM_ALERTS = """alerts:
  stall: {window: 10s, startup: 30s, for: 2s, forgetAfter: 5m}
  lossSpike: {baseline: 30s, for: 2s}
"""
STARTUP, FOR = 30, 2
RUNS = {  # run id -> trl_grpo.py arguments (logging_steps=10, transformers' default NaN filter, in every run)
    # One generation feeds 20 steps of 1 s: after the NaN of step 3 the run trains on (its weights are NaN).
    "nan": ["--steps", "20", "--steps-per-generation", "20", "--step-seconds", "1", "--nan-at", "3"],
    "hang": ["--steps", "4", "--reward-seconds", "100000"],  # the first step never ends
    "slow": ["--steps", "12", "--reward-seconds", "2.5"],  # healthy steps 4x longer than progress is logged at
}


def test_trl_runs_through_prometheus_page_only_their_faults(tmp_path: Path) -> None:
    """Three real TRL runs scraped every second by a real Prometheus with the bundle's rules: the NaN loss fires
    RLLossSpike, the hang in the first step RLTrainingStalled once the start-up budget is spent (not before), the slow
    healthy run nothing, from its start through its finish."""
    _needs_trl()
    prometheus = tool("prometheus", "evaluates the bundle's rules on real TRL runs")
    text = all_profiles()[PROM_PROFILE].replace("system: verl", "system: trl") + PROM_ALERTS
    profile = parse_profile(text, f"{PROM_PROFILE}.yaml")
    app = render_app(tmp_path, profile)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule_groups(facts(profile))}), encoding="utf-8")
    ports = {run: free_port() for run in RUNS}
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(tmp_path / "rules.yaml")],
        "scrape_configs": [
            {
                "job_name": workload_job(profile),
                "static_configs": [{"targets": [f"127.0.0.1:{p}" for p in ports.values()]}],
            }
        ],
    }
    prom_port = free_port()
    base = f"http://127.0.0.1:{prom_port}"
    server = start(prometheus, tmp_path, config, prom_port)
    procs = {}
    for run, port in ports.items():
        env = example_env(
            app,
            OTEL_METRICS_EXPORTER="prometheus",
            OTEL_TRACES_EXPORTER="none",
            OTEL_EXPORTER_PROMETHEUS_HOST="127.0.0.1",
            OTEL_EXPORTER_PROMETHEUS_PORT=str(port),
            RL_RUN_ID=run,
            RL_FINISH_LINGER_SECONDS="5",
            OMP_NUM_THREADS="1",
        )
        command = [sys.executable, str(SCRIPT), str(tmp_path / f"{run}.json"), *RUNS[run]]
        procs[run] = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for run in ("nan", "slow"):
            assert procs[run].wait(timeout=400) == 0, procs[run].stderr.read()[-3000:]  # type: ignore[union-attr]
        state_since = naming.series(CATALOG.metric("state_since"), "python-prometheus")
        since = f'last_over_time({state_since}{{rl_run_id="hang"}}[10m])'
        started = float(query(base, since)[0]["value"][1])
        while time.time() < started + STARTUP + FOR + 20 and not _fired(base).get(("RLTrainingStalled", "hang")):
            time.sleep(1)
        time.sleep(3)
        fired = _fired(base)
    finally:
        for proc in (server, *procs.values()):
            proc.kill()
            proc.wait(timeout=30)
    assert set(fired) == {("RLLossSpike", "nan"), ("RLTrainingStalled", "hang")}, fired
    # Within the budget plus `for` and a few scrape and evaluation intervals, and never before the budget is spent.
    assert STARTUP + FOR <= fired[("RLTrainingStalled", "hang")] - started <= STARTUP + FOR + 10, fired


def _fired(base: str) -> dict[tuple[str, str], float]:
    """(alert, run) -> when it first fired (Unix seconds), over the last 15 minutes."""
    firing = 'ALERTS{alertstate="firing"}'
    found = query(base, f"min_over_time(timestamp({firing})[15m:1s])")
    # A workload's SLO burn (label `slo`, no run) is the budget of all its runs, judged by tests/test_slo.py.
    runs = [r for r in found if SLO_LABEL not in r["metric"]]
    return {(r["metric"]["alertname"], r["metric"].get("rl_run_id", "")): float(r["value"][1]) for r in runs}
