"""Files every bundle carries: the app's OpenTelemetry module, its requirements, an example, runbook, signal docs."""

from __future__ import annotations

from typing import Any

from pydantic.alias_generators import to_camel

from rlobs.bundle.filters import number
from rlobs.bundle.spec import DataFile, FileSpec, TemplateFile
from rlobs.profile.fields import duration_seconds
from rlobs.profile.model import ProfileBase
from rlobs.rl import adapters, naming, promrules, slos, workloads
from rlobs.rl.adapters import ONE_LINE, SIGNALS_DOC, adapter_env, adapter_files, mapping_rows
from rlobs.rl.alerts import RUNBOOK_PATH, thresholds
from rlobs.rl.catalog import Catalog, Kind, load_catalog
from rlobs.rl.facts import RlFacts
from rlobs.rl.identity import identity_rows, rl_env, run_identity
from rlobs.rl.naming import Part, Pipeline
from rlobs.rl.panels import goodput
from rlobs.rl.tracker import tracker_env
from rlobs.rl.volume import Count, as_data, planned

# promtool rule unit tests and the bare rule groups they load (`promtool test rules tests/rl-alerts.test.yaml`).
RULES_FILE = f"tests/{promrules.RULE_FILE}"
RULE_TESTS_FILE = "tests/rl-alerts.test.yaml"

# Pinned together (opentelemetry-python releases API, SDK and exporters in lock-step; the Prometheus exporter is on
# the 0.x beta line of the same release). protobuf: the OTLP exporters need >=5 since 1.28.0 and 1.45 allows up to
# 7.x (opentelemetry-proto's own bounds); a range, not a pin, so the RL framework's own protobuf pin can coexist.
REQUIREMENTS = (
    "opentelemetry-api==1.45.2",
    "opentelemetry-sdk==1.45.2",
    "opentelemetry-exporter-otlp-proto-grpc==1.45.2",
    "opentelemetry-exporter-prometheus==0.66b2",
    "protobuf>=5,<8",
)

# The series a metric of each kind is stored as: a histogram's bucket, sum and count; one series otherwise.
_PARTS: dict[Kind, tuple[Part, ...]] = {"histogram": ("bucket", "sum", "count"), "counter": ("",), "gauge": ("",)}


def _telemetry_context(profile: ProfileBase, catalog: Catalog) -> dict[str, Any]:
    spans = [
        {
            "key": s.key,
            "name": s.name,
            "metric": s.metric,
            "attributes": [(k, catalog.attribute(k).name) for k in s.attributes],
        }
        for s in catalog.spans
    ]
    histos = [m for m in catalog.metrics if m.kind == "histogram"]
    bucket_sets = sorted({m.buckets for m in histos})
    identity, full = {a.name for a in catalog.identity}, load_catalog()
    return {
        # workload.dropAttributes: instrument -> the attributes besides the identity it keeps (an SDK View each)
        "keep": [
            (m.key, [a for a in m.attributes if a not in identity])
            for m in catalog.metrics
            if m.attributes != full.metric(m.key).attributes
        ],
        "bucket_sets": [[number(b) for b in bounds] for bounds in bucket_sets],
        "buckets": [(m.key, bucket_sets.index(m.buckets)) for m in histos],
        "profile": profile,
        "catalog": catalog,
        "identity": identity_rows(profile, catalog),
        "spans": spans,
        "drop_reason": catalog.attribute("drop_reason").name,
        "export_interval_ms": profile.workload.export_interval_ms,
        # The stall limits of the alerts (seconds), so time past them is accounted `stalled` as the alert sees it.
        "stall": {
            "window": duration_seconds(profile.alerts.stall.window),
            "factor": number(profile.alerts.stall.factor),
            "startup": duration_seconds(profile.alerts.stall.startup),
            "pause": duration_seconds(profile.alerts.stall.pause_limit),
        },
    }


_COLLECTOR_NAMES = "underscores names and adds unit suffixes, `_total` on counters and `_ratio` on unit-1 gauges."
_PIPELINE_NOTES: dict[Pipeline, str] = {
    "gke-telemetry-api": "Managed OpenTelemetry keeps the dots: PromQL quotes names and labels, "
    'e.g. `{"name", "label"="value"}`; Cloud Monitoring metric types are '
    "`prometheus.googleapis.com/<name>/<histogram|counter|gauge>`.",
    "gke-gmp-collector": f"The googlemanagedprometheus exporter {_COLLECTOR_NAMES}",
    "otel-collector": f"The collector's Prometheus translation {_COLLECTOR_NAMES}",
    "python-prometheus": "The OpenTelemetry Python Prometheus exporter underscores names and adds unit suffixes and "
    "`_total` on counters, but no `_ratio` (it maps unit `1` to nothing).",
}


