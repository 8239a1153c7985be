from __future__ import annotations

import pytest

from rlobs.rl import naming
from rlobs.rl.catalog import load_catalog
from testing.bundles import pipeline_of
from testing.helpers import eks_profile, gke_profile, profile

CATALOG = load_catalog()

# key -> (gke-telemetry-api, otel-collector / gke-gmp-collector, python-prometheus), part "" or bucket.
EXPECTED = {
    "loop_duration": ("rl.loop.duration_bucket", "rl_loop_duration_milliseconds_bucket", None),
    "step_duration": ("rl.step.duration_bucket", "rl_step_duration_milliseconds_bucket", None),
    "sample_samples": ("rl.sample.samples", "rl_sample_samples_total", None),
    "train_tokens": ("rl.train.tokens", "rl_train_tokens_total", None),
    "train_steps": ("rl.train.steps", "rl_train_steps_total", None),
    "tokens_rate": ("rl.tokens.rate", "rl_tokens_rate_per_second", None),
    "samples_rate_per_gpu": ("rl.samples.rate_per_gpu", "rl_samples_rate_per_gpu_per_second", None),
    "reward_mean": ("rl.environment.reward.mean", "rl_environment_reward_mean", None),
    "episode_length_mean": ("rl.environment.episode.length.mean", "rl_environment_episode_length_mean", None),
    "train_loss": ("rl.train.loss", "rl_train_loss", None),
    # unit 1: collectors add _ratio, the Python exporter maps "1" to "" (confirmed by test_e2e_prometheus).
    "train_mfu": ("rl.train.mfu", "rl_train_mfu_ratio", "rl_train_mfu"),
    "loss_nonfinite": ("rl.train.loss.nonfinite", "rl_train_loss_nonfinite_total", None),
    "run_state": ("rl.run.state", "rl_run_state", None),
    "train_step_duration": ("rl.train.step.duration_bucket", "rl_train_step_duration_milliseconds_bucket", None),
}


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_series_per_pipeline(key: str) -> None:
    metric = CATALOG.metric(key)
    dotted, collector, python = EXPECTED[key]
    part: naming.Part = "bucket" if metric.kind == "histogram" else ""
    assert naming.series(metric, "gke-telemetry-api", part) == dotted
    assert naming.series(metric, "otel-collector", part) == collector
    assert naming.series(metric, "gke-gmp-collector", part) == collector
    assert naming.series(metric, "python-prometheus", part) == (python or collector)


def test_histogram_parts() -> None:
    m = CATALOG.metric("sync_duration")
    assert naming.series(m, "otel-collector", "sum") == "rl_sync_duration_milliseconds_sum"
    assert naming.series(m, "gke-telemetry-api", "count") == "rl.sync.duration_count"
    with pytest.raises(ValueError, match="expected a part"):
        naming.series(m, "otel-collector")
    with pytest.raises(ValueError, match="expected no part"):
        naming.series(CATALOG.metric("train_loss"), "otel-collector", "bucket")


def test_labels() -> None:
    assert naming.label("rl.run.id", "gke-telemetry-api") == "rl.run.id"
    for p in ("otel-collector", "gke-gmp-collector", "python-prometheus"):
        assert naming.label("rl.run.id", p) == "rl_run_id"
        assert naming.label("rl.environment.name", p) == "rl_environment_name"


def test_selector_quotes_dotted_names() -> None:
    m = CATALOG.metric("loop_duration")
    got = naming.selector(m, "gke-telemetry-api", "bucket", {"rl.run.id": "r1"})
    assert got == '{"rl.loop.duration_bucket", "rl.run.id"="r1"}'
    got = naming.selector(m, "otel-collector", "bucket", {"rl.run.id": "r1", "rl.algorithm": "grpo"})
    assert got == 'rl_loop_duration_milliseconds_bucket{rl_algorithm="grpo", rl_run_id="r1"}'
    assert naming.selector(CATALOG.metric("train_loss"), "python-prometheus") == "rl_train_loss"


def test_selector_escapes_values_and_takes_regex_and_raw() -> None:
    m = CATALOG.metric("train_loss")
    got = naming.selector(m, "otel-collector", matchers={"rl.run.id": 'a"b\\c'}, regex={"rl.model.name": "$model"})
    assert got == 'rl_train_loss{rl_run_id="a\\"b\\\\c", rl_model_name=~"$model"}'
    got = naming.selector(m, "gke-telemetry-api", raw=["${RunId}"])
    assert got == '{"rl.train.loss", ${RunId}}'


def test_label_token() -> None:
    assert naming.label_token("rl.run.id", "gke-telemetry-api") == '"rl.run.id"'
    assert naming.label_token("rl.run.id", "otel-collector") == "rl_run_id"


def test_monitoring_type() -> None:
    m = CATALOG.metric("loop_duration")
    assert naming.monitoring_type(m, "gke-telemetry-api") == "prometheus.googleapis.com/rl.loop.duration/histogram"
    c = CATALOG.metric("sample_samples")
    assert naming.monitoring_type(c, "gke-gmp-collector") == "prometheus.googleapis.com/rl_sample_samples_total/counter"


def test_every_metric_has_a_prometheus_valid_name_on_every_pipeline() -> None:
    import re

    valid = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
    for m in CATALOG.metrics:
        part: naming.Part = "bucket" if m.kind == "histogram" else ""
        for p in naming.PIPELINES:
            name = naming.series(m, p, part)
            assert naming.dotted(p) or valid.fullmatch(name), (p, name)


@pytest.mark.parametrize(
    ("name", "pipeline"),
    [("gke-managed-otel", "gke-telemetry-api"), ("eks-jark", "otel-collector")],
)
def test_pipeline_for_blueprints(name: str, pipeline: str) -> None:
    assert pipeline_of(profile(name)) == pipeline


def test_pipeline_for_variants() -> None:
    p = gke_profile("gke-managed-otel")
    gmp = p.model_copy(update={"gke": p.gke.model_copy(update={"naming": "gmp-collector"})})
    assert pipeline_of(gmp) == "gke-gmp-collector"
    e = eks_profile("eks-jark")
    exp = e.model_copy(update={"eks": e.eks.model_copy(update={"metrics_pipeline": "prometheus-exporter"})})
    assert pipeline_of(exp) == "python-prometheus"
