"""Bundles built in parallel: forked worker processes that only build, each sending its results back over a pipe.

Worker k builds jobs k, k + n, k + 2n, ... of n workers, and sends each result as it is done over a pipe of its
own (multiprocessing.Pipe), whose reading end only the caller holds. The workers are forked, so they start with
everything the caller loaded (its validated profiles, its templates), and are started before the caller opens any
bundle: they hold no bundle's descriptor or lock, and write nothing. What ends a worker:
- its share is done;
- the caller is gone, however it ended (SIGKILL, the OOM killer): the pipe has no reader, the worker's next send
  fails (EPIPE), and it exits;
- the caller stops early (an error, Ctrl-C): it terminates the workers and waits for them.
A worker that dies (the OOM killer) ends its pipe, and the caller raises. A send waits for the caller to read,
so at most a pipe buffer (64 KiB) of results per worker waits in memory beyond the one being sent.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import traceback
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, cast

from rlobs.errors import RlobsError

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from rlobs.bundle.check import Checker

T = TypeVar("T")

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


def _work(task: Callable[[int], Any], indices: range, writer: Connection, readers: list[Connection]) -> None:
    """A worker: build its share and send each (index, result, None), or (index, None, error) and stop."""
    for reader in readers:
        reader.close()  # the caller's ends: with none here, the caller's end is a send's failure (EPIPE)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group; the caller handles it
    gc.enable()  # a worker builds many bundles (rlobs.entry turns the collector off for one)
    with contextlib.suppress(BrokenPipeError):  # the caller is gone: so is the need for the rest
        for index in indices:
            try:
                result = task(index)
            except Exception as exc:
                if not isinstance(exc, RlobsError):  # a bug: where it happened, for the traceback the caller prints
                    exc.add_note("".join(traceback.format_exception(exc)).rstrip())
                writer.send((index, None, exc))
                return
            writer.send((index, result, None))


@contextlib.contextmanager
def run(task: Callable[[int], T], count: int, workers: int | None = None) -> Iterator[Iterator[tuple[int, T]]]:
    """(index, task(index)) for every index below `count`, as each is done: in this process with one worker, else
    by forked workers, all running when the block starts (so nothing the block opens is in them) and stopped when
    it ends. An exception in a task is raised by the iteration."""
    workers = workers_for(count) if workers is None else workers
    gc.enable()  # many bundles: their garbage is collected (rlobs.entry turns the collector off for one)
    if workers <= 1:
        yield ((index, task(index)) for index in range(count))
        return
    import multiprocessing

    context = multiprocessing.get_context("fork")
    procs: list[multiprocessing.process.BaseProcess] = []
    readers: list[Connection] = []
    try:
        for k in range(workers):
            reader, writer = context.Pipe(duplex=False)
            readers.append(reader)
            args = (task, range(k, count, workers), writer, readers)
            procs.append(context.Process(target=_work, args=args, name=f"rlobs-build-{k}", daemon=True))
            procs[-1].start()
            writer.close()
        yield _results(procs, readers, count)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()  # stopped early: the rest of its share is not needed
        for proc in procs:
            proc.join()
        for reader in readers:
            reader.close()


def _results(procs: list[Any], readers: list[Connection], count: int) -> Iterator[tuple[int, Any]]:
    from multiprocessing.connection import wait

    pending, received = list(readers), 0
    while pending:
        for reader in cast("list[Connection]", wait(pending)):
            try:
                index, result, error = reader.recv()
            except EOFError:  # the worker is done, or died
                pending.remove(reader)
                continue
            if error is not None:
                raise error
            received += 1
            yield index, result
    if received < count:
        for proc in procs:
            proc.join()
        codes = ", ".join(f"{p.name} exited with {p.exitcode}" for p in procs if p.exitcode != 0)
        raise RlobsError(f"a process building the bundles ended before they were built ({codes}); nothing was written")
