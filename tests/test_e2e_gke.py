"""End to end on GKE: the bundle's module + real SDK -> OTLP -> series as Cloud Monitoring's PromQL names them -> a real
Prometheus -> every dashboard query, alert-policy probe, the goodput SLO's indicator and the runbook's queries.

There is no Cloud Monitoring here, so an in-test OTLP/gRPC receiver takes what the real OpenTelemetry SDK exports
from the rendered module in two real processes of one run (the first fails after a step, the restart runs a loop with
every phase, checkpoint, evaluation and other work, idle time, and a pause past the stall limit), and each point
becomes a sample of the series Cloud Monitoring stores it under:

- The Telemetry API writes "all metric points ... as they are for Google Cloud Managed Service for Prometheus, by
  using the Prometheus mapping" on the prometheus_target resource
  (https://cloud.google.com/stackdriver/docs/reference/telemetry/v1.metrics): a point of `rl.run.time` lands on
  `prometheus.googleapis.com/rl.run.time/counter` (not workload.googleapis.com, the Ops Agent's domain), and PromQL
  reads it by its name: "Cloud Monitoring metrics can be queried using the UTF-8 specification for PromQL. UTF-8
  metric names must be quoted and moved into the braces", as must label names with legacy-incompatible characters,
  and distribution metrics are queried "like Prometheus histograms, with _count, _sum, or _bucket suffix"
  (https://cloud.google.com/monitoring/promql). So managed OTel (gke-telemetry-api) reads `{"rl.run.time",
  "rl.time.bucket"="train"}`, no unit suffix, no `_total`; a self-run collector's googlemanagedprometheus exporter
  (gke-gmp-collector) names them as otlptranslator does first (rlobs.rl.naming.series and label: underscores, unit
  suffixes, `_total`).
- Every point is on the prometheus_target resource, whose labels PromQL sees beside the attributes: `cluster` from
  k8s.cluster.name, `namespace` from k8s.namespace.name, `job` from service.namespace/service.name, `instance`
  from service.instance.id (gke-managed-otel.md §2.1, the Telemetry API's v1.metrics page); the process gets the
  resource attributes the bundle's workload env sets (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), with the
  values its queries are scoped to.
- Prometheus 2.42 cannot store dotted names, so names and queries both go through `classic` (tests/testing/
  scenario_run.py): each quoted dotted name becomes the same name with underscores, the one translation applied.

The remaining-error-budget tile and the burn-rate policies read the SLO (select_slo_budget_fraction and
select_slo_burn_rate), which is not PromQL: its indicator's good and total monitoring filters are run instead,
as the selectors they name, so the budget has data exactly when they do. Nothing is exempt.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from rlobs.rl import naming, slos
from rlobs.rl.slos import BUDGET_TITLE
from rlobs.targets import parse_profile
from testing.bundles import build, facts
from testing.helpers import all_profiles, tool
from testing.otlp import serve_otlp
from testing.prom import free_port, get, start, wait
from testing.scenario_report import GKE
from testing.scenario_run import classic

pytestmark = pytest.mark.slow

SLOS = "slos:\n  windowDays: 7\n  goodput: {objective: 0.9}\n"
PAUSE_LIMIT = 2  # seconds: the restart's evaluation pause runs past it, so some time is stalled
LOOP = """
import os, sys, time
import rlobs_telemetry as telemetry

P = 0.3
@telemetry.run()
def main():
    telemetry.init(gpus=8)
    restarted = "RLOBS_RESTART_COUNT" in os.environ
    for i in range(3 if restarted else 1):
        with telemetry.loop(i):
            with telemetry.phase("sample"):
                with telemetry.env_step():
                    time.sleep(P)
                telemetry.record_samples(64, episodes=16)
            with telemetry.phase("reward"):
                time.sleep(P)
                telemetry.record_reward(0.1 * i, episode_length=180)
            with telemetry.phase("train"):
                with telemetry.train_step(tokens=4096):
                    time.sleep(P)
                telemetry.record_loss(1.0 / (i + 1))
                telemetry.record_mfu(0.45)
            with telemetry.phase("sync"):
                time.sleep(P)
            time.sleep(P)  # other work inside the loop
        time.sleep(P)  # idle between loops
        with telemetry.pause("checkpoint"):
            time.sleep(P)
        if restarted and i == 1:
            with telemetry.pause("evaluation"):
                time.sleep(%(stall)s)
    if not restarted:
        raise RuntimeError("CUDA out of memory")  # the run fails; the restart follows after a gap (down)
    time.sleep(2)

