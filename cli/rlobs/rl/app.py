"""Files every bundle carries: the app's OpenTelemetry module, its requirements, an example, runbook, signal docs."""

from __future__ import annotations

from typing import Any

from rlobs.bundle.spec import FileSpec
from rlobs.profile.fields import duration_seconds
from rlobs.profile.model import Profile
from rlobs.rl import naming, promrules
from rlobs.rl.alerts import alerts
from rlobs.rl.catalog import Catalog, Metric
from rlobs.rl.naming import Pipeline

APP_DIR = "app"
TELEMETRY_FILE = f"{APP_DIR}/rlobs_telemetry.py"
REQUIREMENTS_FILE = f"{APP_DIR}/requirements.txt"
EXAMPLE_FILE = f"{APP_DIR}/example_rl_loop.py"
RUNBOOK_FILE = "docs/runbook.md"
SIGNALS_FILE = "docs/signals.md"
# promtool rule unit tests and the bare rule groups they load (`promtool test rules tests/rl-alerts.test.yaml`).
RULES_FILE = "tests/rl-alerts.rules.yaml"
RULE_TESTS_FILE = "tests/rl-alerts.test.yaml"

# What each file app_files() renders is, for the bundles' README file tables.
DESCRIPTIONS = {
    TELEMETRY_FILE: "The OpenTelemetry module for the RL app: every catalog metric and span, set up from `OTEL_*`.",
    EXAMPLE_FILE: "A fake RL loop that uses the module; runs on a laptop too (see its docstring).",
    REQUIREMENTS_FILE: "The module's pinned OpenTelemetry packages.",
    RUNBOOK_FILE: "What each RL alert means and what to check first.",
    SIGNALS_FILE: "The RL signals and their series names on this bundle's metric pipeline.",
    RULES_FILE: "The RL alert rules as a plain rules file, for promtool.",
    RULE_TESTS_FILE: "promtool unit tests of the RL alerts: `promtool test rules tests/rl-alerts.test.yaml`.",
}

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


def identity_env(key: str) -> str:
    """The environment variable that overrides an identity attribute in the app (run_id -> RL_RUN_ID)."""
    return "RL_" + key.upper()


def identity_values(profile: Profile, catalog: Catalog) -> dict[str, str | None]:
    """Identity attribute name -> the profile's value (None where the profile leaves it unset)."""
    run = profile.workload.run
    by_key: dict[str, str | None] = {
        "system": run.system,
        "system_version": run.system_version,
        "run_id": profile.workload.run_id,
        "algorithm": run.algorithm,
        "environment": run.environment,
        "model": run.model,
    }
    return {a.name: by_key.get(a.key) for a in catalog.identity}


def rl_env(profile: Profile, catalog: Catalog) -> list[dict[str, str]]:
    """The RL container's RL_* env: the run identity the app module reads, for the attributes the profile sets."""
    values = identity_values(profile, catalog)
    return [
        {"name": identity_env(a.key), "value": value} for a in catalog.identity if (value := values[a.name]) is not None
    ]


def _identity_rows(profile: Profile, catalog: Catalog) -> list[dict[str, Any]]:
    values = identity_values(profile, catalog)
    return [{"name": a.name, "env": identity_env(a.key), "default": values[a.name]} for a in catalog.identity]


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def _series(metric: Metric, pipeline: Pipeline) -> list[str]:
    if metric.kind == "histogram":
        return [naming.series(metric, pipeline, p) for p in ("bucket", "sum", "count")]
    return [naming.series(metric, pipeline)]


def _telemetry_context(profile: Profile, catalog: Catalog) -> dict[str, Any]:
    spans = [
        {
            "key": s.key,
            "name": s.name,
            "metric": s.metric,
            "attributes": [(k, catalog.attribute(k).name) for k in s.attributes],
        }
        for s in catalog.spans
    ]
    rows = _identity_rows(profile, catalog)
    histos = [m for m in catalog.metrics if m.kind == "histogram"]
    bucket_sets = sorted({m.buckets for m in histos})
    return {
        "bucket_sets": [[_number(b) for b in bounds] for bounds in bucket_sets],
        "buckets": [(m.key, bucket_sets.index(m.buckets)) for m in histos],
        "profile": profile,
        "catalog": catalog,
        "identity": rows,
        "identity_envs": [r["env"] for r in rows],
        "spans": spans,
        "export_interval_ms": duration_seconds(profile.workload.export_interval) * 1000,
    }


