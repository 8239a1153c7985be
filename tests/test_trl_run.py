"""A real TRL GRPO run on CPU (a tiny random model, no network) with the bundle's RlobsCallback, exporting to a real
OTLP/gRPC receiver: progress at every optimizer step with logging_steps=10, a NaN loss that transformers' default
NaN filter keeps out of the logs is counted, the time after train() returns is a pause, the run ends finished, and
the callback costs well under 1 ms of CPU per optimizer step. Needs the `trl` extra (torch, transformers, trl,
datasets, accelerate): skipped without it, failed when RLOBS_REQUIRE_TOOLS=1 (.ci/run installs it)."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from testing.adapters import render_app, with_system
from testing.helpers import REQUIRE_TOOLS
from testing.otlp import CATALOG, Receiver, example_env

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "testing" / "trl_grpo.py"
NEEDS = ("torch", "transformers", "trl", "datasets", "accelerate")
FINISHED, TRAINING, STARTING, PAUSED = 0, 1, 2, 3


@pytest.fixture
def trl_app(tmp_path: Path) -> Path:
    missing = [name for name in NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        why = f"the real TRL run needs {', '.join(missing)}: pip install '.[trl]' (torch first, see pyproject.toml)"
        if REQUIRE_TOOLS:
            pytest.fail(f"RLOBS_REQUIRE_TOOLS=1: {why}")
        pytest.skip(why)
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


def _total(receiver: Receiver, key: str) -> float:
    (point,) = receiver.metric_points()[CATALOG.metric(key).name].sum.data_points
    return float(point.as_double if point.HasField("as_double") else point.as_int)


def test_a_two_process_torchrun_run_always_has_its_series(trl_app: Path, tmp_path: Path) -> None:
    """torchrun --nproc_per_node 2 (gloo on CPU), both ranks with the same /metrics port: rank 0 serves the run's
    series from start to end, and nothing about telemetry reaches the training log."""
    import contextlib
    import re
    import time
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
