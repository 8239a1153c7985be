"""`make bench`: median wall time of `rlobs --help` and of a full render of each shipped blueprint,
against the floor `python -c 'import typer, jinja2, yaml'`, each with its ratio to the floor."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 15
WARMUP = 3
REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _median(argv: list[str], *, fresh_dir: bool = False) -> float:
    times = []
    for i in range(WARMUP + RUNS):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [a.replace("{tmp}", tmp) for a in argv] if fresh_dir else argv
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            elapsed = time.perf_counter() - start
        if i >= WARMUP:
            times.append(elapsed)
    return statistics.median(times)


def main() -> int:
    rlobs = str(BIN / "rlobs")
    floor = _median([sys.executable, "-c", "import typer, jinja2, yaml"])
    rows = [("floor: python -c 'import typer, jinja2, yaml'", floor)]
    rows.append(("rlobs --help", _median([rlobs, "--help"])))
    for bp in sorted((REPO / "blueprints").glob("*.yaml")):
        rows.append(
            (
                f"rlobs render blueprints/{bp.name}",
                _median([rlobs, "render", str(bp), "-o", "{tmp}/out"], fresh_dir=True),
            )
        )
    width = max(len(name) for name, _ in rows)
    print(f"{'command'.ljust(width)}  median ms  x floor   ({RUNS} runs after {WARMUP} warm-up)")
    for name, t in rows:
        print(f"{name.ljust(width)}  {t * 1000:9.1f}  {t / floor:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
