"""A training process with a hostile OTEL_*/RL_* environment: the generated module, imported in a real process on the
real SDK, runs 1,000 loop iterations with no exception reaching the loop, no more threads than the SDK's own, a
bounded exit and a final export that says the run finished."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from testing.otlp import CATALOG, Receiver, example_env, render_app

pytestmark = pytest.mark.slow

STATE = CATALOG.metric("run_state").name
FINISHED = 0

PROBE = """
import json, sys, threading, time

base = threading.active_count()
import rlobs_telemetry as telemetry

most = base
for i in range(1000):
    with telemetry.loop(i):
        with telemetry.phase("sample", sample_batch_size=4):
            telemetry.record_samples(4, episodes=1)
        with telemetry.phase("train"):
            with telemetry.train_step(tokens=8):
                pass
            telemetry.record_loss(0.5)
    most = max(most, threading.active_count())
print(json.dumps({"base": base, "most": most, "end": time.time()}), flush=True)
"""

# Hostile value -> the variable the module warns about once (None: the SDK's own message, or nothing to say).
HOSTILE = {
    "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT=abc": "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=4k": "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
    "OTEL_SPAN_EVENT_COUNT_LIMIT=-1": "OTEL_SPAN_EVENT_COUNT_LIMIT",
    "OTEL_PYTHON_METER_PROVIDER=bogus": None,
    "OTEL_PYTHON_TRACER_PROVIDER=bogus": None,
    "OTEL_METRICS_EXEMPLAR_FILTER=sometimes": "OTEL_METRICS_EXEMPLAR_FILTER",
    "OTEL_EXPORTER_OTLP_COMPRESSION=zip": "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_METRIC_EXPORT_INTERVAL=1e400": "OTEL_METRIC_EXPORT_INTERVAL",
    "OTEL_METRIC_EXPORT_INTERVAL=nan": "OTEL_METRIC_EXPORT_INTERVAL",
    "OTEL_METRIC_EXPORT_TIMEOUT=abc": "OTEL_METRIC_EXPORT_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TIMEOUT=abc": "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT=1e300": "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
    "OTEL_BSP_SCHEDULE_DELAY=1e300": "OTEL_BSP_SCHEDULE_DELAY",
    "OTEL_BSP_MAX_QUEUE_SIZE=0": "OTEL_BSP_MAX_QUEUE_SIZE",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE=x": "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    "OTEL_TRACES_SAMPLER_ARG=nan": None,
    "RL_NUM_GPUS=1e400": "RL_NUM_GPUS",
}


def _probe(app: Path, receiver: Receiver, probe: str = PROBE, **env: str) -> tuple[dict[str, float], float, str]:
    """Run the probe; (its counts, seconds from the loop's end to the process's exit, stderr)."""
    (app / "probe.py").write_text(probe, encoding="utf-8")
    full = example_env(
        app,
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}",
        OTEL_METRICS_EXPORTER="otlp",
        OTEL_TRACES_EXPORTER="otlp",
        RL_FINISH_LINGER_SECONDS="0",
    )
    full.update(env)
    run = subprocess.run([sys.executable, str(app / "probe.py")], env=full, capture_output=True, text=True, timeout=90)
    exited = time.time()
    assert run.returncode == 0, run.stderr[-3000:]
    counts = json.loads(run.stdout.splitlines()[-1])
    return counts, exited - counts["end"], run.stderr


@pytest.mark.parametrize("hostile", list(HOSTILE))
def test_a_hostile_value_never_reaches_the_loop(tmp_path: Path, receiver: Receiver, hostile: str) -> None:
    variable, value = hostile.split("=", 1)
    counts, _, stderr = _probe(render_app(tmp_path), receiver, **{variable: value})
    assert counts["most"] <= counts["base"] + 2, counts  # the metric reader's and the span processor's threads
    assert receiver.gauge_values(STATE)[-1] == FINISHED
    warned = HOSTILE[hostile]
    if warned is not None:
        assert stderr.count(f"rlobs_telemetry: {warned}=") == 1, stderr[-3000:]
    assert "telemetry is off" not in stderr


def test_a_failed_set_up_falls_back_once_and_stops_what_it_started(tmp_path: Path, receiver: Receiver) -> None:
    """The OTLP reader (and its thread) starts before the unknown exporter name fails the set-up."""
    counts, _, stderr = _probe(render_app(tmp_path), receiver, OTEL_METRICS_EXPORTER="otlp,bogus")
    assert counts["most"] <= counts["base"], counts
    assert stderr.count("telemetry is off") == 1, stderr[-3000:]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("linger", ["1e308", "inf", "nan", "-1"])
def test_any_linger_ends_with_the_final_export(tmp_path: Path, receiver: Receiver, linger: str) -> None:
    """A linger too large, or no number, is bounded: the wait for the last scrape ends, the providers shut down and
    the finish is exported (OTLP beside the /metrics endpoint this test scrapes)."""
    port = _free_port()
    done = threading.Event()

    def scrape() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1).read()
            done.wait(0.1)

    scraper = threading.Thread(target=scrape, daemon=True)
    scraper.start()
    try:
        counts, seconds, stderr = _probe(
            render_app(tmp_path),
            receiver,
            OTEL_METRICS_EXPORTER="prometheus,otlp",
            OTEL_TRACES_EXPORTER="none",
            OTEL_EXPORTER_PROMETHEUS_HOST="127.0.0.1",
            OTEL_EXPORTER_PROMETHEUS_PORT=str(port),
            RL_FINISH_LINGER_SECONDS=linger,
        )
    finally:
        done.set()
    # The /metrics server's thread, its thread for the scrape under way and the OTLP reader's.
    assert counts["most"] <= counts["base"] + 3, counts
    assert seconds < 20, seconds
    assert receiver.gauge_values(STATE)[-1] == FINISHED
    assert stderr.count("rlobs_telemetry: RL_FINISH_LINGER_SECONDS=") == 1, stderr[-3000:]
    if linger in ("1e308", "inf"):  # the shipped bound
        assert f"RL_FINISH_LINGER_SECONDS={linger!r} is above 60: using 60" in stderr, stderr[-3000:]


def test_a_huge_linger_with_no_scrape_still_exits(tmp_path: Path, receiver: Receiver) -> None:
    """Nobody scrapes: the wait ends at the linger's bound, then the finish is exported. The bound is lowered to 2 s
    in the probe (the shipped 60 s is what test_any_linger_ends_with_the_final_export's warning shows), so the wait
    that times out is the real one, without a minute of it."""
    bounded = "import rlobs_telemetry\nrlobs_telemetry.SETTINGS['RL_FINISH_LINGER_SECONDS'] = (30.0, 0.0, 2.0)\n"
    _, seconds, stderr = _probe(
        render_app(tmp_path),
        receiver,
        probe=bounded + PROBE,
        OTEL_METRICS_EXPORTER="prometheus,otlp",
        OTEL_TRACES_EXPORTER="none",
        OTEL_EXPORTER_PROMETHEUS_HOST="127.0.0.1",
        OTEL_EXPORTER_PROMETHEUS_PORT=str(_free_port()),
        RL_FINISH_LINGER_SECONDS="1e9",
    )
    assert "RL_FINISH_LINGER_SECONDS='1e9' is above 2: using 2" in stderr, stderr[-3000:]
    assert 2 <= seconds < 10, seconds
    assert receiver.gauge_values(STATE)[-1] == FINISHED
