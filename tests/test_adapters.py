"""The framework adapters (app/rlobs_adapter.py) fed payloads in each framework's exact format, on the real SDK."""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rlobs.rl.catalog import load_catalog, parse_catalog, parse_frameworks
from testing.adapters import App, load_app, render_app, verl_site, with_system
from testing.helpers import module, tool

CATALOG = load_catalog()
IDENTITY = {a.name for a in CATALOG.identity}
DROP = CATALOG.attribute("drop_reason").name
BUCKET = CATALOG.attribute("time_bucket").name


def _verl_record(step: int, **extra: Any) -> bytes:
    """One line as verl's FileLogger writes it (verl-project/verl@1dda039 verl/utils/tracking.py:433-435:
    orjson.dumps({"step": step, "data": data}) + newline), keys from ray_trainer.py:1762-1802 and metric_utils.py."""
    data: dict[str, Any] = {
        "training/global_step": step,
        "training/epoch": 0,
        "timing_s/gen": 12.5,
        "timing_s/reward": 1.25,
        "timing_s/old_log_prob": 3.0,
        "timing_s/update_actor": 20.0,
        "timing_s/update_weights": 2.0,
        "timing_s/step": 40.0,
        "timing_per_token_ms/gen": 0.01,
        "perf/total_num_tokens": 80000,
        "perf/time_per_step": 40.0,
        "perf/throughput": 250.0,  # 80000 / (40 s * 8 GPUs)
        "perf/mfu/actor": 0.31,
        "critic/score/mean": 0.5 + step / 100,
        "critic/rewards/mean": 0.4,
        "response_length/mean": 812.0,
        "actor/pg_loss": -0.02,
        "actor/entropy": 1.1,
        **extra,
    }
    return json.dumps({"step": step, "data": data}, separators=(",", ":")).encode() + b"\n"


def _no_unbounded_attributes(app: App) -> None:
    for name, points in app.points().items():
        for p in points:
            keys = set(dict(p.attributes))
            assert keys <= IDENTITY | {DROP, BUCKET}, (name, keys)


def test_verl_tailer_maps_the_file_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "verl", monkeypatch)
    log = tmp_path / "verl.jsonl"
    # The validation-before-train record (ray_trainer.py:1442) has no training keys; a mapped key holding a list and
    # a tagged key must be dropped, never guessed.
    log.write_bytes(
        json.dumps({"step": 0, "data": {"val-core/gsm8k/acc/mean@1": 0.3}}).encode()
        + b"\n"
        + _verl_record(1)
        + _verl_record(2, **{"actor/pg_loss": [0.1, 0.2], "actor/pg_loss@sum": 1.0})
        + _verl_record(3)
    )
    tailer = app.adapter.JsonlTailer(str(log))
    assert tailer.poll() == 4

    assert app.histogram("rl.loop.duration") == (3, 3 * 40_000.0)  # seconds -> ms, one observation per step
    assert app.histogram("rl.sample.duration") == (3, 3 * 12_500.0)
    assert app.histogram("rl.reward.duration") == (3, 3 * 1_250.0)
    assert app.histogram("rl.train.duration") == (3, 3 * 20_000.0)
    assert app.histogram("rl.sync.duration") == (3, 3 * 2_000.0)
    assert app.total("rl.train.steps") == 3
    assert app.total("rl.train.tokens") == 3 * 80_000
    assert app.value("rl.tokens.rate") == 80_000 / 40.0  # derived: perf/total_num_tokens / timing_s/step
    assert app.value("rl.tokens.rate_per_gpu") == 250.0  # verl's own per-GPU value, not re-divided
    assert app.value("rl.train.mfu") == pytest.approx(0.31)
    assert app.value("rl.environment.reward.mean") == pytest.approx(0.53)
    assert app.value("rl.train.loss") == pytest.approx(-0.02)
    assert app.total("rl.telemetry.dropped", **{DROP: "not_a_number"}) == 1
    assert "rl.environment.episode.length.mean" not in app.points()  # response_length is tokens: not mapped
    units = app.units()
    assert units["rl.loop.duration"] == "ms" and units["rl.train.mfu"] == "1"
    _no_unbounded_attributes(app)


def test_verl_tailer_restart_neither_loses_nor_double_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "verl", monkeypatch)
    log = tmp_path / "verl.jsonl"
    log.write_bytes(_verl_record(1) + _verl_record(2) + _verl_record(3)[:25])  # the third line is half written
    first = app.adapter.JsonlTailer(str(log))
    assert first.poll() == 2
    assert app.total("rl.train.steps") == 2
    # The tailer stops (its process ends); the trainer finishes the line and writes more.
    with log.open("ab") as f:
        f.write(_verl_record(3)[25:] + _verl_record(4))
    second = app.adapter.JsonlTailer(str(log))
    assert second.offset == first.offset
    assert second.poll() == 2 and second.poll() == 0
    assert app.total("rl.train.steps") == 4
    assert app.total("rl.train.tokens") == 4 * 80_000
    assert app.histogram("rl.loop.duration")[0] == 4
    # A new trainer process truncates the file (FileLogger opens it "wb"): read from the start, count its records.
    log.write_bytes(_verl_record(5))
    assert second.poll() == 1
    assert app.total("rl.train.steps") == 5
    saved = json.loads((tmp_path / "verl.jsonl.rlobs-offset").read_text())
    assert saved["offset"] == log.stat().st_size


