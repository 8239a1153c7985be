"""What the adapters see that the frameworks hide: TRL's per-step progress and filtered NaN losses, a NaN reward TRL
logs as None, verl's null for NaN, the run finishing after train(), and the framework's run name as the run id.
The generated app on the real OpenTelemetry SDK (in-memory reader), driven through transformers' own
CallbackHandler."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rlobs.rl.catalog import load_catalog
from testing.adapters import App, load_app
from testing.helpers import module

CATALOG = load_catalog()
STATE = CATALOG.metric("run_state").name
NONFINITE = CATALOG.metric("loss_nonfinite").name
DROPPED = CATALOG.metric("telemetry_dropped").name
REASON = CATALOG.attribute("drop_reason").name
STARTING, TRAINING, PAUSED = 2, 1, 3


def _gauge(app: App, key: str) -> float:
    return app.value(CATALOG.metric(key).name)


def _trl(app: App, tmp_path: Path, run_name: str | None = None, model: Any = None) -> Any:
    module("transformers", "drives the TRL callback through transformers' own CallbackHandler")
    from transformers import TrainerControl, TrainerState, TrainingArguments
    from transformers.trainer_callback import CallbackHandler

    callback = app.adapter.RlobsCallback()
    handler = CallbackHandler([callback], model, None, None, None)
    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to="none", logging_steps=10, run_name=run_name)
    state = TrainerState(global_step=0)
    control = TrainerControl()
    handler.on_train_begin(args, state, control)
    return SimpleNamespace(handler=handler, args=args, state=state, control=control, callback=callback)


def test_trl_reports_progress_at_every_optimizer_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """logging_steps=10: on_log comes every 10th step, yet every step counts and moves the progress clock."""
    app = load_app(tmp_path, "trl", monkeypatch)
    trl = _trl(app, tmp_path)
    assert _gauge(app, "run_state") == STARTING
    now = [1000.0]  # 30 s between steps, however often the module reads the clock
    monkeypatch.setattr(app.telemetry.time, "time", lambda: now[0])
    seen = []
    for step in range(1, 6):
        now[0] += 30
        trl.state.global_step = step
        trl.handler.on_step_end(trl.args, trl.state, trl.control)
        seen.append((app.total(CATALOG.metric("train_steps").name), _gauge(app, "progress_time")))
    assert [s for s, _ in seen] == [1, 2, 3, 4, 5]
    assert [t for _, t in seen] == sorted({t for _, t in seen})  # a new progress time at every step
    assert _gauge(app, "run_state") == TRAINING
    assert _gauge(app, "step_interval") == 30.0
    # The log at step 10 counts what on_step_end has not: nothing twice.
    trl.state.global_step = 10
    trl.handler.on_step_end(trl.args, trl.state, trl.control)
    trl.handler.on_log(trl.args, trl.state, trl.control, logs={"loss": 0.5, "grad_norm": 0.3, "reward": 0.2})
    assert app.total(CATALOG.metric("train_steps").name) == 10
    # train() returned: saving and pushing are a pause until exit, not a stall.
    trl.handler.on_train_end(trl.args, trl.state, trl.control)
    assert _gauge(app, "run_state") == PAUSED


@pytest.mark.slow  # needs torch (`make install-trl`), which the lowest-versions run does not install
def test_trl_counts_a_nan_loss_behind_the_default_nan_filter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """transformers' logging_nan_inf_filter logs a finite loss for a NaN step; the parameters the NaN step left
    behind are counted at that step, and a NaN grad_norm at the log when nothing was counted before it."""
    module("torch", "a real model's parameters for the per-step check", "make install-trl")
    import torch

    app = load_app(tmp_path, "trl", monkeypatch)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    assert _nan_filter_is_the_default()
    trl = _trl(app, tmp_path, model=model)
    trl.state.global_step = 1
    trl.handler.on_step_end(trl.args, trl.state, trl.control)
    assert app.total(NONFINITE) == 0
    with torch.no_grad():  # what an optimizer step with NaN gradients does to every parameter the loss reaches
        for p in model.parameters():
            p.mul_(math.nan)
    trl.state.global_step = 2
    trl.handler.on_step_end(trl.args, trl.state, trl.control)
    assert app.total(NONFINITE) == 1
    # The log of that window: a filtered (finite) loss and a NaN grad_norm, already counted: not twice.
    trl.handler.on_log(trl.args, trl.state, trl.control, logs={"loss": 0.7, "grad_norm": math.nan})
    assert app.total(NONFINITE) == 1
    # Without a parameter check (a sharded model), the logged grad_norm still shows it.
    trl.callback.probe = None
    trl.handler.on_log(trl.args, trl.state, trl.control, logs={"loss": 0.7, "grad_norm": math.nan})
    assert app.total(NONFINITE) == 2
    trl.handler.on_log(trl.args, trl.state, trl.control, logs={"loss": 0.7, "grad_norm": 0.4})
    assert app.total(NONFINITE) == 2


def _nan_filter_is_the_default() -> bool:
    """The filter the test is about is transformers' default."""
    from transformers import TrainingArguments

    return bool(TrainingArguments(output_dir="unused", report_to="none").logging_nan_inf_filter)


