from __future__ import annotations

import re

import pytest

from rlobs.rl import naming
from rlobs.rl.alerts import alerts
from rlobs.rl.alerts.lifecycle import RECORDED
from rlobs.rl.catalog import load_catalog
from rlobs.targets import parse_profile
from testing.helpers import profile

CATALOG = load_catalog()


def test_every_alert_kind_is_defined_once() -> None:
    found = alerts(profile("eks-jark").alerts, CATALOG, "otel-collector")
    assert [a.key for a in found] == [
        "stall",
        "reward_collapse",
        "loss_spike",
        "mfu_low",
        "loop_regression",
        "sync_latency",
        "target_down",
    ]
    assert "target_down" not in [a.key for a in alerts(profile("eks-jark").alerts, CATALOG, "gke-telemetry-api")]
    for a in found:
        assert re.fullmatch(r"RL[A-Z][A-Za-z]+", a.name)
        assert a.summary and a.description and len(a.runbook) > 80
        assert a.probes
        assert a.anchor == a.name.lower()


@pytest.mark.parametrize("pipeline", naming.PIPELINES)
def test_exprs_use_the_pipeline_names(pipeline: naming.Pipeline) -> None:
    for a in alerts(profile("gke-managed-otel").alerts, CATALOG, pipeline):
        for key in a.metrics:
            m = CATALOG.metric(key)
            part: naming.Part = "sum" if m.kind == "histogram" else ""
            # Prometheus pipelines read the lifecycle from recording rules (rlobs.rl.promrules).
            if key in {"run_state", "state_since", "progress_time", "step_interval"} and pipeline in RECORDED:
                continue
            assert naming.selector(m, pipeline, part) in a.expr
        run = naming.label_token("rl.run.id", pipeline)
        assert f"by ({run}" in a.expr


def test_thresholds_come_from_the_profile() -> None:
    p = profile("gke-managed-otel")  # sets mfuLow.threshold 0.25
    mfu = next(a for a in alerts(p.alerts, CATALOG, "gke-telemetry-api") if a.key == "mfu_low")
    assert '(max_over_time({"rl.train.mfu"}[150s]) < 0.25)' in mfu.expr
    loop = next(a for a in alerts(p.alerts, CATALOG, "otel-collector") if a.key == "loop_regression")
    assert "[360m] offset 30m" in loop.expr and " > 1.5)" in loop.expr
    assert {a.severity for a in alerts(p.alerts, CATALOG, "otel-collector") if a.key == "stall"} == {"critical"}


def test_disabled_alerts_yield_none() -> None:
    p = profile("eks-jark")
    off = p.model_copy(update={"alerts": p.alerts.model_copy(update={"enabled": False})})
    assert alerts(off.alerts, CATALOG, "otel-collector") == ()


def test_summary_placeholder() -> None:
    a = alerts(profile("eks-jark").alerts, CATALOG, "otel-collector")[0]
    assert "{run}" in a.summary
    assert "r1" in a.text(a.summary, "r1") and "{run}" not in a.text(a.summary, "r1")


def _with_alerts(extra: str) -> str:
    from testing.helpers import all_profiles

    return all_profiles()["eks-jark"] + "alerts:\n" + extra


def test_reward_collapse_for_must_be_shorter_than_baseline() -> None:
    from rlobs.errors import ProfileError

    with pytest.raises(ProfileError) as exc:
        parse_profile(_with_alerts("  rewardCollapse:\n    baseline: 10m\n    for: 15m\n"), "p.yaml")
    text = str(exc.value)
    assert "alerts.rewardCollapse.for" in text and "shorter than baseline" in text


def test_reward_collapse_drop_below_one() -> None:
    from rlobs.errors import ProfileError

    with pytest.raises(ProfileError, match=r"rewardCollapse\.drop"):
        parse_profile(_with_alerts("  rewardCollapse:\n    drop: 1.0\n"), "p.yaml")
