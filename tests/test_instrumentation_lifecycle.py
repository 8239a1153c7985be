"""The run lifecycle of the generated module, in real processes: how a run ends (a clean exit, sys.exit(1), SystemExit
inside run(), a real Hydra main that raises, an exception, Ctrl-C, SIGTERM), pauses, the progress clock, the run id
and the restart count, read back from a real OTLP/gRPC receiver."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from testing.helpers import module
from testing.otlp import CATALOG, Receiver, example_env, render_app

pytestmark = pytest.mark.slow

STATE = CATALOG.metric("run_state").name
SINCE = CATALOG.metric("state_since").name
PROGRESS = CATALOG.metric("progress_time").name
INTERVAL = CATALOG.metric("step_interval").name
RESTARTS = CATALOG.metric("run_restarts").name
RUN_ID = CATALOG.attribute("run_id").name
FINISHED, TRAINING, STARTING, PAUSED, FAILED = 0, 1, 2, 3, 4

STEPS = """
import time
import rlobs_telemetry as telemetry

for i in range(3):
    with telemetry.train_step(tokens=10):
        time.sleep(0.01)
"""


def _run(app: Path, receiver: Receiver, body: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = app / "train.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    full = example_env(app, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}", **env)
    full["OTEL_TRACES_EXPORTER"] = "none"
    return subprocess.run([sys.executable, str(script)], env=full, capture_output=True, text=True, timeout=120)


@pytest.fixture
def app(tmp_path: Path) -> Path:
    return render_app(tmp_path)


ENDINGS = {
    "a clean exit": (STEPS, 0, FINISHED),
    "sys.exit(0)": (STEPS + "import sys\nsys.exit(0)\n", 0, FINISHED),
    "finish()": (STEPS + "telemetry.finish()\n", 0, FINISHED),
    "sys.exit(1)": (STEPS + "import sys\nsys.exit(1)\n", 1, FAILED),
    "sys.exit('message')": (STEPS + "import sys\nsys.exit('fatal: no GPU')\n", 1, FAILED),
    "an uncaught exception": (STEPS + "raise RuntimeError('CUDA error')\n", 1, FAILED),
    "Ctrl-C": (STEPS + "raise KeyboardInterrupt\n", -signal.SIGINT, FAILED),  # Python ends by SIGINT
    "SystemExit(1) inside run()": (
        STEPS + "with telemetry.run():\n    raise SystemExit(1)\n",
        1,
        FAILED,
    ),
    "SystemExit(0) inside run()": (STEPS + "with telemetry.run():\n    raise SystemExit(0)\n", 0, FINISHED),
    "an exception inside @run()": (
        STEPS + "@telemetry.run()\ndef main():\n    raise ValueError('bad config')\n\nmain()\n",
        1,
        FAILED,
    ),
    "the end of run()": (STEPS + "with telemetry.run():\n    pass\nprint('after')\n", 0, FINISHED),
    # A status the program catches is no end: the run went on and exited cleanly.
    "a caught sys.exit(2)": (
        "import sys\nimport rlobs_telemetry as telemetry\n"
        "try:\n    sys.exit(2)\nexcept SystemExit:\n    pass\n" + STEPS,
        0,
        FINISHED,
    ),
}


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_how_a_run_ends_is_its_last_exported_state(app: Path, receiver: Receiver, ending: str) -> None:
    body, status, state = ENDINGS[ending]
    run = _run(app, receiver, body)
    assert run.returncode == status, run.stderr
    assert receiver.gauge_values(STATE)[-1] == state, run.stderr


def test_a_real_hydra_main_that_raises_ends_failed(app: Path, receiver: Receiver) -> None:
    """@hydra.main (hydra-core) turns the exception into sys.exit(1), as verl's main_ppo does."""
    module("hydra", "runs a real @hydra.main")
    body = (
        STEPS
        + """
import hydra

@hydra.main(version_base=None, config_path=None)
def main(cfg):
    raise RuntimeError("NCCL timeout")

main()
"""
    )
    run = _run(app, receiver, body)
    assert run.returncode == 1 and "NCCL timeout" in run.stderr, run.stderr
    assert receiver.gauge_values(STATE)[-1] == FAILED
    # The same main returning normally is a clean end: the wrapper of sys.exit changes nothing else.
    receiver.metrics.clear()
    run = _run(app, receiver, body.replace('raise RuntimeError("NCCL timeout")', "print('trained')"))
    assert run.returncode == 0 and "trained" in run.stdout, run.stderr
    assert receiver.gauge_values(STATE)[-1] == FINISHED


