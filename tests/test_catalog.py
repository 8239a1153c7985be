from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rlobs
from rlobs.main import app
from rlobs.rl import naming
from rlobs.rl.catalog import load_catalog
from testing.bundles import build, pipeline_of
from testing.helpers import all_profiles, profile

CATALOG = load_catalog()

HISTOGRAMS = ["rl.loop.duration", "rl.sample.duration", "rl.reward.duration", "rl.train.duration", "rl.sync.duration"]
HISTOGRAMS += ["rl.step.duration", "rl.train.step.duration"]
COUNTERS = ["rl.sample.samples", "rl.sample.episodes", "rl.train.steps", "rl.train.tokens"]
COUNTERS += ["rl.train.loss.nonfinite", "rl.telemetry.dropped", "rl.run.time"]
GAUGES = [
    "rl.tokens.rate",
    "rl.tokens.rate_per_gpu",
    "rl.samples.rate",
    "rl.samples.rate_per_gpu",
    "rl.environment.reward.mean",
    "rl.environment.episode.length.mean",
    "rl.train.loss",
    "rl.train.mfu",
    "rl.run.state",
    "rl.run.state.since",
    "rl.progress.time",
    "rl.progress.interval",
    "rl.run.restarts",
    "rl.run.gpus",
]
IDENTITY = ["rl.system", "rl.system.version", "rl.run.id", "rl.algorithm", "rl.environment.name", "rl.model.name"]
SPAN_ONLY = [
    "rl.loop",
    "rl.loop.iteration",
    "rl.tracker.run.id",
    "rl.sample.episodes",
    "rl.sample.steps",
    "rl.sample.batch_size",
    "rl.reward.batch_size",
    "rl.reward.sandbox",
    "rl.train.steps",
    "rl.train.batch_size",
    "rl.train.tokens",
    "rl.sync.bytes",
    "rl.sync.source",
    "rl.sync.destination",
]


def test_every_specified_metric_with_its_kind() -> None:
    kinds = {m.name: m.kind for m in CATALOG.metrics}
    expected = {n: "histogram" for n in HISTOGRAMS} | {n: "counter" for n in COUNTERS} | {n: "gauge" for n in GAUGES}
    assert kinds == expected


def test_units_signals_and_buckets() -> None:
    for m in CATALOG.metrics:
        assert m.description and m.signal in {"latency", "traffic", "errors", "saturation"}
        if m.kind == "histogram":
            assert m.unit == "ms" and m.signal == "latency"
            assert list(m.buckets) == sorted(set(m.buckets))
            assert m.buckets[0] <= 100 and m.buckets[-1] >= 3_600_000  # loops last seconds to hours
        else:
            assert m.buckets == ()
    # unit 1 only for a true ratio: collectors add _ratio to unit-1 gauges.
    assert [m.name for m in CATALOG.metrics if m.unit == "1"] == ["rl.train.mfu"]


def test_attributes_and_scopes() -> None:
    scopes = {a.name: a.scope for a in CATALOG.attributes}
    metric_only = {"rl.telemetry.reason", "rl.time.bucket"}
    assert scopes == {n: "identity" for n in IDENTITY} | {n: "span" for n in SPAN_ONLY} | dict.fromkeys(
        metric_only, "metric"
    )
    for m in CATALOG.metrics:
        # identity on every point; high-cardinality attributes (the loop iteration) never on metrics; a metric's
        # own attributes only from the fixed-value set.
        assert m.attributes[: len(IDENTITY)] == tuple(IDENTITY)
        assert set(m.attributes[len(IDENTITY) :]) <= metric_only


def test_keys_are_unique_identifiers() -> None:
    for items in (CATALOG.metrics, CATALOG.attributes, CATALOG.spans):
        keys = [i.key for i in items]
        assert len(keys) == len(set(keys))
        assert all(k.isidentifier() for k in keys)


def test_spans_reference_the_catalog() -> None:
    assert [s.key for s in CATALOG.spans] == ["loop", "sample", "reward", "train", "sync"]
    for s in CATALOG.spans:
        assert CATALOG.metric(s.metric).kind == "histogram"
        assert all(CATALOG.attribute(k).scope == "span" for k in s.attributes)


def test_lookup_by_key_or_name() -> None:
    assert CATALOG.metric("loop_duration") is CATALOG.metric("rl.loop.duration")
    assert CATALOG.attribute("run_id").name == "rl.run.id"
    assert [a.key for a in CATALOG.identity][:3] == ["system", "system_version", "run_id"]


def test_no_metric_name_is_written_outside_the_catalog() -> None:
    """Every query is built through naming from the catalog: no module or template spells a metric name."""
    package = Path(rlobs.__file__).parent
    names = [m.name for m in CATALOG.metrics]
    offenders = []
    for path in sorted(package.rglob("*")):
        if not path.is_file() or path.suffix not in {".py", ".j2", ".yaml", ".json", ".md"}:
            continue
        if path.relative_to(package).as_posix() == "data/signals.yaml":
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(package)}: {n}" for n in names if n in text]
    assert offenders == []


def test_signals_command_json() -> None:
    result = CliRunner().invoke(app, ["signals", "--format", "json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert [m["name"] for m in data["metrics"]] == [m.name for m in CATALOG.metrics]
    mfu = next(m for m in data["metrics"] if m["key"] == "train_mfu")
    assert mfu["series"] == {
        "gke-telemetry-api": "rl.train.mfu",
        "gke-gmp-collector": "rl_train_mfu_ratio",
        "otel-collector": "rl_train_mfu_ratio",
        "python-prometheus": "rl_train_mfu",
    }
    assert [s["name"] for s in data["spans"]] == ["rl.loop", "rl.sample", "rl.reward", "rl.train", "rl.sync"]


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_signals_command_text(fmt: str) -> None:
    result = CliRunner().invoke(app, ["signals", "--format", fmt])
    assert result.exit_code == 0
    out = result.stdout
    assert "rl_loop_duration_milliseconds_bucket" in out and "rl.loop.iteration" in out
    assert "14400000" in out


def test_signals_report_is_data() -> None:
    from rlobs import commands

    report = commands.signals()
    metrics = report.tables[0]
    assert metrics.headers[0] == "metric" and [r[0] for r in metrics.rows] == [m.name for m in CATALOG.metrics]
    assert report.data["metrics"][0]["name"] == CATALOG.metrics[0].name


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(all_profiles()))
def test_no_rendered_query_reads_a_droppable_attribute(name: str) -> None:
    # workload.dropAttributes accepts these: a dashboard, rule, alert policy or SLO reading one would go blank.
    droppable = [a for a in CATALOG.attributes if a.droppable]
    assert droppable and all(a.scope == "metric" for a in droppable)
    assert not any(m.kind == "histogram" and set(m.attributes) & {a.name for a in droppable} for m in CATALOG.metrics)
    p = profile(name)
    pipeline = pipeline_of(p)
    queries = [r for r in build(p) if not r.path.startswith(("app/", "docs/")) and r.path != "README.md"]
    assert any("rules" in r.path or "dashboard" in r.path for r in queries)
    for a in droppable:
        for token in {a.name, naming.label(a.name, pipeline)}:
            assert not [r.path for r in queries if token in r.text], token
