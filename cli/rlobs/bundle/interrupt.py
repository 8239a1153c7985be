"""Ctrl-C and SIGTERM (a cancelled CI job, `timeout`, Kubernetes stopping a pod) during a write.

Both raise KeyboardInterrupt. Before a write's commit point it discards the staging, so nothing is written; from the
commit point to the end of the write (one bundle, a fleet's, or every bundle of several profiles) both are blocked,
so the write finishes and the signal is taken only then. Nothing an interrupted render does deletes what a committed
write still needs.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

_STOP = {signal.SIGINT, signal.SIGTERM}
_committed = [False]  # a write of this process passed its commit point


def install() -> None:
    """SIGTERM handled as Ctrl-C is."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)


@contextlib.contextmanager
def blocked() -> Iterator[None]:
    """SIGINT and SIGTERM held until the block ends (nested blocks hold them until the outermost ends)."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)  # a signal held meanwhile raises here


def committed() -> None:
    _committed[0] = True


def message() -> str:
    return "interrupted after the commit: finished" if _committed[0] else "interrupted, nothing written"