def test_sigterm_without_a_clean_finish_is_a_failure(app: Path, receiver: Receiver) -> None:
    script = app / "train.py"
    script.write_text(
        "import time\nimport rlobs_telemetry as telemetry\n"
        "while True:\n    with telemetry.train_step():\n        time.sleep(0.01)\n    print('step', flush=True)\n",
        encoding="utf-8",
    )
    env = example_env(app, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}", OTEL_TRACES_EXPORTER="none")
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert receiver.gauge_values(STATE)[-1] == FAILED


def test_states_pauses_and_the_progress_clock(app: Path, receiver: Receiver) -> None:
    """starting until the first step, training, paused (time excluded from the intervals), training again."""
    body = """
    import time
    import rlobs_telemetry as telemetry

    telemetry.init()
    telemetry.flush()                      # export 1: starting
    time.sleep(0.3)
    for _ in range(5):
        with telemetry.train_step():
            time.sleep(0.05)
    telemetry.flush()                      # export 2: training
    with telemetry.pause("checkpoint"):
        with telemetry.pause("upload"):    # nested: one pause
            time.sleep(0.2)
        telemetry.flush()                  # export 3: still paused
        time.sleep(0.6)
    telemetry.flush()                      # export 4: training again
    for _ in range(3):
        with telemetry.train_step():
            time.sleep(0.05)
    print(time.time())
    """
    started = time.time()
    run = _run(app, receiver, body)
    assert run.returncode == 0, run.stderr
    ended = float(run.stdout.split()[-1])
    states = receiver.gauge_values(STATE)
    assert states == [STARTING, TRAINING, PAUSED, TRAINING, FINISHED]
    since = receiver.gauge_values(SINCE)
    assert started <= since[0] < since[1] < since[2] < since[3] <= ended
    assert since[3] - since[2] >= 0.75  # the pause lasted from its start to its end
    progress = receiver.gauge_values(PROGRESS)
    assert since[1] == pytest.approx(progress[0])  # training began at the first completed step
    assert progress[-1] <= ended and progress[-1] > since[3]
    intervals = receiver.gauge_values(INTERVAL)
    # The first interval after the pause is ~0.05 s: the 0.8 s pause is not a step interval.
    assert all(0.04 <= i < 0.3 for i in intervals[1:]), intervals
    assert receiver.gauge_values(RESTARTS) == [0.0] * len(states)


def test_a_run_that_never_steps_stays_starting(app: Path, receiver: Receiver) -> None:
    run = _run(app, receiver, "import rlobs_telemetry as telemetry\ntelemetry.init()\ntelemetry.flush()\n")
    assert run.returncode == 0, run.stderr
    assert receiver.gauge_values(STATE) == [STARTING, FINISHED]
    assert PROGRESS not in receiver.metric_points()  # no step, no progress time