def test_verl_tailer_lock_lets_one_process_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "verl", monkeypatch)
    lock = str(tmp_path / "x.lock")
    held = app.adapter._locked(lock)
    assert held is not None
    assert app.adapter._locked(lock) is None  # flock is per open file description: a second holder is refused
    held.close()
    again = app.adapter._locked(lock)
    assert again is not None
    again.close()


def test_verl_tailer_polls_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exit hook's last poll can run while the daemon thread polls: each record is still fed once."""
    import threading

    app = load_app(tmp_path, "verl", monkeypatch)
    log = tmp_path / "verl.jsonl"
    log.write_bytes(b"".join(_verl_record(step) for step in range(1, 51)))
    tailer = app.adapter.JsonlTailer(str(log))
    start = threading.Barrier(8)

    def poll() -> None:
        start.wait()
        tailer.poll()

    threads = [threading.Thread(target=poll) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert tailer.records == 50
    assert app.total("rl.train.steps") == 50


def test_verl_tracking_wrapper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the file backend each Tracking.log call is fed in-process; with it, the tailer counts them (once)."""
    app = load_app(tmp_path, "verl", monkeypatch)
    calls: list[tuple[Any, Any]] = []

    class FileLogger:  # verl.utils.tracking.FileLogger(project_name, experiment_name): its .filepath
        def __init__(self, project_name: str, experiment_name: str) -> None:
            self.filepath = str(tmp_path / "none" / "verl.jsonl")  # never written: the tailer waits for it

    class Tracking:  # verl.utils.tracking.Tracking.log(self, data, step, backend=None)
        def __init__(self, project_name: str, experiment_name: str, default_backend: Any = "console") -> None:
            self.logger = {"file": FileLogger(project_name, experiment_name)} if "file" in default_backend else {}

        def log(self, data: Any, step: Any, backend: Any = None) -> None:
            calls.append((data, step))

    tracking = SimpleNamespace(Tracking=Tracking, FileLogger=FileLogger)
    app.adapter.wrap_tracking(tracking)
    app.adapter.wrap_tracking(tracking)  # idempotent: one feed per call
    record = json.loads(_verl_record(7))
    Tracking("p", "e").log(data=record["data"], step=7)
    Tracking("p", "e", ["console", "file"]).log(data=record["data"], step=8)
    assert len(calls) == 2
    assert app.total("rl.train.steps") == 1
    assert app.histogram("rl.loop.duration") == (1, 40_000.0)


def _trl_logs(num_tokens: int, **extra: Any) -> dict[str, Any]:
    """What GRPOTrainer.log passes to on_log (huggingface/trl@f2cd577 grpo_trainer.py:3272-3290): the window's mean
    of each metric, plus Trainer's loss/grad_norm/learning_rate/epoch."""
    return {
        "loss": 0.0123,
        "grad_norm": 0.5,
        "learning_rate": 1e-6,
        "num_tokens": float(num_tokens),
        "completions/mean_length": 250.0,
        "completions/clipped_ratio": 0.0,
        "reward": 0.75,
        "reward_std": 0.2,
        "frac_reward_zero_std": 0.1,
        "kl": 0.001,
        "entropy": 0.9,
        "step_time": 2.5,
        "epoch": 0.1,
        **extra,
    }


@pytest.mark.slow
def test_trl_callback_with_real_transformers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module("transformers", "drives the TRL callback through transformers' own CallbackHandler")
    from transformers import TrainerControl, TrainerState, TrainingArguments
    from transformers.trainer_callback import CallbackHandler

    app = load_app(tmp_path, "trl", monkeypatch)
    callback = app.adapter.RlobsCallback()
    handler = CallbackHandler([callback], None, None, None, None)
    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to="none")
    # A run resumed from a checkpoint at step 100: its restored totals are a baseline, never counted.
    state = TrainerState(global_step=100, num_input_tokens_seen=1_000_000)
    control = TrainerControl()
    handler.on_train_begin(args, state, control)
    clock = iter([1000.0, 1010.0, 1020.0])
    monkeypatch.setattr(app.adapter.time, "monotonic", lambda: next(clock))
    for step, tokens in ((110, 1_020_000), (120, 1_040_000)):
        state.global_step = step
        state.num_input_tokens_seen = tokens
        handler.on_log(args, state, control, logs=_trl_logs(tokens))
    handler.on_log(args, state, control, logs={"eval_reward": 0.1, "eval_loss": 1.0, "epoch": 0.2})
    assert app.total("rl.train.steps") == 20
    assert app.total("rl.train.tokens") == 40_000
    assert app.histogram("rl.train.step.duration") == (2, 5_000.0)  # step_time seconds -> ms
    assert "rl.step.duration" not in app.points()  # that is the environment-step latency
    assert app.value("rl.tokens.rate") == 20_000 / 10.0  # derived over the wall time between the two logs
    assert app.value("rl.environment.reward.mean") == 0.75
    assert app.value("rl.train.loss") == pytest.approx(0.0123)
    _no_unbounded_attributes(app)