def _docs_context(facts: RlFacts) -> dict[str, Any]:
    profile, catalog, pipeline = facts.profile, facts.catalog, facts.pipeline
    buckets = sorted({b for m in catalog.metrics if m.kind == "histogram" for b in m.buckets})
    run_label = naming.label(catalog.attribute("run_id").name, pipeline)
    framework = catalog.framework(profile.workload.run.system)
    return {
        "name": profile.metadata.name,
        "pipeline": pipeline,
        "pipeline_note": _PIPELINE_NOTES[pipeline],
        "metrics": [
            {
                "name": m.name,
                "kind": m.kind,
                "unit": m.unit,
                "signal": m.signal,
                "series": [naming.series(m, pipeline, p) for p in _PARTS[m.kind]],
                "description": m.description,
            }
            for m in catalog.metrics
        ],
        "identity": [naming.label(a.name, pipeline) for a in catalog.identity],
        "buckets": ", ".join(number(b) for b in buckets),
        "attributes": [
            {
                "name": a.name,
                "label": naming.label(a.name, pipeline) if a.scope != "span" else None,
                "scope": a.scope,
                "description": a.description,
            }
            for a in catalog.attributes
        ],
        "spans": [
            {
                "name": s.name,
                "metric": catalog.metric(s.metric).name,
                "attributes": [catalog.attribute(k).name for k in s.attributes],
                "description": s.description,
            }
            for s in catalog.spans
        ],
        "identity_rows": identity_rows(profile, catalog),
        "framework": framework,
        "framework_hook": ONE_LINE.get(framework.name, "") if framework else "",
        "mapping": mapping_rows(framework, catalog) if framework else [],
        "alerts": [
            {
                "name": a.name,
                "severity": a.severity,
                "for_": a.for_,
                "profile_key": to_camel(a.key),
                "description": a.text(a.description, f"`<{run_label}>`"),
                "runbook": a.runbook,
                "expr": a.expr,
                "thresholds": thresholds(profile.alerts, a.key),
            }
            for a in facts.alerts
        ],
        "slo_alerts": slos.runbook_sections(facts),
    }


def container_env(profile: ProfileBase, catalog: Catalog, otel: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The RL container's env, POD_NAME first: a $(VAR) expands only the variables defined above it."""
    pod_name = {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    return [pod_name, *otel, *rl_env(profile, catalog), *adapter_env(profile, catalog), *tracker_env(profile)]


def readme_context(facts: RlFacts, count: Count, env: list[dict[str, Any]]) -> dict[str, Any]:
    profile, catalog = facts.profile, facts.catalog
    return {
        "adapter": adapters.readme(profile, catalog),
        "alert_coverage": adapters.alert_coverage(facts),
        "run_identity": run_identity(profile, catalog),
        "goodput": goodput(catalog),
        "plan": as_data(planned(profile, catalog, count)),  # rlobs plan's figures
        "ray_kinds": sorted(workloads.RAY_KINDS),
        "routes": workloads.routes_readme(profile.workload, env),
    }


def app_files(facts: RlFacts) -> tuple[FileSpec, ...]:
    docs = _docs_context(facts)
    files: list[FileSpec] = [
        TemplateFile(
            "app/rlobs_telemetry.py",
            "py",
            "common/rlobs_telemetry.py.j2",
            "The OpenTelemetry module for the RL app: every catalog metric and span, set up from `OTEL_*`.",
            _telemetry_context(facts.profile, facts.catalog),
        ),
        TemplateFile(
            "app/example_rl_loop.py",
            "py",
            "common/example_rl_loop.py.j2",
            "A fake RL loop that uses the module; runs on a laptop too (see its docstring).",
            {"profile": facts.profile},
        ),
        TemplateFile(
            "app/requirements.txt",
            "text",
            "common/requirements.txt.j2",
            "The module's pinned OpenTelemetry packages.",
            {"requirements": REQUIREMENTS},
        ),
        TemplateFile(
            RUNBOOK_PATH, "md", "common/runbook.md.j2", "What each RL alert means and what to check first.", docs
        ),
        TemplateFile(
            SIGNALS_DOC,
            "md",
            "common/signals.md.j2",
            "The RL signals and their series names on this bundle's metric pipeline.",
            docs,
        ),
    ]
    files += adapter_files(facts.profile, facts.catalog)
    groups = promrules.rule_groups(facts)
    if groups and not naming.dotted(facts.pipeline):
        # promtool reads bare rule groups, not the PrometheusRule wrapper; dotted (UTF-8) names need promtool >= 3.
        files += [
            DataFile(
                RULES_FILE,
                "yaml",
                {"groups": groups},
                "The RL alert rules as a plain rules file, for promtool.",
                header="The RL alerting rules as promtool reads them (same as the PrometheusRule's spec).",
            ),
            DataFile(
                RULE_TESTS_FILE,
                "yaml",
                promrules.rule_tests(facts),
                "promtool unit tests of the RL alerts: `promtool test rules tests/rl-alerts.test.yaml`.",
                header="Unit tests of the RL alerts: promtool test rules tests/rl-alerts.test.yaml",
            ),
        ]
    return tuple(files)
