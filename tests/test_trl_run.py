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
