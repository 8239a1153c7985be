"""The generated app module runs in a plain virtual environment holding only its pinned requirements."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testing.otlp import CATALOG, Receiver, example_env, render_app


@pytest.mark.slow
def test_example_in_a_venv_with_only_the_pinned_requirements(tmp_path: Path, receiver: Receiver) -> None:
    app = render_app(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(app / "requirements.txt")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    endpoint = f"http://127.0.0.1:{receiver.port}"
    env = example_env(
        app,
        OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
        OTEL_METRICS_EXPORTER="otlp",
        OTEL_TRACES_EXPORTER="otlp",
        OTEL_SERVICE_NAME="venv-check",
    )
    run = subprocess.run(
        [str(python), str(app / "example_rl_loop.py")], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    emitted = set(receiver.metric_points())
    assert {m.name for m in CATALOG.metrics} <= emitted
    assert receiver.spans(), "no spans arrived"
