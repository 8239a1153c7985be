"""Ctrl-C and SIGTERM held through a write's block are raised once it ends, saying the write finished."""

from __future__ import annotations

import subprocess
import sys

from rlobs.bundle import interrupt

_BOTH_HELD = """
import os, signal, sys
from rlobs.bundle import interrupt

interrupt.install()  # as the console script: SIGTERM raises KeyboardInterrupt, like Ctrl-C
try:
    with interrupt.blocked():  # a commit: Ctrl-C pressed while the CI job is cancelled
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)
except KeyboardInterrupt as exc:
    sys.stderr.write(interrupt.message(exc))
    sys.exit(130)
"""


def test_ctrl_c_and_sigterm_both_held_through_a_block_say_it_finished() -> None:
    """Written down first: the second signal's handler ran after the first had raised KeyboardInterrupt(AFTER), and
    its plain KeyboardInterrupt replaced it: a finished write was reported as "interrupted, nothing written"."""
    done = subprocess.run([sys.executable, "-c", _BOTH_HELD], capture_output=True, text=True, timeout=30, check=False)
    assert (done.returncode, done.stderr) == (130, interrupt.AFTER)