main()
"""


def _bundle(name: str) -> tuple[Any, dict[str, str]]:
    text = all_profiles()[name]
    text = re.sub(r"(?ms)^alerts:\n(?:[ #].*\n?)*", "", text) + f"alerts:\n  stall: {{pauseLimit: {PAUSE_LIMIT}s}}\n"
    if "\nslos:" not in text:
        text += SLOS
    p = parse_profile(text, f"{name}.yaml")
    return p, {r.path: r.text for r in build(p)}


def _run(app: Path, rl: Any, port: int) -> None:
    """The run's two processes, the restart after a gap (down)."""
    ns, service = rl.scope["job"].split("/")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RL_", "RLOBS_"))}
    env |= {
        "PYTHONPATH": str(app),
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_TRACES_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"http://127.0.0.1:{port}",
        "OTEL_METRIC_EXPORT_INTERVAL": "500",
        "OTEL_SERVICE_NAME": service,
        "OTEL_RESOURCE_ATTRIBUTES": f"service.namespace={ns},service.instance.id=trainer-0,"
        f"k8s.namespace.name={rl.scope['namespace']},k8s.cluster.name={rl.scope['cluster']}",
        "RL_RUN_ID": "run-e2e",
        "RL_FINISH_LINGER_SECONDS": "0",
    }
    (app / "loop.py").write_text(LOOP % {"stall": PAUSE_LIMIT + 1.5})
    first = subprocess.run([sys.executable, str(app / "loop.py")], env=env, capture_output=True, text=True)
    assert "CUDA out of memory" in first.stderr, first.stderr
    time.sleep(3)  # down: no process of the run until the restart
    env["RLOBS_RESTART_COUNT"] = "1"  # what the module reads a restart from (beside TORCHELASTIC_RESTART_COUNT)
    second = subprocess.run([sys.executable, str(app / "loop.py")], env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr


def _openmetrics(requests: list[Any], rl: Any) -> tuple[str, float]:
    """The exported points as OpenMetrics samples of the series Cloud Monitoring's PromQL names (through `classic`),
    and the last time the restarted run was live (its last training or paused point)."""
    metrics = {m.name: m for m in rl.catalog.metrics}
    series: dict[str, set[tuple[float, float]]] = {}
    live = 0.0
    for req in requests:
        for rm in req.resource_metrics:
            res = {kv.key: kv.value.string_value for kv in rm.resource.attributes}
            target = {
                "cluster": res["k8s.cluster.name"],
                "namespace": res["k8s.namespace.name"],
                "job": f"{res['service.namespace']}/{res['service.name']}",
                "instance": res["service.instance.id"],
                "location": "europe-west4",
            }
            for m in (m for sm in rm.scope_metrics for m in sm.metrics if m.name in metrics):
                metric, kind = metrics[m.name], m.WhichOneof("data")
                for dp in getattr(m, kind).data_points:
                    labels = {naming.label(kv.key, rl.pipeline): kv.value.string_value for kv in dp.attributes}
                    labels |= target
                    t = dp.time_unix_nano / 1e9
                    points: list[tuple[str, dict[str, str], float]] = []
                    if kind == "histogram":
                        points += [("sum", labels, dp.sum), ("count", labels, float(dp.count))]
                        total = 0
                        for le, n in zip([*dp.explicit_bounds, float("inf")], dp.bucket_counts, strict=True):
                            total += n
                            points.append(("bucket", {**labels, "le": "+Inf" if le > 1e308 else repr(le)}, total))
                    else:
                        v = dp.as_double if dp.HasField("as_double") else float(dp.as_int)
                        points.append(("", labels, v))
                        if metric.key == "run_state" and v in (1.0, 3.0):
                            live = max(live, t)
                    for part, lab, v in points:
                        name = naming.series(metric, rl.pipeline, part)  # type: ignore[arg-type]
                        body = [naming.quote(name)]
                        body += [
                            f"{naming.label_token(k, rl.pipeline)}={naming.quote(x)}" for k, x in sorted(lab.items())
                        ]
                        # OpenMetrics separates labels by a bare comma (no value here holds ", ")
                        sel = classic("{" + ", ".join(body) + "}").replace(", ", ",")
                        series.setdefault(sel, set()).add((t, float(v)))
    lines = [f"{sel} {v!r} {t:.3f}" for sel, samples in sorted(series.items()) for t, v in sorted(samples)]
    return "\n".join([*lines, "# EOF", ""]), live


def _slo_ratio(files: dict[str, str], pipeline: naming.Pipeline) -> str:
    """The goodput SLO indicator's good and total monitoring filters, as PromQL selectors of the same series."""
    slo = json.loads(next(t for p, t in files.items() if p.endswith("slos/goodput.json")))
    ratio = slo["serviceLevelIndicator"]["requestBased"]["goodTotalRatio"]
    found = []
    for f in (ratio["goodServiceFilter"], ratio["totalServiceFilter"]):
        name = re.search(r'metric.type="prometheus.googleapis.com/([^/"]+)/(\w+)"', f)
        assert name and name[2] == "counter", f  # rl.run.time: a monotonic OTLP sum, Cloud Monitoring's /counter
        matchers = re.findall(r'(?:resource|metric).label."([^"]+)"(!?=)("[^"]*")', f)
        found.append(
            classic(
                "{"
                + ", ".join(
                    [naming.quote(name[1]), *(f"{naming.label_token(k, pipeline)}{op}{v}" for k, op, v in matchers)]
                )
                + "}"
            )
        )
    return f"sum(increase({found[0]}[1h])) / sum(increase({found[1]}[1h]))"


def _queries(files: dict[str, str], rl: Any) -> dict[str, str]:
    """Every PromQL of the GKE bundle: widget title -> query, alert policy probes, the SLO's indicator and the
    runbook's query for the runs that spent the budget."""
    dash = json.loads(next(t for p, t in files.items() if p.startswith("monitoring/dashboards/")))
    found = {}
    for tile in dash["mosaicLayout"]["tiles"]:
        for i, ds in enumerate(tile["widget"].get("xyChart", {}).get("dataSets", [])):
            q = ds["timeSeriesQuery"].get("prometheusQuery")
            key = f"{tile['widget']['title']} #{i}"
            found[key] = q if q else ds["timeSeriesQuery"]["timeSeriesFilter"]["filter"]
    budget = [k for k, q in found.items() if q.startswith("select_slo_budget_fraction")]
    assert budget, "the remaining-error-budget tile"
    for k in budget:
        found[k] = _slo_ratio(files, rl.pipeline)
    for a in rl.alerts:
        for i, probe in enumerate(a.probes):
            probe = re.sub(r" offset \d+[smhd]", "", probe)  # a baseline that ends 30m ago has no data yet
            found[f"{a.name} probe {i}"] = re.sub(r":1m\]", ":1s]", probe)  # a subquery step that fits in seconds
    for section in slos.runbook_sections(rl):  # the runbook's query for the runs that spent the budget
        found[f"{section['name']} runbook"] = section["runs"]
    return {k: classic(q) for k, q in found.items()}


@pytest.mark.parametrize("name", sorted(GKE))
def test_every_gke_dashboard_query_and_policy_probe_returns_data(name: str, tmp_path: Path) -> None:
    promtool = tool("promtool", "backfills the exported points")
    prometheus = tool("prometheus", "runs the dashboard's PromQL")
    p, files = _bundle(name)
    rl = facts(p)
    assert rl.pipeline == GKE[name]
    app = tmp_path / "app"
    for path, text in files.items():
        if path.startswith("app/"):
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text(text, encoding="utf-8")
    with serve_otlp() as receiver:
        _run(app, rl, receiver.port)
        text, at = _openmetrics(receiver.metrics, rl)
    (tmp_path / "points.om").write_text(text, encoding="utf-8")
    backfill = [promtool, "tsdb", "create-blocks-from", "openmetrics", "points.om", "data"]
    done = subprocess.run(backfill, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, (done.stderr[-2000:], text[:1500])
    queries = _queries(files, rl)
    # The accounting (with down: the restart's gap) and the remaining error budget are among them.
    assert {"Time accounting #0", "Goodput #0", "Badput by cause #0", f"{BUDGET_TITLE} #0"} <= set(queries)
    assert any("clamp_min(clamp_max(time() - " in q for q in queries.values())
    port = free_port()
    server = start(prometheus, tmp_path, {"global": {"scrape_interval": "1m"}}, port)
    base = f"http://127.0.0.1:{port}"

    def run(q: str) -> list[Any]:
        try:
            data = get(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": q, "time": at}))
        except urllib.error.HTTPError as exc:  # a query Prometheus refuses: say why
            pytest.fail(f"{q}: {exc.read().decode()}")
        return list(data["data"]["result"])

    try:
        wait(
            "Prometheus to be ready",
            lambda: get(f"{base}/api/v1/status/tsdb")["status"] == "success",
            time.monotonic() + 30,
        )
        results = {k: run(q) for k, q in queries.items()}
        assert [(k, queries[k]) for k, r in results.items() if not r] == []
        # The run holds every cause: each bucket of the accounting, down included, has time in it.
        accounted = [k for k in results if k.startswith(("Time accounting", "GPU-hours lost"))]
        assert len(accounted) == 10 + 8
        assert [k for k in accounted if not float(results[k][0]["value"][1]) > 0] == []
        # A misspelt name returns nothing: the checks above can fail.
        run_time = naming.series(rl.catalog.metric("run_time"), rl.pipeline).replace(".", "_")  # as classic names it
        assert run_time in queries["Time accounting #0"]
        assert run(queries["Time accounting #0"].replace(run_time, run_time + "_x")) == []
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"\n{name}: {len(queries)} queries returned data")
