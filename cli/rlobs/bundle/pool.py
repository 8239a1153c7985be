"""Bundles built in parallel: a forked process pool sized to the cores, with a bounded number of jobs in flight.

The pool is forked from the caller after its inputs are loaded and validated: a worker starts with everything
imported and calls the task it inherited (a closure is fine: nothing is pickled but the job's index and its
result). At most IN_FLIGHT_PER_WORKER jobs per worker are submitted at once, so a caller that consumes each result
as it arrives holds only a few results in memory, whatever the number of jobs.
"""

from __future__ import annotations

import gc
import os
import signal
import time
from collections.abc import Callable, Generator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rlobs.bundle.check import Checker

T = TypeVar("T")

IN_FLIGHT_PER_WORKER = 2  # one being built, one waiting: no worker idles, and no result waits long in memory

_TASK: list[Callable[[int], Any]] = []  # the current task, set before the pool forks
_CHECKERS: dict[int, Checker] = {}  # pid -> that process's checker (a forked child never uses its parent's)


def cores() -> int:
    """The cores this process may run on (its CPU affinity, as a container or `taskset` sets it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def workers_for(count: int) -> int:
    """Worker processes for `count` jobs: one per core, none beyond the jobs, and none without fork()."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(cores(), count))


def checker() -> Checker:
    """This process's checker, for tasks that parse-check what they build (it remembers the text it checked)."""
    from rlobs.bundle.check import Checker

    pid = os.getpid()
    if pid not in _CHECKERS:
        _CHECKERS[pid] = Checker()
    return _CHECKERS[pid]


def _call(index: int) -> Any:
    return _TASK[0](index)


def _worker_start(parent: int) -> None:
    # Ctrl-C reaches the whole process group; the parent alone handles it (and stops the workers).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_with(parent)
    gc.enable()  # a worker builds many bundles (rlobs.entry turns the collector off for one)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_ORPHAN_POLL = 0.2  # seconds between checks for the parent, where the kernel cannot signal its death


def _end_with(parent: int) -> None:
    """End this worker when its parent ends, however it ends (SIGKILL, the OOM killer). A worker left behind
    waits forever for its next job (it holds the job queue's writing end too, so it never reads an end of file)
    and keeps the bundles' locks it inherited with their descriptors: every later render of those bundles would
    wait for the lock and fail. Linux signals the death (prctl PR_SET_PDEATHSIG; the pool forks its workers from
    the thread that runs the render, which lives as long as the parent); elsewhere a thread watches the parent."""
    try:
        import ctypes

        armed = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (ImportError, AttributeError, OSError):  # no ctypes, or no prctl: not Linux
        armed = False
    if not armed:
        import threading

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(_ORPHAN_POLL)
            os._exit(1)

        threading.Thread(target=watch, name="rlobs-orphan-watch", daemon=True).start()
    if os.getppid() != parent:  # it died before the signal was armed
        os._exit(1)


def run(
    task: Callable[[int], T], count: int, workers: int | None = None, started: Callable[[], None] = lambda: None
) -> Generator[tuple[int, T], None, None]:
    """(index, task(index)) for every index below `count`, as each is done: in this process with one worker,
    else by a forked pool. An exception in a task is raised here, and the jobs not started are cancelled.
    `started` is called once the workers run, and no process is forked after it: a caller's thread starts
    there (a thread running while a process forks is not in the child, and may hold a lock the child needs).
    The workers are forked by the first step of this generator, and end when the thread that took that step
    ends (_end_with): step it from the thread that runs the render, as every caller does."""
    workers = workers_for(count) if workers is None else workers
    gc.enable()  # many bundles: their garbage is collected (rlobs.entry turns the collector off for one)
    if workers <= 1:
        started()
        for index in range(count):
            yield index, task(index)
        return
    import multiprocessing

    _TASK[:] = [task]
    gc.freeze()  # what is loaded so far stays shared with the workers: no collector pass writes to its pages
    context = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=_worker_start, initargs=(os.getpid(),)
        ) as pool:
            pending: dict[Future[T], int] = {}
            submitted = 0
            try:
                while submitted < count or pending:
                    while submitted < count and len(pending) < workers * IN_FLIGHT_PER_WORKER:
                        pending[pool.submit(_call, submitted)] = submitted
                        submitted += 1
                        if submitted == 1:
                            started()  # the first submit forks every worker (ProcessPoolExecutor, fork)
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in sorted(done, key=pending.__getitem__):
                        yield pending.pop(future), future.result()
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        _TASK.clear()