def test_trl_callback_never_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "trl", monkeypatch)
    callback = app.adapter.RlobsCallback()
    state = SimpleNamespace(global_step=1, is_world_process_zero=True)

    class Hostile:
        def __float__(self) -> float:
            raise RuntimeError("a tensor on a dead device")

    callback.on_log(None, state, None, logs={"loss": Hostile(), "reward": None, "step_time": math.nan})
    callback.on_log(None, state, None, logs=None)
    callback.on_log(None, None, None, logs={"loss": 1.0})
    assert app.total("rl.telemetry.dropped") >= 1
    assert "rl.train.step.duration" not in app.points()


def test_skyrl_callback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "skyrl", monkeypatch)
    callback = app.adapter.RlobsSkyRLCallback()
    # NovaSky-AI/SkyRL@a956457 skyrl/train/trainer.py:506-536: timing/<Timer name> in seconds, trainer/global_step;
    # the same keys and on_log(trainer, callback_input, control) with callback_input.logs in the skyrl 0.4.0 wheel
    # (skyrl/train/trainer.py:333-532, skyrl/train/utils/callbacks.py:35-57,113). skyrl and skyrl-train need
    # Python 3.12 (and skyrl-train torch and flash-attn), so they are not installed here.
    for step in (1, 2):
        logs = {
            "timing/step": 60.0,
            "timing/generate": 30.0,
            "timing/train_critic_and_policy": 20.0,
            "timing/sync_weights": 3.0,
            "trainer/global_step": step,
            "trainer/epoch": 0,
            "reward/avg_raw_reward": 0.4,
            "policy/policy_loss": 0.1,
            "trainer/tokens_per_second_per_gpu": 900.0,
        }
        callback.on_log(None, SimpleNamespace(global_step=step, logs=logs), None)
    assert app.histogram("rl.loop.duration") == (2, 120_000.0)
    assert app.histogram("rl.train.duration") == (2, 40_000.0)
    assert app.total("rl.train.steps") == 2
    assert "rl.tokens.rate_per_gpu" not in app.points()  # train phase only: not the loop's rate


# NVIDIA-NeMo/RL@7ea279a nemo_rl/utils/logger.py:103-131: the abstract methods of LoggerInterface, each called on
# every backend by Logger (:1052-1053 log_metrics(metrics, step, prefix, step_metric, step_finished), :1061,
# :1205, :1216); Logger.finish (:1064-1069) calls a backend's finish() where it has one.
NEMO_LOGGER_INTERFACE = ("log_metrics", "log_hyperparams", "log_histogram", "log_plot")


class _NemoLogger:
    """NeMo-RL's Logger fan-out (logger.py:1052-1069, 1205-1217): positional arguments, every backend."""

    def __init__(self) -> None:
        self.loggers: list[Any] = []

    def log_metrics(
        self, metrics: dict[str, Any], step: int, prefix: str = "", step_metric: Any = None, step_finished: bool = False
    ) -> None:
        for logger in self.loggers:
            logger.log_metrics(metrics, step, prefix, step_metric, step_finished)

    def log_hyperparams(self, params: Any) -> None:
        for logger in self.loggers:
            logger.log_hyperparams(params)

    def log_histogram(self, histogram: list[Any], step: int, name: str) -> None:
        for logger in self.loggers:
            logger.log_histogram(histogram, step, name)

    def log_plot(self, figure: Any, step: int, name: str) -> None:
        for logger in self.loggers:
            logger.log_plot(figure, step, name)

    def finish(self) -> None:
        for logger in self.loggers:
            finish = getattr(logger, "finish", None)
            if callable(finish):
                finish()


def test_nemo_rl_logger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "nemo-rl", monkeypatch)
    owner = _NemoLogger()
    adapter = app.adapter.attach_nemo_rl(owner)
    assert owner.loggers == [adapter]
    assert all(callable(getattr(adapter, name, None)) for name in NEMO_LOGGER_INTERFACE)
    # The end of a GRPO step (NVIDIA-NeMo/RL@7ea279a nemo_rl/algorithms/grpo.py:3762-3772): one log_metrics call per
    # prefix, timing last with step_finished; timer names from grpo.py:2832-3332 (sync GRPO) and :4959 (weight_sync,
    # async GRPO), performance/* from nemo_rl/algorithms/utils.py:881-903.
    owner.log_hyperparams({"grpo": {"num_prompts_per_step": 32}})
    for step in (1, 2):
        owner.log_metrics({"loss": 0.2, "reward": 0.6, "global_valid_toks": 4096}, step, prefix="train")
        owner.log_metrics({"train_fp_utilization": 0.4, "tokens_per_sec": 8192.0}, step, prefix="performance")
        owner.log_histogram([0.1, 0.2], step, "train/token_mult_prob_error")
        owner.log_plot(object(), step, "train/token_mult_prob_error_plot")
        timings = {"total_step_time": 50.0, "generation": 20.0, "weight_sync": 1.5}
        owner.log_metrics(timings, step, prefix="timing/train", step_finished=True)
    owner.finish()
    assert app.total("rl.train.steps") == 2  # three calls per step, one step each
    assert app.total("rl.train.tokens") == 8192
    assert app.histogram("rl.sync.duration") == (2, 3_000.0)
    assert app.histogram("rl.loop.duration") == (2, 100_000.0)
    assert app.value("rl.train.mfu") == pytest.approx(0.4)
    assert app.value("rl.tokens.rate") == 8192.0
    _no_unbounded_attributes(app)


