"""`make bench`: every figure of the performance budget from one interleaved run, against the import floor.

Each round runs every command once, in the same order, so machine noise (other builds, other test runs) spreads
over all of them alike; the table gives the median wall time over the rounds and its ratio to the floor
`python -c 'import typer, jinja2, yaml'`. Measured:

- `rlobs --help`, piped and on a pseudo-terminal (rich help);
- a cold render of each shipped blueprint into a fresh directory;
- a no-op re-render and `--check` of an up-to-date bundle, and `validate`;
- the marginal cost of one more profile: (render of 100 profiles - render of 1) / 99, and with BENCH_1000=1 also
  (render of 1000 - render of 100) / 900, which equals it when the cost is linear;
- the marginal cost of one more fleet cluster: (render of a 100-cluster fleet - a 10-cluster fleet) / 90, and the
  same for `validate`;
- peak memory (max RSS of the process and its pool) of renders of 10 and 100 profiles (and 1000 with BENCH_1000=1).

BENCH_ROUNDS sets the number of rounds (default 5, after one warm-up round).

Every round renders into folders of its own, and nothing is deleted until the last round is over (about 90 MB a
round, 450 MB more with BENCH_1000). Deleting a round's output before the next one would bill the harness's own
deletions to the commands measured after it: on an ext4 without a journal (this machine's root filesystem), the
kernel does not reuse an inode freed in the last 5 s, or the last 300 s while its inode-table block is dirty, and
every file created scans past each such inode (fs/ext4/ialloc.c, find_inode_bit() and recently_deleted()). Measured
here, with the previous round's 13,000 files deleted just before, a render of 100 profiles spent 1.3 s in the
kernel instead of 0.2 s, 40% of all its CPU time in recently_deleted().
"""

from __future__ import annotations

import os
import platform
import pty
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
WARMUP = 1


@dataclass
class Case:
    name: str
    argv: list[str]  # "{round}" in an argument is replaced by the round's number (a fresh output directory)
    tty: bool = False
    times: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)