def test_trl_reward_logged_as_none_is_a_non_finite_reward(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GRPOTrainer.log averages each metric over the window without NaNs and logs None when none is left."""
    app = load_app(tmp_path, "trl", monkeypatch)
    trl = _trl(app, tmp_path)
    trl.handler.on_log(trl.args, trl.state, trl.control, logs={"loss": 0.1, "reward": 0.5})
    trl.handler.on_log(trl.args, trl.state, trl.control, logs={"loss": 0.1, "reward": None})
    assert app.total(DROPPED, **{REASON: "non_finite"}) == 1
    assert app.value(CATALOG.metric("reward_mean").name) == 0.5  # the gauge keeps the last real reward


def test_trl_run_name_is_the_run_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RL_RUN_ID", raising=False)
    monkeypatch.setenv("RLOBS_OWNER_UID", "job-uid")
    app = load_app(tmp_path, "trl", monkeypatch)
    _trl(app, tmp_path, run_name="grpo-qwen-lr3e-6")
    (point,) = app.points()[STATE]
    assert point.attributes[CATALOG.attribute("run_id").name] == "grpo-qwen-lr3e-6"


def _verl_line(step: int, loss: float | None) -> str:
    """verl's FileLogger: orjson.dumps({"step", "data"}); orjson writes NaN as null."""
    return json.dumps({"step": step, "data": {"training/global_step": step, "actor/pg_loss": loss}}) + "\n"


def test_verl_null_is_a_non_finite_loss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "verl", monkeypatch)
    log = tmp_path / "verl.jsonl"
    log.write_text(_verl_line(1, -0.02) + _verl_line(2, None) + _verl_line(3, None), encoding="utf-8")
    tailer = app.adapter.JsonlTailer(str(log))
    assert tailer.poll() == 3
    assert app.total(NONFINITE) == 2
    assert app.total(DROPPED) == 0  # not a dropped value: a non-finite loss
    assert app.value(CATALOG.metric("train_loss").name) == pytest.approx(-0.02)


def test_adapters_never_raise_from_the_lifecycle_hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "trl", monkeypatch)
    callback = app.adapter.RlobsCallback()
    callback.on_step_end(None, None, None)
    callback.on_step_end(None, SimpleNamespace(global_step="x", is_world_process_zero=True), None)
    callback.on_train_begin(None, SimpleNamespace(global_step=None), None, model=object())
    callback.probe = SimpleNamespace(item=lambda: 1 / 0)
    callback.on_step_end(None, SimpleNamespace(global_step=3, is_world_process_zero=True), None)
    assert callback.probe is None  # a check that fails once is not tried again
    callback.on_train_end(None, None, None)
