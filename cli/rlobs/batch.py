"""Many profiles in one render: built in parallel, staged as each is done, committed when every one is staged.

Every profile is loaded and validated before any bundle is built (commands._load_all), so a bad profile stops the
render before anything is written. The bundles are then built (planned, rendered, parse-checked) by a process pool
sized to the cores this process may run on (os.sched_getaffinity). The pool is forked from this process after the
profiles are validated: the workers start with everything imported and read their profile from _JOBS by index,
so only the rendered files travel between processes, once.

Memory stays bounded: at most two bundles per worker are in flight, and each finished bundle is compared with its
directory and staged there (rlobs.bundle.write: its files durable in the staging folder, the bundle itself
unchanged) as soon as it arrives, then dropped; only its list of changes is kept. Only when every bundle is staged
is each one committed. Anything that goes wrong before that (a file that fails its check, a directory that refuses
the write, Ctrl-C) discards every staging folder: one bad bundle writes nothing. The output is byte for byte what
rendering the profiles one by one writes (tests/test_batch.py), and results are reported in the profiles' order.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlobs.bundle.check import Checker
    from rlobs.bundle.spec import Rendered
    from rlobs.bundle.write import Bundle, RenderKey, Staged
    from rlobs.commands import RenderResult
    from rlobs.profile.model import Profile

IN_FLIGHT_PER_WORKER = 2  # one being built, one waiting: no worker idles, and no bundle waits long in memory


@dataclass(frozen=True, slots=True)
class Job:
    path: Path  # the profile file, as given
    profile: Profile
    key: RenderKey
    out_dir: Path


# The jobs of the current render, set before the pool forks: a worker reads its profile here by index.
_JOBS: list[Job] = []
_CHECKER: list[Checker] = []  # the worker's own checker, made on its first bundle (it remembers checked text)


def cores() -> int:
    """The cores this process may run on (its CPU affinity, as a container or `taskset` sets it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def _build(index: int) -> tuple[Rendered, ...]:
    from rlobs.bundle.check import Checker
    from rlobs.pipeline import build

    if not _CHECKER:
        _CHECKER.append(Checker())
    return build(_JOBS[index].profile, _CHECKER[0])


def _worker_start() -> None:
    # Ctrl-C reaches the whole process group; the parent alone handles it (it discards the staging and stops us).
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _built(count: int, workers: int) -> Iterator[tuple[int, tuple[Rendered, ...]]]:
    """(index, files) of every job as each is built: in this process for one worker, else by a forked pool with at
    most IN_FLIGHT_PER_WORKER jobs per worker submitted at once."""
    if workers <= 1:
        for index in range(count):
            yield index, _build(index)
        return
    import multiprocessing

    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_start) as pool:
        pending: dict[Future[tuple[Rendered, ...]], int] = {}
        submitted = 0
        try:
            while submitted < count or pending:
                while submitted < count and len(pending) < workers * IN_FLIGHT_PER_WORKER:
                    pending[pool.submit(_build, submitted)] = submitted
                    submitted += 1
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=pending.__getitem__):
                    yield pending.pop(future), future.result()
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def workers_for(count: int) -> int:
    """Worker processes for `count` bundles: one per core, none beyond the bundles, and none without fork()."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(cores(), count))


def render_many(
    jobs: list[Job],
    *,
    write: bool,
    force: bool,
    diff: bool,
    advance: Callable[[str], None] = lambda _: None,
    workers: int | None = None,
) -> list[RenderResult]:
    """Build every job's bundle, plan each against its directory (all locked, in path order, for the whole render)
    and stage it as it arrives; commit every staged bundle once all are staged. `advance` is called with each
    bundle's name as it is done (the progress display)."""
    from rlobs.bundle.write import open_bundle
    from rlobs.commands import RenderResult
    from rlobs.targets import producible

    _JOBS[:] = jobs
    results: list[RenderResult | None] = [None] * len(jobs)
    try:
        with ExitStack() as stack:
            dirs = sorted({j.out_dir for j in jobs})
            bundles: dict[Path, Bundle] = {
                d: stack.enter_context(open_bundle(d, producible, write=write)) for d in dirs
            }
            staged: dict[Path, Staged | None] = {}
            try:
                for index, files in _built(len(jobs), workers_for(len(jobs)) if workers is None else workers):
                    job = jobs[index]
                    bundle = bundles[job.out_dir]
                    # --check, --diff and --dry-run report foreign or edited files; only a write refuses them.
                    changes = bundle.plan(files, force=force or not write, with_diff=diff, key=job.key)
                    if write:
                        staged[job.out_dir] = bundle.stage(files, changes, key=job.key)
                    results[index] = RenderResult(job.path, job.key.name, job.out_dir, changes)
                    advance(job.key.name)
            except BaseException:
                for out_dir in staged:
                    bundles[out_dir].discard()
                raise
            for out_dir, staging in staged.items():
                bundles[out_dir].commit(staging)
    finally:
        _JOBS.clear()
    return [r for r in results if r is not None]