def _run(argv: list[str], *, tty: bool) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one run, which must exit 0; output to a pseudo-terminal or a pipe."""
    env = {k: v for k, v in os.environ.items() if not (tty and k == "NO_COLOR")}
    if tty:
        env["TERM"] = "xterm-256color"
        reader, writer = pty.openpty()
    else:
        reader, writer = os.pipe()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=writer, stderr=writer, env=env)
    os.close(writer)
    output = []
    while True:  # drain it, or the child blocks on a full buffer
        try:
            chunk = os.read(reader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        output.append(chunk)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    os.close(reader)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{b''.join(output).decode(errors='replace')}")
    return elapsed, usage.ru_maxrss


def _fleet(folder: Path, count: int) -> list[str]:
    """`count` copies of the EKS blueprint, each with its own metadata.name."""
    folder.mkdir(parents=True)
    text = (REPO / "blueprints" / "eks-jark.yaml").read_text(encoding="utf-8")
    paths = []
    for i in range(count):
        path = folder / f"p{i:04d}.yaml"
        path.write_text(re.sub(r"(?m)^  name: rl-eks$", f"  name: rl-eks-{i:04d}", text, count=1), encoding="utf-8")
        paths.append(str(path))
    return paths


def _fleet_file(folder: Path, clusters: int) -> str:
    """The example fleet with `clusters` clusters: its own five, then copies of them under new names."""
    import copy

    import yaml

    base = yaml.safe_load((REPO / "blueprints" / "fleet" / "rl-fleet.yaml").read_text(encoding="utf-8"))
    own = base["clusters"]
    base["clusters"] = [
        {**copy.deepcopy(own[i % len(own)]), "name": own[i % len(own)]["name"] + (f"-{i:03d}" if i >= len(own) else "")}
        for i in range(clusters)
    ]
    for cluster in base["clusters"][len(own) :]:
        if cluster["target"] == "eks" and "prometheus" not in cluster:  # a copy of the hub: the hub must reach it
            cluster["prometheus"] = {"url": f"https://prometheus.{cluster['name']}.rl.example.com"}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"fleet{clusters}.yaml"
    path.write_text(yaml.safe_dump(base, sort_keys=False), encoding="utf-8")
    return str(path)


def _cases(tmp: Path) -> list[Case]:
    rlobs = str(BIN / "rlobs")
    eks = str(REPO / "blueprints" / "eks-jark.yaml")
    fresh = tmp / "fresh"
    current = str(tmp / "current")
    subprocess.run([rlobs, "render", eks, "-o", current], check=True, stdout=subprocess.DEVNULL)
    sizes = (10, 100, *((1000,) if os.environ.get("BENCH_1000") else ()))
    cases = [
        Case("floor: python -c 'import typer, jinja2, yaml'", [sys.executable, "-c", "import typer, jinja2, yaml"]),
        Case("rlobs --help (piped)", [rlobs, "--help"]),
        Case("rlobs --help (terminal)", [rlobs, "--help"], tty=True),
    ]
    for bp in sorted((REPO / "blueprints").glob("*.yaml")):
        cases.append(Case(f"render {bp.stem} (cold)", [rlobs, "render", str(bp), "-o", f"{fresh}/{bp.stem}-{{round}}"]))
    cases += [
        Case("render eks-jark (no-op)", [rlobs, "render", eks, "-o", current]),
        Case("render eks-jark --check", [rlobs, "render", eks, "-o", current, "--check"]),
        Case("validate eks-jark", [rlobs, "validate", eks]),
    ]
    for n in sizes:
        paths = _fleet(tmp / f"fleet{n}", n)
        cases.append(
            Case(f"render {n} profiles (cold)", [rlobs, "render", *paths, "-o", f"{fresh}/fleet{n}-{{round}}"])
        )
    for n in (10, 100):
        fleet = _fleet_file(tmp / "fleets", n)
        cases += [
            Case(f"render fleet of {n} clusters (cold)", [rlobs, "render", fleet, "-o", f"{fresh}/f{n}-{{round}}"]),
            Case(f"validate fleet of {n} clusters", [rlobs, "validate", fleet]),
        ]
    return cases


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cases = _cases(tmp)
        for i in range(WARMUP + ROUNDS):
            for case in cases:
                elapsed, rss = _run([a.replace("{round}", str(i)) for a in case.argv], tty=case.tty)
                if i >= WARMUP:
                    case.times.append(elapsed)
                    case.rss_kib.append(rss)
            # The round's writes on disk before the next round, so no command's fsyncs wait behind the writeback of
            # the thousands of files this harness just had the others write.
            os.sync()
    med = {c.name: statistics.median(c.times) for c in cases}
    floor = med[cases[0].name]
    width = max(len(c.name) for c in cases)
    print(f"machine: {_machine()}")
    print(
        f"{'command'.ljust(width)}  median ms  x floor  peak RSS MiB   ({ROUNDS} interleaved rounds, {WARMUP} warm-up)"
    )
    for c in cases:
        t, peak = med[c.name], max(c.rss_kib) / 1024
        print(f"{c.name.ljust(width)}  {t * 1000:9.1f}  {t / floor:7.2f}  {peak:12.1f}")
    margins = [("marginal cost per profile (1 -> 100)", "render eks-jark (cold)", "render 100 profiles (cold)", 99)]
    if "render 1000 profiles (cold)" in med:
        margins.append(
            (
                "marginal cost per profile (100 -> 1000)",
                "render 100 profiles (cold)",
                "render 1000 profiles (cold)",
                900,
            )
        )
    margins += [
        (
            "marginal cost per fleet cluster, render",
            "render fleet of 10 clusters (cold)",
            "render fleet of 100 clusters (cold)",
            90,
        ),
        (
            "marginal cost per fleet cluster, validate",
            "validate fleet of 10 clusters",
            "validate fleet of 100 clusters",
            90,
        ),
    ]
    for label, small, big, extra in margins:
        marginal = (med[big] - med[small]) / extra
        print(f"{label.ljust(width)}  {marginal * 1000:9.1f}  {marginal / floor:7.2f}")
    rss = {c.name: max(c.rss_kib) for c in cases}
    big = "render 1000 profiles (cold)" if "render 1000 profiles (cold)" in rss else "render 100 profiles (cold)"
    ratio = rss[big] / rss["render 10 profiles (cold)"]
    print(f"peak memory, {big.split()[1]} profiles / 10 profiles: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
