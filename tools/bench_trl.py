"""`make bench-trl`: the CPU cost of the bundle's TRL callback (and the telemetry module under it) per optimizer step.

A real GRPO run on CPU (tests/testing/trl_grpo.py: a tiny random model, no network), BENCH_STEPS optimizer steps
(default 30) with a log at every step (the costliest setting: every hook runs every step), alternately without and
with RlobsCallback for BENCH_ROUNDS rounds (default 3), the same seed each time. It checks that the losses are
identical with and without the callback, and prints:

- the callback's own CPU time per step, measured inside its hooks (thread CPU time: what the callback adds to the
  training thread, independent of other load on the machine);
- the CPU time of train() per step with and without it (median over the rounds), and their difference, which
  includes the exporter thread but also this machine's noise: a tiny model makes steps short and the ratio large.

The bundle's default export (OTLP every 30 s) goes nowhere here (OTEL_METRICS_EXPORTER=none would skip the SDK's
export work, so the periodic OTLP exporter runs against a closed local port instead).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "testing" / "trl_grpo.py"


def render_trl_app(folder: Path) -> Path:
    """The eks-jark blueprint's bundle with workload.run.system trl: its app/ has the TRL adapter."""
    text = (ROOT / "blueprints" / "eks-jark.yaml").read_text(encoding="utf-8")
    profile = folder / "trl.yaml"
    profile.write_text(text.replace("system: verl", "system: trl", 1), encoding="utf-8")
    rlobs = Path(sys.executable).parent / "rlobs"
    subprocess.run([str(rlobs), "render", str(profile), "-o", str(folder / "out")], check=True, capture_output=True)
    return folder / "out" / "app"


def run(app: Path, out: Path, steps: int, *, adapter: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RL_"))}
    env.update(
        PYTHONPATH=str(app),
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9",
        OTEL_TRACES_EXPORTER="none",
        OTEL_METRIC_EXPORT_INTERVAL="30000",
    )
    command = [sys.executable, str(SCRIPT), str(out), "--steps", str(steps), "--logging-steps", "1"]
    subprocess.run([*command] if adapter else [*command, "--no-adapter"], env=env, check=True, capture_output=True)
    result: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return result


def main() -> None:
    steps = int(os.environ.get("BENCH_STEPS", "30"))
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        app = render_trl_app(folder)
        without: list[dict[str, object]] = []
        with_: list[dict[str, object]] = []
        for _ in range(rounds):
            without.append(run(app, folder / "without.json", steps, adapter=False))
            with_.append(run(app, folder / "with.json", steps, adapter=True))
    losses = {json.dumps(r["losses"]) for r in without + with_}
    if len(losses) != 1:
        sys.exit(f"the losses differ with and without the callback: {sorted(losses)}")
    hooks = statistics.median(float(str(r["hooks_cpu"])) / steps * 1000 for r in with_)
    cpu_without = statistics.median(float(str(r["cpu"])) / steps * 1000 for r in without)
    cpu_with = statistics.median(float(str(r["cpu"])) / steps * 1000 for r in with_)
    print(f"GRPO on CPU, {steps} steps, a log every step, {rounds} rounds; losses identical with and without")
    print(f"callback CPU per step (inside its hooks):  {hooks:.3f} ms")
    print(f"train() CPU per step without the callback: {cpu_without:.1f} ms")
    print(f"train() CPU per step with the callback:    {cpu_with:.1f} ms ({cpu_with - cpu_without:+.1f} ms, noisy)")
    if hooks >= 1.0:
        sys.exit(f"over budget: {hooks:.3f} ms of CPU per optimizer step (at most 1 ms)")


if __name__ == "__main__":
    main()