# OpenRLHF/OpenRLHF@3c3be62 openrlhf/trainer/ppo_trainer.py:148,383-389: the method the adapter wraps, as upstream
# declares it (the body here only records the call; upstream hands logs_dict to its W&B/TensorBoard loggers).
_OPENRLHF_TRAINER = """
class BasePPOTrainer:
    calls = []

    def save_logs_and_checkpoints(self, global_step: int, logs_dict=None, client_states=None) -> None:
        self.calls.append((global_step, logs_dict, client_states))


class PPOTrainer(BasePPOTrainer):
    pass
"""


def _openrlhf_status(step: int) -> dict[str, Any]:
    """The status one PPO step logs (ppo_trainer.py:213-264 train_step, :537-556 fit; ppo_actor.py:155-260 the actor's
    step means): timings in seconds, step_total their sum, rollout/* from _compute_rollout_stats (:412-427)."""
    status: dict[str, Any] = {
        "policy_loss": 0.05,
        "reward": 0.4,
        "response_length": 900.0,
        "kl": 0.01,
        "actor_lr": 1e-6,
        "timing/make_experience": 10.0,
        "timing/ppo_train": 25.0,
        "timing/broadcast": 5.0,
        "rollout/reward_mean": 0.3 + step / 10,
        "rollout/response_length_mean": 850.0,
        "generated_samples": ["a sample", 1.0],
        "timing/generation": 20.0,
    }
    status["timing/step_total"] = sum(v for k, v in status.items() if k.startswith("timing/"))
    return status


def test_openrlhf_trainer_is_wrapped_when_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "openrlhf", monkeypatch)
    _fake_package(tmp_path / "fake", "openrlhf.trainer.ppo_trainer", _OPENRLHF_TRAINER, monkeypatch)
    _run_sitecustomize(tmp_path / "app", "openrlhf", monkeypatch)
    module = importlib.import_module("openrlhf.trainer.ppo_trainer")  # as the trainer's Ray actor imports it
    trainer = module.PPOTrainer()
    for step in (1, 2, 3):
        trainer.save_logs_and_checkpoints(step, _openrlhf_status(step), {"global_step": step})
    assert [c[0] for c in module.BasePPOTrainer.calls] == [1, 2, 3]  # the original still runs, arguments unchanged
    assert module.BasePPOTrainer.calls[0][1] == _openrlhf_status(1)
    app.adapter.wrap_openrlhf(module)  # idempotent
    trainer.save_logs_and_checkpoints(3, _openrlhf_status(3))  # the same step again counts nothing
    assert app.total("rl.train.steps") == 3
    assert app.histogram("rl.loop.duration") == (4, 4 * 60_000.0)  # seconds -> ms
    assert app.histogram("rl.sample.duration") == (4, 80_000.0)
    assert app.histogram("rl.train.duration") == (4, 100_000.0)
    assert app.histogram("rl.sync.duration") == (4, 20_000.0)
    assert app.value("rl.environment.reward.mean") == pytest.approx(0.6)  # rollout/reward_mean, not `reward`
    assert app.value("rl.train.loss") == pytest.approx(0.05)
    assert "rl.environment.episode.length.mean" not in app.points()  # response length is tokens
    _no_unbounded_attributes(app)


@pytest.mark.parametrize("framework", ["openrlhf", "prime-rl"])
def test_sitecustomize_installs_only_the_hook_and_only_when_asked(framework: str, tmp_path: Path) -> None:
    app = render_app(tmp_path, with_system(framework))
    # The hook is installed, and nothing else is imported until the trainer module is (no OpenTelemetry SDK in every
    # Ray worker's start-up).
    probe = (
        "import sys; print(any(type(f).__name__ == '_WrapOnImport' for f in sys.meta_path),"
        " 'rlobs_adapter' in sys.modules or 'opentelemetry' in sys.modules)"
    )
    for value, expected in ((framework, "True False"), ("", "False False"), ("verl", "False False")):
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(app), "RLOBS_ADAPTER": value, "OTEL_SDK_DISABLED": "true"}
        run = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == expected, (value, run.stdout, run.stderr)


# PrimeIntellect-ai/prime-rl@6f97d6b src/prime_rl/utils/metrics_server.py: MetricsServer.update as upstream declares
# it (the body here only records the call; upstream sets its trainer_* gauges).
_PRIME_RL_SERVER = """
class MetricsServer:
    calls = []

    def update(self, step: int, loss: float, throughput: float, grad_norm: float, peak_memory_gib: float,
               learning_rate: float, mfu: float = 0.0, entropy: float = 0.0, mismatch_kl: float = 0.0) -> None:
        self.calls.append(step)
"""


