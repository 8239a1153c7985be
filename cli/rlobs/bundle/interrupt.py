"""Ctrl-C and SIGTERM during a write: before its commit point nothing is written; after it, held till the write ends."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

STOP = {signal.SIGINT, signal.SIGTERM}
AFTER, BEFORE = "interrupted after the commit: finished", "interrupted, nothing written"


def install() -> None:
    """SIGTERM (a cancelled CI job, `timeout`, Kubernetes stopping a pod) handled as Ctrl-C is."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)


@contextlib.contextmanager
def blocked() -> Iterator[None]:
    """SIGINT and SIGTERM held until the block ends (nested blocks hold them until the outermost ends). A signal
    held through a block that completed is raised as KeyboardInterrupt(AFTER): the write it guarded is finished."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP)
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
