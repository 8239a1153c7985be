"""The generated instrumentation module against the real OpenTelemetry SDK and a real OTLP/gRPC receiver."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlobs.rl.identity import identity_values
from rlobs.targets import parse_profile
from testing.helpers import REPO, profile, tool
from testing.otlp import CATALOG, PROFILE, Receiver, example_env, render_app
from testing.prom import free_port


def _run_example(app: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(app / "example_rl_loop.py")], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.slow
def test_generated_files_pass_ruff(tmp_path: Path) -> None:
    ruff = tool("ruff", "lints the generated instrumentation module")
    app = render_app(tmp_path)
    settings = ["--isolated", "--line-length", "120", "--target-version", "py311"]
    lint = subprocess.run(
        [ruff, "check", *settings, "--select", "E,F,W,I,B,UP,SIM,RUF", str(app)], capture_output=True, text=True
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = subprocess.run([ruff, "format", "--check", *settings, str(app)], capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    (app / "broken.py").write_text("import os\n", encoding="utf-8")  # ruff must be able to fail here
    lint = subprocess.run([ruff, "check", *settings, str(app)], capture_output=True, text=True)
    assert lint.returncode != 0 and "F401" in lint.stdout


def test_requirements_are_pinned(tmp_path: Path) -> None:
    reqs = (render_app(tmp_path) / "requirements.txt").read_text(encoding="utf-8").splitlines()
    pins = [r for r in reqs if r and not r.startswith("#")]
    assert pins == [
        "opentelemetry-api==1.45.2",
        "opentelemetry-sdk==1.45.2",
        "opentelemetry-exporter-otlp-proto-grpc==1.45.2",
        "opentelemetry-exporter-prometheus==0.66b2",
        "protobuf>=5,<8",
    ]


@pytest.mark.slow
def test_metrics_match_the_catalog_exactly(tmp_path: Path, receiver: Receiver) -> None:
    from opentelemetry.proto.metrics.v1 import metrics_pb2

    app = render_app(tmp_path)
    env = example_env(
        app,
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}",
        OTEL_SERVICE_NAME="custom-service",
        OTEL_RESOURCE_ATTRIBUTES="service.name=from-attributes,deployment.environment=test",
    )
    run = _run_example(app, env)
    assert run.returncode == 0, run.stderr
    points = receiver.metric_points()
    assert set(points) == {m.name for m in CATALOG.metrics}
    identity = {k: v for k, v in identity_values(profile(PROFILE), CATALOG).items() if v is not None}
    # The profile names no run id: the module chose one for this process, the same on every point.
    run_id = CATALOG.attribute("run_id").name
    assert run_id not in identity
    identity[run_id] = receiver.point_attributes(CATALOG.metric("run_state").name)[run_id]
    cumulative = metrics_pb2.AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
    for m in CATALOG.metrics:
        got = points[m.name]
        assert got.unit == m.unit, m.name
        assert got.description == m.description
        kind = got.WhichOneof("data")
        if m.kind == "histogram":
            assert kind == "histogram" and got.histogram.aggregation_temporality == cumulative
            dps = got.histogram.data_points
            assert all(list(dp.explicit_bounds) == list(m.buckets) for dp in dps), m.name
        elif m.kind == "counter":
            assert kind == "sum" and got.sum.is_monotonic and got.sum.aggregation_temporality == cumulative
            dps = got.sum.data_points
        else:
            assert kind == "gauge", f"{m.name}: a real gauge, not {kind}"
            dps = got.gauge.data_points
        extra = [a for a in m.attributes if a not in identity]
        # identity only, plus a metric's own fixed-value attributes: no iteration or phase detail on metric points
        assert len(dps) == (
            1 if not extra else len({kv.value.string_value for dp in dps for kv in dp.attributes if kv.key in extra})
        ), m.name
        for dp in dps:
            attrs = {kv.key: kv.value.string_value for kv in dp.attributes}
            assert {k: v for k, v in attrs.items() if k not in extra} == identity, m.name
            assert set(attrs) - set(identity) == set(extra), m.name
    loop = points[CATALOG.metric("loop_duration").name].histogram.data_points[0]
    assert loop.count == 3
    steps = points[CATALOG.metric("train_steps").name].sum.data_points[0]
    assert steps.as_int == 6
    reward = points[CATALOG.metric("reward_mean").name].gauge.data_points[0]
    assert -0.5 < reward.as_double < 0  # negative values survive: it is a gauge
    resources = receiver.resources()
    assert resources and all(r["service.name"] == "custom-service" for r in resources)  # OTEL_SERVICE_NAME wins
    assert all(r["deployment.environment"] == "test" for r in resources)


def _scraped_after(app: Path, calls: str) -> list[str]:
    """The lines of one scrape of the module's /metrics (the python-prometheus pipeline) after `calls` ran."""
    port = free_port()
    script = (
        f"import urllib.request, rlobs_telemetry as t\nt.init()\n{calls}\n"
        f"print(urllib.request.urlopen('http://127.0.0.1:{port}/metrics', timeout=5).read().decode())\nt.shutdown()\n"
    )
    env = example_env(app, OTEL_METRICS_EXPORTER="prometheus", OTEL_EXPORTER_PROMETHEUS_PORT=str(port))
    env["RL_FINISH_LINGER_SECONDS"] = "0"  # no wait for a last scrape at exit
    env["OTEL_TRACES_EXPORTER"] = "none"
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("drop", [False, True])
def test_a_dropped_attribute_is_on_no_scraped_series(tmp_path: Path, drop: bool) -> None:
    # The python-prometheus pipeline: the same View, seen through the SDK's Prometheus exporter's /metrics.
    text = (REPO / "blueprints" / "eks-jark.yaml").read_text(encoding="utf-8")
    if drop:
        text = text.replace("\n  run:\n", "\n  dropAttributes: [drop_reason]\n  run:\n", 1)
    scraped = _scraped_after(render_app(tmp_path, parse_profile(text)), "t.record_loss('x')")
    dropped = [line for line in scraped if line.startswith("rl_telemetry_dropped_total{")]
    assert len(dropped) == (1 if drop else len(CATALOG.attribute("drop_reason").values)), dropped
    assert all(("rl_telemetry_reason=" in line) != drop and "rl_run_id=" in line for line in dropped)


