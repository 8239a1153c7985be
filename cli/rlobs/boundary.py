"""The error boundary: an exception a command raised -> the lines the user sees and the exit code.

The Typer app (main.py) and the console script's up-to-date answer (entry.py) both end here, so a render started
either way prints the same `error: ...` lines and exits with the same code."""

from __future__ import annotations

from rlobs import output
from rlobs.errors import Interrupted, RlobsError


def exit_code(exc: BaseException, *, as_json: bool) -> int | None:
    """Print what went wrong and return the exit code; None for an exception that is not the user's to fix (the
    caller re-raises it: a bug shows its traceback). One channel per format: `error: ...` lines on stderr, or with
    --format json only the problems as JSON on stdout."""
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
