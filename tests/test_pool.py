"""The forked pool returns what a serial run returns, raises a task's error, and keeps few jobs in flight."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlobs.bundle import pool

pytestmark = pytest.mark.slow  # forks processes


def test_the_pool_returns_every_result_a_serial_run_returns() -> None:
    offset = 7  # a closure: the workers inherit it by fork, nothing is pickled but the index

    def task(index: int) -> int:
        return index * index + offset

    assert sorted(pool.run(task, 25, workers=2)) == list(pool.run(task, 25, workers=1))


def test_a_task_error_is_raised_in_the_caller() -> None:
    def task(index: int) -> int:
        if index == 3:
            raise ValueError("planted")
        return index

    with pytest.raises(ValueError, match="planted"):
        list(pool.run(task, 10, workers=2))


def test_only_a_few_jobs_are_in_flight_while_the_caller_is_busy(tmp_path: Path) -> None:
    def task(index: int) -> int:
        (tmp_path / str(index)).touch()  # the workers share the file system
        return index

    results = pool.run(task, 40, workers=2)
    next(results)
    import time

    time.sleep(0.5)  # the caller busy with the first result: the workers may not run ahead unbounded
    started = len(list(tmp_path.iterdir()))
    assert started <= 2 * pool.IN_FLIGHT_PER_WORKER + 1
    assert len(list(results)) == 39


def test_each_process_has_its_own_checker() -> None:
    import os

    parent = pool.checker()

    def task(_: int) -> tuple[int, int]:
        return os.getpid(), id(pool.checker())

    found = dict(r for _, r in pool.run(task, 6, workers=2))
    assert os.getpid() not in found and pool.checker() is parent


def test_the_workers_collect_garbage_even_when_the_caller_did_not() -> None:
    import gc

    gc.disable()  # as rlobs.entry does for a run
    try:

        def task(_: int) -> bool:
            return gc.isenabled()

        assert [enabled for _, enabled in pool.run(task, 4, workers=2)] == [True] * 4
        assert gc.isenabled()  # many bundles: the caller collects too
    finally:
        gc.enable()


def test_started_is_called_once_the_workers_run_and_before_any_result() -> None:
    import functools
    import os

    from rlobs.bundle import pool

    for workers in (1, 2):
        events: list[str] = []
        parent = os.getpid()
        for index, pid in pool.run(lambda _: os.getpid(), 4, workers, functools.partial(events.append, "started")):
            events.append(f"result {index}")
            assert (pid == parent) == (workers == 1)
        assert events[0] == "started" and events.count("started") == 1 and len(events) == 5


def _gone(pid: int) -> bool:
    """Ended: no such process, or a zombie nobody reaped yet (an orphan's reaper may be slow, or absent)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("how", ["signal", "watch"])
def test_a_worker_ends_when_its_parent_is_killed(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    import os
    import select
    import signal
    import time

    if not Path("/proc/self/stat").exists():
        pytest.skip("reads /proc to see whether a process still runs")
    if how == "watch":  # a prctl option the kernel refuses: the thread that watches the parent takes over
        monkeypatch.setattr(pool, "_PR_SET_PDEATHSIG", -1)
    reader, writer = os.pipe()
    middle = os.fork()
    if middle == 0:  # a render's process: it forks a worker, then is SIGKILLed
        try:
            parent = os.getpid()
            if os.fork() == 0:
                pool._end_with(parent)
                os.write(writer, f"{os.getpid()}\n".encode())  # armed
                time.sleep(60)  # waiting for a job that will never come
            else:
                time.sleep(60)
        finally:
            os._exit(0)  # never back into pytest
    os.close(writer)
    ready, _, _ = select.select([reader], [], [], 30)
    assert ready, "the worker never armed"
    worker = int(os.read(reader, 32))
    os.kill(middle, signal.SIGKILL)
    os.waitpid(middle, 0)
    deadline = time.monotonic() + 10
    while not _gone(worker) and time.monotonic() < deadline:
        time.sleep(0.02)
    os.close(reader)
    assert _gone(worker), f"worker {worker} outlived its parent ({how})"