@pytest.mark.slow
def test_a_flush_never_makes_the_next_scrape_serve_a_series_twice(tmp_path: Path) -> None:
    """Written down first: flush() (TRL's train end, a checkpoint, SIGTERM) leaves the next scrape of /metrics serving
    each series once. The SDK's Prometheus collector keeps every collect made between two scrapes and serves them all
    at the next one (opentelemetry-python#2500), so a flush that collected from it served every series twice there,
    and Prometheus drops a scrape's duplicate samples."""
    scraped = _scraped_after(render_app(tmp_path), "t.record_train_steps(steps=3)\nt.flush()")
    steps = [line for line in scraped if line.startswith("rl_train_steps_total{")]
    assert len(steps) == 1 and steps[0].endswith(" 3.0"), steps
    families = [line for line in scraped if line.startswith("# HELP ")]
    assert len(families) == len(set(families)), sorted(families)


@pytest.mark.slow
@pytest.mark.parametrize("drop", [False, True])
def test_a_dropped_attribute_is_on_no_exported_point(tmp_path: Path, receiver: Receiver, drop: bool) -> None:
    text = (REPO / "blueprints" / "eks-jark.yaml").read_text(encoding="utf-8")
    if drop:
        text = text.replace("\n  run:\n", "\n  dropAttributes: [drop_reason]\n  run:\n", 1)
    app = render_app(tmp_path, parse_profile(text))
    script = "import rlobs_telemetry as t\nt.init()\nt.record_loss('x')\nt.record_mfu(-1.0)\nt.shutdown()\n"
    env = example_env(app, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    reason = CATALOG.attribute("drop_reason").name
    dps = receiver.metric_points()[CATALOG.metric("telemetry_dropped").name].sum.data_points
    reasons = [kv.value.string_value for dp in dps for kv in dp.attributes if kv.key == reason]
    # Dropped: one series holding both refusals, its identity intact; kept: one series per reason (each starts at 0).
    every = sorted(CATALOG.attribute("drop_reason").values)
    assert (len(dps), sorted(reasons)) == ((1, []) if drop else (len(every), every))
    assert sum(dp.as_int for dp in dps) == 2
    run_id = CATALOG.attribute("run_id").name
    assert all(run_id in {kv.key for kv in dp.attributes} for dp in dps)


@pytest.mark.slow
def test_spans_nest_under_the_loop(tmp_path: Path, receiver: Receiver) -> None:
    app = render_app(tmp_path)
    run = _run_example(app, example_env(app, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}"))
    assert run.returncode == 0, run.stderr
    spans = receiver.spans()
    names = {s.key: s.name for s in CATALOG.spans}
    loops = [s for s in spans if s.name == names["loop"]]
    assert len(loops) == 3
    iteration = CATALOG.attribute("loop_iteration").name
    assert sorted(next(kv.value.int_value for kv in s.attributes if kv.key == iteration) for s in loops) == [0, 1, 2]
    loop_ids = {s.span_id for s in loops}
    for s in loops:
        assert not s.parent_span_id
    phases = [s for s in spans if s.name != names["loop"]]
    assert sorted({s.name for s in phases}) == sorted(n for k, n in names.items() if k != "loop")
    assert len(phases) == 12 and all(s.parent_span_id in loop_ids for s in phases)
    run_id = CATALOG.attribute("run_id").name
    assert all(any(kv.key == run_id for kv in s.attributes) for s in spans)
    sync = next(s for s in phases if s.name == names["sync"])
    sync_bytes = CATALOG.attribute("sync_bytes").name
    assert next(kv.value.int_value for kv in sync.attributes if kv.key == sync_bytes) == 14 * 2**30
    resources = receiver.resources()
    assert all(r["service.name"] == profile(PROFILE).workload.otel_service_name for r in resources)  # the default


@pytest.mark.slow
def test_schemeless_endpoint_is_plain_text(tmp_path: Path, receiver: Receiver) -> None:
    app = render_app(tmp_path)
    run = _run_example(app, example_env(app, OTEL_EXPORTER_OTLP_ENDPOINT=f"127.0.0.1:{receiver.port}"))
    assert run.returncode == 0, run.stderr
    assert receiver.metric_points() and receiver.spans()


@pytest.mark.slow
def test_exporters_none_send_nothing(tmp_path: Path, receiver: Receiver) -> None:
    """The receiver sees nothing when export is off: the checks above cannot pass by accident."""
    app = render_app(tmp_path)
    env = example_env(
        app,
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}",
        OTEL_METRICS_EXPORTER="none",
        OTEL_TRACES_EXPORTER="none",
    )
    run = _run_example(app, env)
    assert run.returncode == 0, run.stderr
    assert receiver.metrics == [] and receiver.traces == []


@pytest.mark.slow
def test_console_exporters(tmp_path: Path) -> None:
    app = render_app(tmp_path)
    run = _run_example(app, example_env(app, OTEL_METRICS_EXPORTER="console", OTEL_TRACES_EXPORTER="console"))
    assert run.returncode == 0, run.stderr
    assert CATALOG.metric("loop_duration").name in run.stdout and '"parent_id"' in run.stdout


@pytest.mark.slow
def test_sigterm_flushes_before_exit(tmp_path: Path, receiver: Receiver) -> None:
    app = render_app(tmp_path)
    env = example_env(
        app,
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}",
        RL_EXAMPLE_ITERATIONS="100000",
        RL_EXAMPLE_SECONDS="0.02",
    )
    proc = subprocess.Popen(
        [sys.executable, str(app / "example_rl_loop.py")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("iteration 2 done"):
            break
    time.sleep(0.05)  # inside iteration 3
    assert receiver.metrics == []  # nothing exported yet: the interval is a minute
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err
    points = receiver.metric_points()
    assert set(points) == {m.name for m in CATALOG.metrics}
    assert points[CATALOG.metric("loop_duration").name].histogram.data_points[0].count >= 3
    loops = [s for s in receiver.spans() if s.name == CATALOG.span("loop").name]
    assert len(loops) >= 4  # the interrupted iteration's span ended and was exported too


@pytest.mark.slow
def test_http_protocol_without_its_exporter_says_what_to_install(tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("opentelemetry.exporter.otlp.proto.http") is not None:
        pytest.skip("the HTTP exporter is installed here; the error path needs it absent")
    app = render_app(tmp_path)
    run = _run_example(app, example_env(app, OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf", OTEL_TRACES_EXPORTER="none"))
    # The training runs on without telemetry, and says why.
    assert run.returncode == 0, run.stderr
    assert "telemetry is off" in run.stderr and "needs opentelemetry-exporter-otlp-proto-http" in run.stderr
