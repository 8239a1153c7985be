"""The error boundary of main.py and entry.py: an exception a command raised -> what the user sees, the exit code."""

from __future__ import annotations

from rlobs import output
from rlobs.errors import Interrupted, RlobsError


def exit_code(exc: BaseException, *, as_json: bool) -> int | None:
    """Print the error and return its exit code; None for a bug, which the caller re-raises so its traceback shows."""
    if isinstance(exc, KeyboardInterrupt):  # Ctrl-C or SIGTERM (rlobs.bundle.interrupt)
        from rlobs.bundle.interrupt import message

        exc = Interrupted(message(exc))
    if isinstance(exc, OSError):  # a user's path: unreadable, unwritable, a full disk, a name too long
        where = f"{exc.filename}: " if exc.filename is not None else ""
        exc = RlobsError(f"{where}{exc.strerror or exc}")
    elif isinstance(exc, ValueError) and "null byte" in str(exc):  # pathlib refuses a path holding a NUL byte
        exc = RlobsError(f"expected a path without a NUL byte, got one ({exc})")
    if not isinstance(exc, RlobsError):
        return None
    if as_json:
        output.as_json({"errors": exc.as_dicts()})
    else:
        for line in exc.lines():
            output.error(line)
    return exc.exit_code