_PIPELINE_NOTES: dict[Pipeline, str] = {
    "gke-telemetry-api": "Managed OpenTelemetry keeps the dots: PromQL quotes names and labels, "
    'e.g. `{"name", "label"="value"}`; Cloud Monitoring metric types are '
    "`prometheus.googleapis.com/<name>/<histogram|counter|gauge>`.",
    "gke-gmp-collector": "The googlemanagedprometheus exporter underscores names and adds unit suffixes, "
    "`_total` on counters and `_ratio` on unit-1 gauges.",
    "otel-collector": "The collector's Prometheus translation underscores names and adds unit suffixes, "
    "`_total` on counters and `_ratio` on unit-1 gauges.",
    "python-prometheus": "The OpenTelemetry Python Prometheus exporter underscores names and adds unit suffixes and "
    "`_total` on counters, but no `_ratio` (it maps unit `1` to nothing).",
}


def _docs_context(profile: Profile, catalog: Catalog, pipeline: Pipeline) -> dict[str, Any]:
    histos = [m for m in catalog.metrics if m.kind == "histogram"]
    buckets = sorted({b for m in histos for b in m.buckets})
    found = alerts(profile, catalog, pipeline)
    run_label = naming.label(catalog.attribute("run_id").name, pipeline)
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
                "series": _series(m, pipeline),
                "description": m.description,
            }
            for m in catalog.metrics
        ],
        "identity": [naming.label(a.name, pipeline) for a in catalog.identity],
        "buckets": ", ".join(_number(b) for b in buckets),
        "attributes": [
            {
                "name": a.name,
                "label": naming.label(a.name, pipeline) if a.scope == "identity" else None,
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
        "identity_rows": _identity_rows(profile, catalog),
        "alerts": [
            {
                "name": a.name,
                "severity": a.severity,
                "for_": a.for_,
                "profile_key": _camel(a.key),
                "description": a.text(a.description, f"`<{run_label}>`"),
                "runbook": a.runbook,
                "expr": a.expr,
            }
            for a in found
        ],
    }


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w.title() for w in rest)


def app_files(profile: Profile, catalog: Catalog, pipeline: Pipeline) -> tuple[FileSpec, ...]:
    """The app module, its requirements and example, the runbook and signal docs, and promtool rule tests."""
    telemetry = _telemetry_context(profile, catalog)
    docs = _docs_context(profile, catalog, pipeline)
    files = [
        FileSpec(TELEMETRY_FILE, "py", template="common/rlobs_telemetry.py.j2", context=telemetry),
        FileSpec(EXAMPLE_FILE, "py", template="common/example_rl_loop.py.j2", context={"profile": profile}),
        FileSpec(
            REQUIREMENTS_FILE, "text", template="common/requirements.txt.j2", context={"requirements": REQUIREMENTS}
        ),
        FileSpec(RUNBOOK_FILE, "md", template="common/runbook.md.j2", context=docs),
        FileSpec(SIGNALS_FILE, "md", template="common/signals.md.j2", context=docs),
    ]
    groups = promrules.rule_groups(profile, catalog, pipeline)
    if groups and not naming.dotted(pipeline):
        # promtool reads bare rule groups, not the PrometheusRule wrapper; dotted (UTF-8) names need promtool >= 3.
        files.append(
            FileSpec(
                RULES_FILE,
                "yaml",
                data={"groups": groups},
                header="The RL alerting rules as promtool reads them (same as the PrometheusRule's spec).",
            )
        )
        tests = promrules.rule_tests(profile, catalog, pipeline, rule_file=RULES_FILE.rsplit("/", 1)[1])
        files.append(
            FileSpec(
                RULE_TESTS_FILE,
                "yaml",
                data=tests,
                header="Unit tests of the RL alerts: promtool test rules tests/rl-alerts.test.yaml",
            )
        )
    return tuple(files)