def test_run_ids_are_unique_by_default_and_chosen_in_order(app: Path, receiver: Receiver) -> None:
    ids = []
    for _ in range(2):
        receiver.metrics.clear()
        assert _run(app, receiver, STEPS).returncode == 0
        ids.append(receiver.point_attributes(STATE)[RUN_ID])
    assert ids[0] != ids[1], "two runs of the same code share an id"
    cases = [
        ({"RLOBS_OWNER_UID": "uid-1"}, "uid-1"),
        ({"RLOBS_OWNER_UID": "uid-1", "MLFLOW_RUN_ID": "mlflow-2"}, "mlflow-2"),
        ({"RLOBS_OWNER_UID": "uid-1", "WANDB_RUN_ID": "wandb-3"}, "wandb-3"),
        ({"WANDB_RUN_ID": "wandb-3", "RL_RUN_ID": "explicit-4"}, "explicit-4"),
    ]
    for env, expected in cases:
        receiver.metrics.clear()
        assert _run(app, receiver, STEPS, **env).returncode == 0
        assert receiver.point_attributes(STATE)[RUN_ID] == expected, env
    receiver.metrics.clear()
    body = "import rlobs_telemetry as telemetry\ntelemetry.init(run_name='grpo-qwen-7')\n" + STEPS
    assert _run(app, receiver, body, WANDB_RUN_ID="wandb-3").returncode == 0
    assert receiver.point_attributes(STATE)[RUN_ID] == "grpo-qwen-7"  # the framework's name before the tracker's


@pytest.mark.parametrize(
    ("env", "count"), [({}, 0), ({"TORCHELASTIC_RESTART_COUNT": "2"}, 2), ({"RLOBS_RESTART_COUNT": "3"}, 3)]
)
def test_restart_count(app: Path, receiver: Receiver, env: dict[str, str], count: int) -> None:
    assert _run(app, receiver, STEPS, **env).returncode == 0
    assert receiver.gauge_values(RESTARTS)[-1] == count


def test_only_global_rank_0_serves_and_the_others_stay_silent(app: Path) -> None:
    """Two processes started as torchrun starts them (RANK=0, RANK=1, one port): rank 1 first, so it would win a
    port race. Rank 0 always serves its series; rank 1 opens no port and prints nothing into the training log."""
    import urllib.request

    from testing.prom import free_port

    port = free_port()
    script = app / "train.py"
    script.write_text(
        "import sys, time\nimport rlobs_telemetry as telemetry\n"
        "telemetry.record_loss(float('nan'))\ntelemetry.record_mfu('bad')\n"  # would warn on a reporting rank
        "for _ in range(int(sys.argv[1])):\n    with telemetry.train_step():\n        time.sleep(0.05)\n",
        encoding="utf-8",
    )
    env = example_env(
        app,
        OTEL_METRICS_EXPORTER="prometheus",
        OTEL_TRACES_EXPORTER="none",
        OTEL_EXPORTER_PROMETHEUS_HOST="127.0.0.1",
        OTEL_EXPORTER_PROMETHEUS_PORT=str(port),
        RL_FINISH_LINGER_SECONDS="0",
        WORLD_SIZE="2",
    )

    def start(rank: int, steps: int) -> subprocess.Popen[str]:
        ranked = {**env, "RANK": str(rank), "LOCAL_RANK": str(rank)}
        return subprocess.Popen(
            [sys.executable, str(script), str(steps)],
            env=ranked,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    other = start(1, 60)
    time.sleep(1.5)  # rank 1 is well into its loop
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)
    first = start(0, 40)
    body = ""
    for _ in range(100):
        try:
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            break
        except OSError:
            time.sleep(0.05)
    assert "rl_run_state" in body
    out, err = other.communicate(timeout=60)
    assert other.returncode == 0 and out == "" and err == ""
    _, err0 = first.communicate(timeout=60)
    assert first.returncode == 0, err0
    assert "dropped a value" in err0  # the same code does warn on rank 0: rank 1's silence is the gating


TIME = CATALOG.metric("run_time").name
BUCKET = CATALOG.attribute("time_bucket").name


def _buckets(receiver: Receiver) -> dict[str, float]:
    """The last export of the time-accounting counter: bucket -> seconds."""
    points = receiver.metric_points()[TIME].sum.data_points
    return {kv.value.string_value: p.as_double for p in points for kv in p.attributes if kv.key == BUCKET}


