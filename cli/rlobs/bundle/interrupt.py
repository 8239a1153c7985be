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
AFTER, BEFORE = "interrupted after the commit: finished", "interrupted, nothing written"


def install() -> None:
    """SIGTERM handled as Ctrl-C is."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)


@contextlib.contextmanager
def blocked() -> Iterator[None]:
    """SIGINT and SIGTERM held until the block ends (nested blocks hold them until the outermost ends). A signal
    held through a block that completed is raised as KeyboardInterrupt(AFTER): the write it guarded is finished."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP)
    try:
        yield
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)  # CPython runs a held signal's handler in this call
    except KeyboardInterrupt:
        raise KeyboardInterrupt(AFTER) from None


def message(exc: BaseException) -> str:
    return AFTER if exc.args == (AFTER,) else BEFORE
