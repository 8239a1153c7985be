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
    if _released(before):
        raise KeyboardInterrupt(AFTER)


@contextlib.contextmanager
def held(*, drop: bool = False) -> Iterator[None]:
    """SIGINT and SIGTERM held until the block ends, then let through to raise as they would have, or with `drop`
    discarded. Inside an outer hold (blocked() around a commit) neither: the outer block decides."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP)
    try:
        yield
    finally:
        while drop and STOP.isdisjoint(before) and signal.sigtimedwait(STOP, 0) is not None:
            pass
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _released(before: set[int | signal.Signals]) -> bool:
    """The signal mask set back to `before`; True when a SIGINT or SIGTERM held meanwhile raises KeyboardInterrupt.
    Both held are taken at once: with its handler left in place, the second's KeyboardInterrupt replaced the one
    raised for the first."""
    held: list[int] = []
    raising = [s for s in STOP if signal.getsignal(s) is signal.default_int_handler]
    for sig in raising:
        signal.signal(sig, lambda number, _frame: held.append(number))
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)  # CPython runs the held signals' handlers in this call
    finally:
        for sig in raising:
            signal.signal(sig, signal.default_int_handler)
    return bool(held)


def message(exc: BaseException) -> str:
    return AFTER if exc.args == (AFTER,) else BEFORE
