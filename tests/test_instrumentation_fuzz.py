"""The generated module never raises into the training loop, whatever it is given (hypothesis, in a subprocess so the
module's atexit and SIGTERM handlers never touch the test runner)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.helpers import module
from testing.otlp import render_app

pytestmark = pytest.mark.slow

FUZZ = """
import sys, warnings
from hypothesis import given, settings, strategies as st

import rlobs_telemetry as telemetry

warnings.simplefilter("ignore")
anything = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**400, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20), st.binary(max_size=8),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.complex_numbers(), st.just(object()),
)


@settings(max_examples=400, deadline=None)
@given(anything, anything, anything)
def records(a, b, c):
    telemetry.record_samples(a, episodes=b)
    telemetry.record_reward(a, episode_length=b)
    telemetry.record_loss(a)
    telemetry.record_mfu(a)
    telemetry.set_rates(samples_per_second=a, tokens_per_second=b, gpus=c)
    telemetry.record_train_step(a, duration_ms=b)
    telemetry.record_env_step(a)
    telemetry.init(gpus=c)


@settings(max_examples=200, deadline=None)
@given(anything, anything, st.text(max_size=10), anything)
def spans(iteration, name, phase, attribute):
    with telemetry.loop(iteration, name=name):
        with telemetry.phase(phase, sample_batch_size=attribute, not_an_attribute=attribute):
            pass
        with telemetry.phase("sync", sync_bytes=attribute, sync_source=attribute):
            pass
        with telemetry.train_step(tokens=iteration):
            pass
        with telemetry.env_step():
            pass


@settings(max_examples=200, deadline=None)
@given(anything, anything)
def lifecycle(reason, name):
    telemetry.init(run_name=name)
    with telemetry.pause(reason), telemetry.pause(reason):
        telemetry.progress()
    telemetry.finishing()
    with telemetry.pause(reason):
        pass
    telemetry.progress()


records()
spans()
lifecycle()
try:  # the user's own exceptions pass through every context manager
    with telemetry.loop(1), telemetry.phase("train"), telemetry.train_step():
        raise KeyError("the user's")
except KeyError:
    pass
else:
    sys.exit("a user exception was swallowed")
telemetry.flush(timeout_ms="soon")
telemetry.finish()
telemetry.record_loss(1.0)  # after finish: still no exception
print("no exception reached the caller")
"""


@pytest.mark.parametrize("exporter", ["none", "prometheus"])
def test_no_value_raises_into_the_loop(tmp_path: Path, exporter: str) -> None:
    module("hypothesis", "drives the generated module with arbitrary values")
    app = render_app(tmp_path)
    (app / "fuzz.py").write_text(FUZZ, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RL_"))}
    env |= {
        "PYTHONPATH": str(app),
        "OTEL_METRICS_EXPORTER": exporter,
        "OTEL_TRACES_EXPORTER": "none",
        "OTEL_EXPORTER_PROMETHEUS_HOST": "127.0.0.1",
        "OTEL_EXPORTER_PROMETHEUS_PORT": "0",
        "RL_FINISH_LINGER_SECONDS": "0",
        "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "hypothesis"),
    }
    run = subprocess.run(
        [sys.executable, str(app / "fuzz.py")], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "no exception reached the caller" in run.stdout