def _fake_package(root: Path, dotted: str, source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module `dotted` (with its parent packages) under root, importable only through a fresh import."""
    parts = dotted.split(".")
    folder = root.joinpath(*parts[:-1])
    folder.mkdir(parents=True)
    for i in range(1, len(parts)):
        (root.joinpath(*parts[:i]) / "__init__.py").write_text("", encoding="utf-8")
    (folder / f"{parts[-1]}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    for i in range(1, len(parts) + 1):
        monkeypatch.delitem(sys.modules, ".".join(parts[:i]), raising=False)


def _run_sitecustomize(app_dir: Path, framework: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """app/sitecustomize.py as Python runs it at start-up (twice: it installs one hook)."""
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setenv("RLOBS_ADAPTER", framework)
    for _ in range(2):
        spec = importlib.util.spec_from_file_location("rlobs_sitecustomize", app_dir / "sitecustomize.py")
        assert spec and spec.loader
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert sum(type(f).__name__ == "_WrapOnImport" for f in sys.meta_path) == 1


def test_prime_rl_metrics_server_is_wrapped_when_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "prime-rl", monkeypatch)
    _fake_package(tmp_path / "fake", "prime_rl.utils.metrics_server", _PRIME_RL_SERVER, monkeypatch)
    _run_sitecustomize(tmp_path / "app", "prime-rl", monkeypatch)
    module = importlib.import_module("prime_rl.utils.metrics_server")
    server = module.MetricsServer()
    for step in (1, 2, 3):
        # The RL trainer's call (src/prime_rl/trainer/rl/train.py): keywords, mfu in percent.
        server.update(
            step=step,
            loss=0.02,
            throughput=12_000.0,
            grad_norm=0.5,
            peak_memory_gib=60.0,
            learning_rate=1e-6,
            mfu=42.0,
            entropy=0.9,
            mismatch_kl=0.001,
        )
    server.update(3, 0.02, 12_000.0, 0.5, 60.0, 1e-6)  # positional, the same step: counts nothing
    assert module.MetricsServer.calls == [1, 2, 3, 3]  # the original still runs
    assert app.total("rl.train.steps") == 3
    assert app.value("rl.train.mfu") == pytest.approx(0.42)  # percent -> ratio
    assert app.value("rl.train.loss") == pytest.approx(0.02)
    assert app.value("rl.tokens.rate") == 12_000.0
    _no_unbounded_attributes(app)


def _roll_metrics(step: int, previous_total: float) -> dict[str, Any]:
    """MetricsManager.get_metrics() of one RLVR step (alibaba/ROLL@8eb27cc roll/pipeline/rlvr/rlvr_pipeline.py:490-842:
    time/* from codetiming Timers in seconds, time/step_total the previous step's; per-domain keys <domain>/...
    from metrics_manager.py:32-48,408-416; reducer-tagged worker keys such as actor/pg_loss@sum, actor_worker.py:145).
    """
    return {
        "time/step_total": previous_total,
        "time/step_model_update": 2.0,
        "time/step_generate": 30.0,
        "time/ref_log_probs_values": 4.0,
        "time/step_train": 20.0,
        "actor/pg_loss@sum": 0.8,
        "actor/pg_loss": 0.2,
        "math_rule/token/score/mean": 0.5 + step / 10,
        "math_rule/time/get_token_reward": 1.5,
        "math_rule/token/response_length/mean": 700.0,
        "mask/final_mask_sum_eq_0": 0,
    }


class _RollTracker:
    """A ROLL tracker the run used before (what tracker_registry["wandb"] would build)."""

    def __init__(self, config: dict[str, Any], **kwargs: Any) -> None:
        self.config, self.kwargs, self.logged, self.finished = config, kwargs, [], False

    def log(self, values: dict[str, Any], step: int | None, **kwargs: Any) -> None:
        self.logged.append((step, values))

    def finish(self) -> None:
        self.finished = True


def test_roll_tracker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "roll", monkeypatch)
    monkeypatch.setenv("RLOBS_ROLL_TRACKER", "wandb")
    registry: dict[str, Any] = {"wandb": _RollTracker}  # ROLL's tracker_registry (roll/utils/tracking.py:12)
    app.adapter.register_roll(registry)
    # create_tracker(track_with, config, **tracker_kwargs) (tracking.py:167-176), then one log per step.
    tracker = registry["rlobs"]({"seed": 42}, project="grpo", name="run-1")
    previous = 0.0
    for step in range(3):
        tracker.log(values=_roll_metrics(step, previous), step=step)
        previous = 60.0
    tracker.finish()
    # Three steps; loop durations of the two finished steps only (the first payload's 0 is a placeholder).
    assert app.total("rl.train.steps") == 3
    assert app.histogram("rl.loop.duration") == (2, 120_000.0)
    assert app.histogram("rl.sample.duration") == (3, 90_000.0)
    assert app.histogram("rl.train.duration") == (3, 60_000.0)
    assert app.histogram("rl.sync.duration") == (3, 6_000.0)
    assert app.value("rl.train.loss") == pytest.approx(0.2)  # never the tagged sum
    assert "rl.environment.reward.mean" not in app.points()  # per-domain keys are not guessed
    _no_unbounded_attributes(app)
    inner = tracker.inner
    assert isinstance(inner, _RollTracker) and inner.kwargs == {"project": "grpo", "name": "run-1"}
    assert [s for s, _ in inner.logged] == [0, 1, 2] and inner.finished
    assert inner.logged[0][1] == _roll_metrics(0, 0.0)  # handed on unchanged


def test_roll_tracker_alone_and_never_raising(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "roll", monkeypatch)
    monkeypatch.delenv("RLOBS_ROLL_TRACKER", raising=False)
    registry: dict[str, Any] = {}
    app.adapter.register_roll(registry)
    tracker = registry["rlobs"]({})
    assert tracker.inner is None
    tracker.log(values=["not", "a", "dict"], step=0)
    tracker.log(values={"time/step_train": float("nan"), "time/step_generate": [1, 2]}, step=1)
    tracker.finish()
    assert app.total("rl.train.steps") == 1
    assert "rl.train.duration" not in app.points()


def test_rllib_callback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without Ray (importing it takes seconds): the adapter falls back to a plain base class; the real one is
    # test_rllib_callback_with_real_rllib's.
    monkeypatch.setitem(sys.modules, "ray.rllib.callbacks.callbacks", None)
    app = load_app(tmp_path, "rllib", monkeypatch)
    callback = app.adapter.RlobsRLlibCallback()
    for iteration, lifetime in ((1, 4000), (2, 8000)):
        result = {
            "training_iteration": iteration,
            "timers": {"training_iteration": 8.0, "env_runner_sampling_timer": 5.0},
            "env_runners": {
                "episode_return_mean": 21.0,
                "episode_len_mean": 200.0,
                "num_env_steps_sampled_lifetime": lifetime,
                "num_episodes_lifetime": lifetime // 200,
            },
            "learners": {"default_policy": {"policy_loss": 0.3}},
        }
        callback.on_train_result(algorithm=None, metrics_logger=None, result=result)
    assert app.histogram("rl.loop.duration") == (2, 16_000.0)
    assert app.total("rl.train.steps") == 2
    # Lifetime totals: the first result is the baseline (a restored algorithm's totals are never re-counted).
    assert app.total("rl.sample.samples") == 4000
    assert app.total("rl.sample.episodes") == 20
    assert app.value("rl.environment.episode.length.mean") == 200.0  # environment steps in RLlib


@pytest.mark.slow
def test_rllib_callback_with_real_rllib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter's class set in a real AlgorithmConfig, built as Algorithm.setup builds it on the new API stack and
    called through RLlib's own make_callback with a result whose keys are RLlib's own constants (ray 2.60.0)."""
    module("ray.rllib", "drives the RLlib callback through RLlib's own callback machinery")
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.callbacks.utils import make_callback
    from ray.rllib.core import DEFAULT_MODULE_ID
    from ray.rllib.core.learner.learner import POLICY_LOSS_KEY
    from ray.rllib.utils import force_list
    from ray.rllib.utils import metrics as m
    from ray.rllib.utils.metrics.metrics_logger import MetricsLogger
    from ray.tune.result import TRAINING_ITERATION

    app = load_app(tmp_path, "rllib", monkeypatch)
    assert issubclass(app.adapter.RlobsRLlibCallback, RLlibCallback)
    config = PPOConfig().callbacks(app.adapter.RlobsRLlibCallback)
    callbacks = [cls() for cls in force_list(config.callbacks_class)]  # ray/rllib/algorithms/algorithm.py:744
    timers = {
        m.TRAINING_ITERATION_TIMER: 8.0,
        m.ENV_RUNNER_SAMPLING_TIMER: 5.0,
        m.LEARNER_UPDATE_TIMER: 2.5,
        m.SYNCH_WORKER_WEIGHTS_TIMER: 0.25,
    }
    for iteration, lifetime in ((1, 4000), (2, 8000), (3, 12000)):
        result = {
            TRAINING_ITERATION: iteration,
            m.TIMERS: timers,
            m.ENV_RUNNER_RESULTS: {
                m.EPISODE_RETURN_MEAN: 20.0 + iteration,
                m.EPISODE_LEN_MEAN: 200.0,
                m.NUM_ENV_STEPS_SAMPLED_LIFETIME: lifetime,
                m.NUM_EPISODES_LIFETIME: lifetime // 200,
            },
            m.LEARNER_RESULTS: {DEFAULT_MODULE_ID: {POLICY_LOSS_KEY: 0.3, "entropy": [1.0, 2.0]}},
        }
        # ray/rllib/algorithms/algorithm.py:3437-3446: how the algorithm calls on_train_result.
        make_callback(
            "on_train_result",
            callbacks_objects=callbacks,
            callbacks_functions=config.callbacks_on_train_result,
            kwargs={"algorithm": None, "metrics_logger": MetricsLogger(), "result": result},
        )
    assert app.histogram("rl.loop.duration") == (3, 24_000.0)  # seconds -> ms
    assert app.histogram("rl.sample.duration") == (3, 15_000.0)
    assert app.histogram("rl.train.duration") == (3, 7_500.0)
    assert app.histogram("rl.sync.duration") == (3, 750.0)
    assert app.total("rl.train.steps") == 3
    assert app.total("rl.sample.samples") == 8000  # the first lifetime total is the baseline
    assert app.total("rl.sample.episodes") == 40
    assert app.value("rl.environment.reward.mean") == 23.0
    assert app.value("rl.train.loss") == pytest.approx(0.3)
    _no_unbounded_attributes(app)
    # Every key the mapping reads is one RLlib itself defines.
    rllib = CATALOG.framework("rllib")
    assert rllib is not None
    real = {f"{m.TIMERS}/{t}" for t in timers} | {f"{m.ENV_RUNNER_RESULTS}/{k}" for k in result[m.ENV_RUNNER_RESULTS]}
    real |= {TRAINING_ITERATION, f"{m.LEARNER_RESULTS}/{DEFAULT_MODULE_ID}/{POLICY_LOSS_KEY}"}
    assert {k.key for k in rllib.keys} == real


def _frameworks(entry: dict[str, Any]) -> None:
    raw = {
        "phases": ["loop", "train"],
        "frameworks": [{"name": "x", "systems": [], "pinned": "", "sources": "", "hook": "", "keys": [entry]}],
    }
    parse_frameworks(raw, CATALOG)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"key": "t", "metric": "loop_duration", "phase": "loop"}, "say the key's unit"),
        ({"key": "t", "metric": "train_tokens", "phase": "train"}, "cannot feed the counter"),
        ({"key": "t", "metric": "train_loss", "phase": "train", "value": "cumulative"}, "cannot feed the gauge"),
        ({"key": "t", "metric": "train_mfu", "phase": "train", "unit": "s"}, "does not convert"),
        ({"key": "t", "metric": "train_loss", "phase": "nowhere"}, "unknown phase"),
    ],
)
def test_mappings_that_would_mislead_are_refused(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _frameworks(entry)


def test_every_framework_covers_the_stall_signal() -> None:
    assert parse_catalog  # the catalog's own parser is what load_catalog uses
    for f in CATALOG.frameworks:
        assert f.coverage("train_steps") == "mapped", f.name
        assert f.coverage("run_state") == "derived"
        assert all("@" not in k.key for k in f.keys)


# Stands in for verl's main_ppo: the driver imports verl and never builds a Tracking; the TaskRunner, in another
# process (a Ray actor in verl), builds it and logs. Neither imports rlobs: sitecustomize does it from the env.
_DRIVER = """
import json, multiprocessing, sys, time
import verl.utils.tracking


def task_runner(backends, steps):
    from verl.utils.tracking import Tracking

    tracking = Tracking("p", "gsm8k-7b", backends)
    for i, data in enumerate(steps):
        time.sleep(0.3 if i else 0.0)
        tracking.log(data=data, step=i + 1)  # the last one right before exit: read by the tailer's exit hook


if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")  # a fresh interpreter, as a Ray worker process is
    runner = multiprocessing.Process(target=task_runner, args=(sys.argv[1].split(","), json.loads(sys.argv[2])))
    runner.start()
    runner.join()
    sys.exit(runner.exitcode)
"""


@pytest.mark.slow
@pytest.mark.parametrize("backends", ["console,file", "console"])
def test_verl_no_code_path_where_the_task_runner_writes(tmp_path: Path, receiver: Any, backends: str) -> None:
    """app/ on the PYTHONPATH and the bundle's env: the trainer runs in a child process of the driver (verl's TaskRunner
    actor); there the tailer starts on the file its FileLogger writes (or, without the file backend, Tracking.log is
    fed in-process), reads every step, including one written just before exit, and the run ends finished, with
    verl's experiment name as run id, over real OTLP/gRPC. The driver sends nothing."""
    from testing.adapters import render_app, with_system
    from testing.otlp import example_env

    app = render_app(tmp_path, with_system("verl"))
    verl_site(tmp_path)
    log = tmp_path / "verl.jsonl"
    env = example_env(
        app,
        PYTHONPATH=f"{app}:{tmp_path / 'site'}",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}",
        OTEL_TRACES_EXPORTER="none",
        RLOBS_ADAPTER="verl",
        VERL_FILE_LOGGER_PATH=str(log),
        RLOBS_TAIL_POLL_SECONDS="0.1",
        RL_FINISH_LINGER_SECONDS="0",
    )
    steps = json.dumps([json.loads(_verl_record(step))["data"] for step in (1, 2, 3)])
    (tmp_path / "site" / "main_ppo.py").write_text(_DRIVER, encoding="utf-8")
    # `python -m main_ppo`: no command line of either process names verl (a Ray worker's does not).
    done = subprocess.run(
        [sys.executable, "-m", "main_ppo", backends, steps], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    got = receiver.metric_points()
    assert got["rl.train.steps"].sum.data_points[0].as_double == 3
    loop = got["rl.loop.duration"].histogram.data_points[0]
    assert (loop.count, loop.sum) == (3, 120_000.0)
    assert got["rl.run.state"].gauge.data_points[0].as_int == 0  # a clean exit: finished
    attributes = {kv.key: kv.value.string_value for kv in got["rl.train.steps"].sum.data_points[0].attributes}
    assert attributes["rl.run.id"] == "gsm8k-7b"
    assert {kv.key for kv in got["rl.run.state"].gauge.data_points[0].attributes} >= {"rl.run.id"}
    assert log.exists() == ("file" in backends)


# verl's main_ppo on a real local Ray: the driver starts a TaskRunner actor (a Ray worker process) that builds the
# Tracking and logs; neither imports rlobs.
_RAY_DRIVER = """
import json, os, sys, time
import ray


@ray.remote(num_cpus=1)
class TaskRunner:
    def run(self, steps):
        from verl.utils.tracking import Tracking

        tracking = Tracking("p", "gsm8k-7b", ["console", "file"])
        for i, data in enumerate(steps):
            tracking.log(data=data, step=i + 1)
        return os.getpid()


if __name__ == "__main__":
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    runner = TaskRunner.remote()
    print("actor pid", ray.get(runner.run.remote(json.loads(sys.argv[1]))), "driver pid", os.getpid(), flush=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not os.path.exists(sys.argv[2]):
        time.sleep(0.2)  # the test creates this file when the actor's steps have arrived
    ray.shutdown()
"""


@pytest.mark.slow
def test_verl_tailer_runs_in_the_task_runner_actor_on_a_real_ray(tmp_path: Path, receiver: Any) -> None:
    """A real local Ray cluster: the env and app/ on the PYTHONPATH reach the Ray worker process of the TaskRunner
    actor (another process than the driver), where the tailer starts on the file verl's FileLogger writes; every
    step arrives over real OTLP/gRPC with verl's experiment name as the run id."""
    import time

    module("ray", "runs verl's TaskRunner as a real Ray actor")
    from testing.otlp import example_env

    app = render_app(tmp_path, with_system("verl"))
    ray_tmp = tempfile.mkdtemp(prefix="rlobs-ray-", dir="/tmp")
    (verl_site(tmp_path) / "main_ppo.py").write_text(_RAY_DRIVER, encoding="utf-8")
    env = example_env(
        app,
        PYTHONPATH=f"{app}:{tmp_path / 'site'}",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}",
        OTEL_TRACES_EXPORTER="none",
        OTEL_METRIC_EXPORT_INTERVAL="500",  # the actor is killed at ray.shutdown(): its periodic exports count
        RLOBS_ADAPTER="verl",
        VERL_FILE_LOGGER_PATH=str(tmp_path / "verl.jsonl"),
        RLOBS_TAIL_POLL_SECONDS="0.1",
        RAY_TMPDIR=ray_tmp,  # short: Ray's socket paths must fit in 107 bytes
    )
    steps = json.dumps([json.loads(_verl_record(step))["data"] for step in (1, 2, 3)])
    done = tmp_path / "done"
    driver = subprocess.Popen(
        [sys.executable, "-m", "main_ppo", steps, str(done)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and driver.poll() is None:
            got = receiver.metric_points()
            if "rl.train.steps" in got and got["rl.train.steps"].sum.data_points[0].as_double == 3:
                break
            time.sleep(0.2)
        done.touch()
        out, err = driver.communicate(timeout=120)
    finally:
        driver.kill()
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert driver.returncode == 0, err[-3000:]
    actor, driver_pid = out.split()[2], out.split()[5]
    assert actor != driver_pid
    got = receiver.metric_points()
    assert got["rl.train.steps"].sum.data_points[0].as_double == 3, err[-3000:]
    loop = got["rl.loop.duration"].histogram.data_points[0]
    assert (loop.count, loop.sum) == (3, 120_000.0)
    attributes = {kv.key: kv.value.string_value for kv in got["rl.train.steps"].sum.data_points[0].attributes}
    assert attributes["rl.run.id"] == "gsm8k-7b"


@pytest.mark.slow
@pytest.mark.parametrize("name", [f.name for f in CATALOG.frameworks])
def test_every_generated_adapter_passes_ruff(name: str, tmp_path: Path) -> None:
    ruff = tool("ruff", "lints the generated adapters")
    app = render_app(tmp_path, with_system(name))
    settings = ["--isolated", "--line-length", "120", "--target-version", "py311"]
    files = [str(app / "rlobs_adapter.py")] + (
        [str(app / "sitecustomize.py")] if (app / "sitecustomize.py").exists() else []
    )
    lint = subprocess.run(
        [ruff, "check", *settings, "--select", "E,F,W,I,B,UP,SIM,RUF", *files], capture_output=True, text=True
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = subprocess.run([ruff, "format", "--check", *settings, *files], capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
