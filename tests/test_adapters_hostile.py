"""The verl tailer against a file and a state file it cannot trust: an endless line, a line that nests too deep, a
corrupt or special offset file and a poll interval no sleep() takes. It never wedges, never dies and never holds
more than a few MiB."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from testing.adapters import load_app, render_app, with_system

RECORD = json.dumps({"step": 1, "data": {"training/global_step": 1, "timing_s/step": 40.0}}).encode() + b"\n"
STEPS = "rl.train.steps"


def _child(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    """Run body in a process with the verl app on its path, exporting nothing."""
    app = render_app(tmp_path, with_system("verl"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RL_", "RLOBS_", "VERL_"))}
    env |= {"PYTHONPATH": str(app), "OTEL_METRICS_EXPORTER": "none", "OTEL_TRACES_EXPORTER": "none"}
    env |= {"RL_FINISH_LINGER_SECONDS": "0", "RLOBS_ADAPTER": ""}
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_an_endless_line_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """95 MiB with no newline: the tailer's peak memory grows by a few MiB, the line is skipped once its end comes,
    and the record after it is read."""
    log = tmp_path / "verl.jsonl"
    with log.open("wb") as f:
        f.write(b'{"step": 1, "data": {"x": "' + b"x" * (95 * 1024 * 1024))
    run = _child(
        tmp_path,
        f"""
        import resource, warnings
        import rlobs_adapter

        warnings.simplefilter("ignore")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tailer = rlobs_adapter.JsonlTailer({str(log)!r})
        assert tailer.poll() == 0 and tailer.poll() == 0  # still being written: nothing, twice
        with open({str(log)!r}, "ab") as f:
            f.write(b'"}}}}\\n' + {RECORD!r})
        assert tailer.poll() == 1, tailer.records
        assert tailer.skipped == 1, tailer.skipped
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB on Linux
        print(grown)
        """,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert int(run.stdout.split()[-1]) < 30 * 1024


def test_a_line_that_nests_too_deep_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "verl", monkeypatch)
    log = tmp_path / "verl.jsonl"
    log.write_bytes(b"[" * 200_000 + b"\n" + RECORD)
    tailer = app.adapter.JsonlTailer(str(log))
    assert tailer.poll() == 1
    assert tailer.skipped == 1 and tailer.offset == log.stat().st_size
    assert app.total(STEPS) == 1


CORRUPT = {
    "not JSON": b"offset=12",
    "nested too deep": b"[" * 100_000,
    "negative offset": json.dumps({"file": [1, 2], "offset": -5, "mapper": {"last": {}}}).encode(),
    "offset not a number": json.dumps({"file": [1, 2], "offset": "12", "mapper": {"last": {}}}).encode(),
    "mapper not a mapping": json.dumps({"file": [1, 2], "offset": 0, "mapper": [1]}).encode(),
    "a total that is not a number": json.dumps({"file": [1, 2], "offset": 0, "mapper": {"last": {"k": "x"}}}).encode(),
    "too large": b" " * (2 * 1024 * 1024),
}


@pytest.mark.parametrize("corrupt", list(CORRUPT))
def test_a_corrupt_state_file_restarts_from_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corrupt: str
) -> None:
    """What the file holds may have been counted already: the tailer goes on from its end, warned, with a new state."""
    app = load_app(tmp_path, "verl", monkeypatch)
    log = tmp_path / "verl.jsonl"
    log.write_bytes(RECORD)
    state = tmp_path / "verl.jsonl.rlobs-offset"
    state.write_bytes(CORRUPT[corrupt])
    with pytest.warns(UserWarning, match="not a valid tailer state"):
        tailer = app.adapter.JsonlTailer(str(log))
    assert tailer.poll() == 0
    with log.open("ab") as f:
        f.write(RECORD)
    assert tailer.poll() == 1
    assert app.total(STEPS) == 1
    assert json.loads(state.read_text(encoding="utf-8"))["offset"] == log.stat().st_size


def test_a_fifo_state_file_does_not_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_app(tmp_path, "verl", monkeypatch)
    log = tmp_path / "verl.jsonl"
    log.write_bytes(RECORD)
    os.mkfifo(tmp_path / "verl.jsonl.rlobs-offset")
    tailer = app.adapter.JsonlTailer(str(log))
    assert tailer.poll() == 1  # no state to trust: read as a new file


@pytest.mark.parametrize("seconds", ["1e300", "nan", "inf", "-1"])
def test_a_poll_interval_no_sleep_takes_keeps_the_tailer_alive(tmp_path: Path, seconds: str) -> None:
    log = tmp_path / "verl.jsonl"
    log.write_bytes(RECORD)
    run = _child(
        tmp_path,
        f"""
        import os, time, warnings
        import rlobs_adapter

        os.environ["RLOBS_TAIL_POLL_SECONDS"] = {seconds!r}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            thread = rlobs_adapter.start_tailer({str(log)!r})
            time.sleep(0.5)
        assert thread.is_alive()
        assert sum("RLOBS_TAIL_POLL_SECONDS" in str(w.message) for w in caught) == 1, [str(w.message) for w in caught]
        print("alive")
        """,
    )
    assert run.returncode == 0 and "alive" in run.stdout, run.stderr[-3000:]
