"""A fake RL loop that emits every rlobs signal: try the telemetry locally before wiring it into your trainer.

    pip install -r requirements.txt
    OTEL_METRICS_EXPORTER=console OTEL_TRACES_EXPORTER=console python example_rl_loop.py
    OTEL_METRICS_EXPORTER=prometheus OTEL_TRACES_EXPORTER=none python example_rl_loop.py   # then curl :9464/metrics

RL_EXAMPLE_ITERATIONS (default 5) and RL_EXAMPLE_SECONDS (per phase, default 0.05) control the length;
SIGTERM stops it after flushing telemetry (what a preempted pod gets).
"""

from __future__ import annotations

import os
import random
import time

import rlobs_telemetry as telemetry


@telemetry.run()  # an exception or a non-zero exit leaving main marks the run failed, a normal end finished
def main() -> None:
    iterations = int(os.environ.get("RL_EXAMPLE_ITERATIONS", "5"))
    pause = float(os.environ.get("RL_EXAMPLE_SECONDS", "0.05"))
    rng = random.Random(0)
    telemetry.init(gpus=8)
    for iteration in range(iterations):
        with telemetry.loop(iteration):
            with telemetry.phase("sample", sample_batch_size=64, sample_episodes=16, sample_steps=256):
                for _ in range(4):
                    with telemetry.env_step():  # one action and its observation
                        time.sleep(pause / 4)
                telemetry.record_samples(64, episodes=16)
            with telemetry.phase("reward", reward_batch_size=64, reward_sandbox="python-verifier"):
                time.sleep(pause)
                telemetry.record_reward(-0.5 + iteration * 0.1 + rng.random() * 0.05, episode_length=180 + iteration)
            with telemetry.phase("train", train_steps=2, train_batch_size=64, train_tokens=2 * 4096):
                for _ in range(2):
                    with telemetry.train_step(tokens=4096):
                        time.sleep(pause / 2)
                telemetry.record_loss(1.0 / (iteration + 1))
                telemetry.record_mfu(0.4 + rng.random() * 0.1)
            with telemetry.phase("sync", sync_bytes=14 * 2**30, sync_source="trainer", sync_destination="rollout"):
                time.sleep(pause)
        if iteration % 2 == 1:
            with telemetry.pause("checkpoint"):  # a planned wait: no stall alert, not a step interval
                time.sleep(pause)
        print(f"iteration {iteration} done", flush=True)


if __name__ == "__main__":
    main()
