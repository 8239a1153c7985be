"""The generated app, rendered on its own, and a real OTLP/gRPC receiver to point it at."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlobs.bundle.render import render
from rlobs.bundle.spec import Plan
from rlobs.profile.model import ProfileBase as Profile
from rlobs.rl.app import app_files
from rlobs.rl.catalog import load_catalog
from testing.bundles import facts
from testing.helpers import module, profile

CATALOG = load_catalog()
PROFILE = "eks-jark"


def render_app(root: Path, name: str | Profile = PROFILE) -> Path:
    """Render the bundle's app/ files (of a test profile, by name, or of a parsed one) into root; return the app
    folder."""
    p = profile(name) if isinstance(name, str) else name
    for r in render(Plan(p.metadata.name, app_files(facts(p)))):
        if r.path.startswith("app/"):
            path = root / r.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(r.text, encoding="utf-8")
    return root / "app"


@dataclass
class Receiver:
    port: int
    metrics: list[Any] = field(default_factory=list)
    traces: list[Any] = field(default_factory=list)

    def metric_points(self) -> dict[str, Any]:
        """Metric name -> its last exported Metric message (cumulative temporality: the last one is complete)."""
        found: dict[str, Any] = {}
        for req in self.metrics:
            for rm in req.resource_metrics:
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        found[m.name] = m
        return found

    def gauge_values(self, name: str) -> list[float]:
        """A gauge's value in each export, in order (one series: the module's one run per process)."""
        values = []
        for req in self.metrics:
            for rm in req.resource_metrics:
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        if m.name == name:
                            dp = m.gauge.data_points[-1]
                            values.append(dp.as_double if dp.HasField("as_double") else float(dp.as_int))
        return values

    def point_attributes(self, name: str) -> dict[str, str]:
        """The attributes of a metric's last exported data point."""
        m = self.metric_points()[name]
        dps = getattr(m, m.WhichOneof("data")).data_points
        return {kv.key: kv.value.string_value for kv in dps[-1].attributes}

    def resources(self) -> list[dict[str, str]]:
        return [
            {kv.key: kv.value.string_value for kv in rm.resource.attributes}
            for req in self.metrics + self.traces
            for rm in getattr(req, "resource_metrics", None) or req.resource_spans
        ]

    def spans(self) -> list[Any]:
        return [s for req in self.traces for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]


@contextmanager
def serve_otlp() -> Iterator[Receiver]:
    """A real OTLP/gRPC metrics and traces receiver on a free loopback port (the `receiver` fixture)."""
    module("grpc", "runs an in-test OTLP/gRPC receiver")
    import grpc
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    port = server.add_insecure_port("127.0.0.1:0")
    got = Receiver(port)

    class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):  # type: ignore[misc]
        def Export(self, request: Any, context: Any) -> Any:
            got.metrics.append(request)
            return metrics_service_pb2.ExportMetricsServiceResponse()

    class Traces(trace_service_pb2_grpc.TraceServiceServicer):  # type: ignore[misc]
        def Export(self, request: Any, context: Any) -> Any:
            got.traces.append(request)
            return trace_service_pb2.ExportTraceServiceResponse()

    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
    server.start()
    try:
        yield got
    finally:
        server.stop(grace=None)


def example_env(app: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RL_"))}
    env.update(
        {
            "PYTHONPATH": str(app),
            "OTEL_METRIC_EXPORT_INTERVAL": "60000",  # only the final export at shutdown
            "RL_EXAMPLE_ITERATIONS": "3",
            "RL_EXAMPLE_SECONDS": "0.01",
        }
    )
    env.update(extra)
    return env