def test_every_second_lands_in_one_time_bucket(app: Path, receiver: Receiver) -> None:
    """Phases, loop overhead, idle time, pauses by reason and an adapter's own phase timer, in a real process: the
    buckets sum to the process's wall time and each holds what the code spent in it."""
    body = """
    import time
    import rlobs_telemetry as telemetry

    telemetry.init()
    began = time.time()
    time.sleep(0.3)                                    # starting
    for _ in range(2):
        with telemetry.loop(0):
            with telemetry.phase("sample"):
                time.sleep(0.4)
            time.sleep(0.1)                            # other: inside the loop, between phases
            with telemetry.phase("train"):
                with telemetry.train_step():
                    time.sleep(0.2)
        time.sleep(0.1)                                # idle
    with telemetry.pause("checkpoint"):
        time.sleep(0.3)
    with telemetry.pause("eval"):
        time.sleep(0.2)
    time.sleep(0.3)                                    # a framework's own timer: 0.25 s of it was its rollout
    telemetry.record_duration("sample", 250)
    telemetry.record_train_steps(1)
    print(time.time() - began)                         # the wall time since the module set up
    telemetry.finish()
    """
    run = _run(app, receiver, body)
    assert run.returncode == 0, run.stderr
    wall = float(run.stdout.split()[-1])
    got = _buckets(receiver)
    assert set(got) == {
        "sample",
        "reward",
        "train",
        "sync",
        "checkpoint",
        "evaluation",
        "other",
        "idle",
        "stalled",
        "starting",
    }
    assert sum(got.values()) == pytest.approx(wall, abs=0.1)
    expected = {
        "starting": 0.3,
        "sample": 1.05,
        "other": 0.2,
        "train": 0.4,
        "idle": 0.25,
        "checkpoint": 0.3,
        "evaluation": 0.2,
        "reward": 0.0,
        "sync": 0.0,
        "stalled": 0.0,
    }
    for bucket, seconds in expected.items():
        assert got[bucket] == pytest.approx(seconds, abs=0.08), (bucket, sorted(got.items()))


def test_time_past_the_stall_limit_is_stalled(app: Path, receiver: Receiver) -> None:
    """A first step later than the start-up limit: the time past it is stalled, not starting."""
    body = """
    import time
    import rlobs_telemetry as telemetry

    telemetry.STALL_STARTUP = 0.1                      # the profile's 30m, shortened for the test
    telemetry.init()
    time.sleep(0.5)
    telemetry.finish()
    """
    assert _run(app, receiver, body).returncode == 0
    got = _buckets(receiver)
    assert got["starting"] == pytest.approx(0.1, abs=0.03) and got["stalled"] >= 0.38, got


def test_sigterm_while_the_module_holds_its_lock_still_ends_the_process(app: Path, receiver: Receiver) -> None:
    """Written down first: a SIGTERM arriving while the training loop is inside the module (its lock held: Python
    runs the handler in that same thread) ends the process as failed, never deadlocks it. A tight loop of module
    calls puts most instants inside the lock; every one of 8 processes must end within 30 s."""
    script = app / "train.py"
    script.write_text(
        "import rlobs_telemetry as telemetry\ntelemetry.init()\nprint('go', flush=True)\n"
        "while True:\n    with telemetry.train_step(tokens=1):\n        telemetry.record_loss(0.5)\n",
        encoding="utf-8",
    )
    env = example_env(app, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}", OTEL_TRACES_EXPORTER="none")
    procs = [
        subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, text=True) for _ in range(8)
    ]
    for proc in procs:
        assert proc.stdout is not None
        proc.stdout.readline()
    time.sleep(0.5)
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    hung = []
    for proc in procs:
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            hung.append(proc.pid)
    assert hung == [] and {p.returncode for p in procs} == {128 + signal.SIGTERM}
