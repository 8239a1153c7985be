"""The forked workers return what a serial run returns, raise a task's error, keep few results waiting, end when
their caller is killed, and a killed worker ends the run with an error."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rlobs.bundle import interrupt, pool
from rlobs.errors import RlobsError

pytestmark = pytest.mark.slow  # forks processes


def _all(task: Callable[[int], object], count: int, workers: int) -> list[tuple[int, object]]:
    with pool.run(task, count, workers) as results:
        return list(results)


def test_the_workers_return_every_result_a_serial_run_returns() -> None:
    offset = 7  # a closure: the workers inherit it by fork, nothing is pickled but the results

    def task(index: int) -> int:
        return index * index + offset

    assert sorted(_all(task, 25, 2)) == _all(task, 25, 1)


def test_a_task_error_is_raised_in_the_caller() -> None:
    def task(index: int) -> int:
        if index == 3:
            raise ValueError("planted")
        return index

    with pytest.raises(ValueError, match="planted"):
        _all(task, 10, 2)


def test_a_killed_worker_ends_the_run_with_an_error() -> None:
    def task(index: int) -> int:
        if index == 3:
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer ends it
        return index

    with pytest.raises(RlobsError, match=r"ended before they were built \(rlobs-build-\d exited with -9\)"):
        _all(task, 10, 2)


def test_a_worker_killed_while_it_sends_a_result_ends_the_run_with_an_error(tmp_path: Path) -> None:
    """Written down first: the caller read the half-sent result, got "got end of file during message" (an OSError
    the command reported as if it were about a file) instead of the error naming the worker that died."""

    def task(index: int) -> bytes:
        if index == 0:
            (tmp_path / "pid").write_text(str(os.getpid()))
            time.sleep(0.2)  # the other worker's first result reaches the caller first
        return bytes(8 << 20) if index == 1 else b""  # more than a pipe holds: its sender waits for the caller

    died = r"ended before they were built \(rlobs-build-0 exited with -9\)"
    with pytest.raises(RlobsError, match=died), pool.run(task, 8, 2) as results:
        next(results)
        time.sleep(1)  # the caller busy: rlobs-build-0 sends result 0, then half of result 1, and waits
        worker = int((tmp_path / "pid").read_text())
        os.kill(worker, signal.SIGKILL)  # as the OOM killer ends it
        while not _gone(worker):
            time.sleep(0.01)
        list(results)


def test_only_a_few_results_wait_while_the_caller_is_busy(tmp_path: Path) -> None:
    def task(index: int) -> bytes:
        (tmp_path / str(index)).touch()  # the workers share the file system
        return bytes(1 << 20)  # a bundle's files are about this size, more than a pipe holds

    with pool.run(task, 40, 2) as results:
        next(results)
        time.sleep(0.5)  # the caller busy with the first result: the workers may not run ahead unbounded
        started = len(list(tmp_path.iterdir()))
        assert started <= 2 * 2 + 1
        assert len(list(results)) == 39


def test_the_workers_collect_garbage_even_when_the_caller_did_not() -> None:
    import gc

    gc.disable()  # as rlobs.entry does for a run
    try:

        def task(_: int) -> bool:
            return gc.isenabled()

        assert [enabled for _, enabled in _all(task, 4, 2)] == [True] * 4
        assert gc.isenabled()  # many bundles: the caller collects too
    finally:
        gc.enable()


def test_nothing_the_caller_opens_in_the_block_is_in_the_workers(tmp_path: Path) -> None:
    """The workers are forked before the block starts: a descriptor (a bundle's lock) opened in it is not theirs."""
    lock = tmp_path / "lock"
    lock.write_text("")

    def task(_: int) -> list[str]:
        time.sleep(0.2)
        found = []
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(FileNotFoundError):  # the listing's own descriptor, closed by now
                found.append(os.readlink(f"/proc/self/fd/{fd}"))
        return found

    with pool.run(task, 2, 2) as results:
        fd = os.open(lock, os.O_RDONLY)
        try:
            seen = [path for _, paths in results for path in paths]
        finally:
            os.close(fd)
    assert str(lock) not in seen


def _gone(pid: int) -> bool:
    """Ended: no such process, or a zombie nobody reaped yet (an orphan's reaper may be slow, or absent)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_worker_ends_when_its_caller_is_killed() -> None:
    import select

    if not Path("/proc/self/stat").exists():
        pytest.skip("reads /proc to see whether a process still runs")
    reader, writer = os.pipe()
    middle = os.fork()
    if middle == 0:  # a render's process: it starts the workers, then is SIGKILLed while they build
        try:

            def task(_: int) -> int:
                os.write(writer, f"{os.getpid()}\n".encode())
                time.sleep(0.5)  # still building when the caller dies
                return 0

            with pool.run(task, 8, 2) as results:
                next(results)
                time.sleep(60)
        finally:
            os._exit(0)  # never back into pytest
    os.close(writer)
    workers: set[int] = set()
    deadline = time.monotonic() + 30
    while len(workers) < 2 and time.monotonic() < deadline:
        if select.select([reader], [], [], 1)[0]:
            workers |= {int(line) for line in os.read(reader, 64).split()}
    assert len(workers) == 2, workers
    os.kill(middle, signal.SIGKILL)
    os.waitpid(middle, 0)
    deadline = time.monotonic() + 10
    while not all(map(_gone, workers)) and time.monotonic() < deadline:
        time.sleep(0.02)
    os.close(reader)
    assert all(map(_gone, workers)), f"workers {workers} outlived their caller"


_SIGNAL_AT_FORK = """
import os, signal, sys, time
from rlobs.bundle import interrupt, pool

interrupt.install()  # as the console script: SIGTERM raises KeyboardInterrupt, like Ctrl-C
forks = [0]


def starting() -> None:  # in a worker, before it runs any of rlobs's code
    if forks[0] == 0:
        os.kill(os.getppid(), signal.SIGINT)  # Ctrl-C as the first worker starts
    time.sleep(0.3)  # a worker slow to start (a loaded machine): the caller's terminate() comes meanwhile


os.register_at_fork(after_in_child=starting, after_in_parent=lambda: forks.__setitem__(0, forks[0] + 1))
try:
    with pool.run(lambda index: index, 8, 2) as results:
        list(results)
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_ctrl_c_while_the_workers_start_ends_the_run_and_every_worker() -> None:
    """Written down first: Ctrl-C arriving as a worker is forked ends the run with its KeyboardInterrupt, and every
    worker ends too, however far it got in starting; no worker runs the caller's handler (a KeyboardInterrupt in a
    worker's fork hooks left it waiting on its pipe, and the caller waiting for it, for ever)."""
    import subprocess
    import sys

    try:
        done = subprocess.run(
            [sys.executable, "-c", _SIGNAL_AT_FORK], capture_output=True, text=True, timeout=30, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the run never ended: {exc.stderr!r}") from None
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


_STUCK_AS_IT_STARTS = """
import os, signal, sys, time
from rlobs.bundle import interrupt, pool

interrupt.install()
forks = [0]


def starting() -> None:  # in the first worker, before rlobs's code: SIGTERM is still held there
    if forks[0] == 0:
        print(os.getpid(), flush=True)
        time.sleep(120)  # stuck (a lock another thread held at the fork, say): terminate() cannot end it


def forked() -> None:  # in the caller
    forks[0] += 1
    if forks[0] == 1:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C as the first worker starts


os.register_at_fork(after_in_child=starting, after_in_parent=forked)
try:
    with pool.run(lambda index: index, 8, 2) as results:
        list(results)
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_ctrl_c_ends_the_run_even_with_a_worker_that_cannot_take_sigterm() -> None:
    """Written down first: a worker that does not end when terminated (stuck before it lets SIGTERM through) is
    killed; the caller waited on it for ever, and even `timeout`'s SIGTERM only moved the wait to the exit."""
    import subprocess
    import sys

    try:
        done = subprocess.run(
            [sys.executable, "-c", _STUCK_AS_IT_STARTS], capture_output=True, text=True, timeout=30, check=False
        )
    except subprocess.TimeoutExpired as exc:
        for pid in (exc.stdout or b"").split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        raise AssertionError(f"the run never ended: {exc.stderr!r}") from None
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    stuck = int(done.stdout)
    deadline = time.monotonic() + 10
    while not _gone(stuck) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(stuck), f"worker {stuck} outlived the run"


_CTRL_C_AGAIN = """
import os, signal, sys
from rlobs.bundle import interrupt, pool

interrupt.install()
caller = os.getpid()


def again(*_: object) -> None:  # a worker told to stop: Ctrl-C pressed again while the caller stops the workers
    os.kill(caller, signal.SIGINT)
    os._exit(0)


def task(index: int) -> int:
    signal.signal(signal.SIGTERM, again)
    return index


try:
    with pool.run(task, 8, 2) as results:
        next(results)  # the workers still building
        with interrupt.blocked():  # a write the block guards, Ctrl-C held through it
            os.kill(caller, signal.SIGINT)
except KeyboardInterrupt as exc:
    sys.stderr.write(interrupt.message(exc))
    sys.exit(130)
"""


def test_ctrl_c_again_while_the_workers_stop_changes_nothing() -> None:
    """Written down first: the first Ctrl-C's report stands (here: the write it waited for finished), and nothing
    else shows. A second one, raised in the caller's join, said "nothing written" of a finished write and left the
    workers not joined yet to multiprocessing's exit handler, where a third printed a traceback."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_AGAIN], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr == interrupt.AFTER
