"""A bundle's generated app (telemetry module and framework adapter) loaded in this process on the real
OpenTelemetry SDK, with an in-memory metric reader instead of the OTLP exporter."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from rlobs.bundle.render import render
from rlobs.bundle.spec import Plan
from rlobs.profile.model import ProfileBase as Profile
from rlobs.rl.app import app_files
from testing.bundles import facts
from testing.helpers import module, profile

BLUEPRINT = "eks-jark"


# A stand-in for verl/utils/tracking.py (volcengine/verl@b178a3c): Tracking builds a FileLogger for the `file` backend,
# which opens VERL_FILE_LOGGER_PATH "wb" and writes one orjson line per log call.
VERL_TRACKING = """
import json, os


class FileLogger:
    def __init__(self, project_name, experiment_name):
        self.filepath = os.getenv("VERL_FILE_LOGGER_PATH", None)
        self.fp = open(self.filepath, "wb", buffering=0)

    def log(self, data, step):
        self.fp.write(json.dumps({"step": step, "data": data}).encode() + b"\\n")


class Tracking:
    def __init__(self, project_name, experiment_name, default_backend="console", config=None):
        backends = [default_backend] if isinstance(default_backend, str) else default_backend
        self.logger = {"file": FileLogger(project_name, experiment_name)} if "file" in backends else {}

    def log(self, data, step, backend=None):
        for logger in self.logger.values():
            logger.log(data=data, step=step)
"""


def verl_site(root: Path) -> Path:
    """A folder holding the stand-in verl package (VERL_TRACKING), for a PYTHONPATH."""
    site = root / "site"
    for rel, text in {
        "verl/__init__.py": "",
        "verl/utils/__init__.py": "",
        "verl/utils/tracking.py": VERL_TRACKING,
    }.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text, encoding="utf-8")
    return site


def with_system(system: str, name: str = BLUEPRINT) -> Profile:
    """The blueprint's profile with another workload.run.system."""
    p = profile(name)
    run = p.workload.run.model_copy(update={"system": system})
    return p.model_copy(update={"workload": p.workload.model_copy(update={"run": run})})


def render_app(root: Path, p: Profile) -> Path:
    for r in render(Plan(p.metadata.name, app_files(facts(p)))):
        if r.path.startswith("app/"):
            path = root / r.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(r.text, encoding="utf-8")
    return root / "app"


def _load(name: str, path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    loaded = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, loaded)
    spec.loader.exec_module(loaded)
    return loaded


@dataclass
class App:
    telemetry: ModuleType
    adapter: ModuleType
    reader: Any

    def points(self) -> dict[str, list[Any]]:
        """Metric name -> its data points (the reader's cumulative view)."""
        data = self.reader.get_metrics_data()
        found: dict[str, list[Any]] = {}
        for rm in data.resource_metrics if data else []:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    found.setdefault(m.name, []).extend(m.data.data_points)
        return found

    def units(self) -> dict[str, str]:
        data = self.reader.get_metrics_data()
        return {m.name: m.unit for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}

    def total(self, name: str, **attributes: str) -> float:
        """Sum of a counter (or histogram sum) over its points matching the attributes."""
        points = [p for p in self.points().get(name, []) if attributes.items() <= dict(p.attributes).items()]
        return sum(p.sum if hasattr(p, "bucket_counts") else p.value for p in points)

    def value(self, name: str) -> float:
        (point,) = self.points()[name]
        return float(point.value)

    def histogram(self, name: str) -> tuple[int, float]:
        (point,) = self.points()[name]
        return int(point.count), float(point.sum)


def _no_exit_hook(*_args: Any, **_kwargs: Any) -> None:
    """Stands in for atexit.register: a test process keeps no exit hooks of an app it imported."""


def load_app(root: Path, system: str, monkeypatch: pytest.MonkeyPatch) -> App:
    """Render the app for a profile whose run.system is `system`, import it fresh, and read its metrics in memory."""
    module("opentelemetry.sdk", "runs the generated app on the real OpenTelemetry SDK")
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    app = render_app(root, with_system(system))
    telemetry = _load("rlobs_telemetry", app / "rlobs_telemetry.py", monkeypatch)
    reader = InMemoryMetricReader()
    monkeypatch.setattr(telemetry, "_metric_readers", lambda _state: [reader])
    monkeypatch.setattr(telemetry, "_span_exporters", lambda: [])
    # No process-wide hooks from a test: the SIGTERM handler, the excepthook, the sys.exit wrapper, the exit flush.
    monkeypatch.setattr(telemetry, "_install_sigterm", lambda: None)
    monkeypatch.setattr(telemetry, "_install_excepthook", lambda: None)
    monkeypatch.setattr(telemetry, "_install_exit", lambda: None)
    monkeypatch.setattr(telemetry.atexit, "register", _no_exit_hook)
    adapter = _load("rlobs_adapter", app / "rlobs_adapter.py", monkeypatch)
    return App(telemetry, adapter, reader)
