"""The console script. A plain `render PROFILE... [-o DIR] [--check] [--format text|json]` or `validate PROFILE...
[--format text|json]` is run here without the CLI framework: Typer builds a pydantic adapter per parameter, which
costs more than a whole up-to-date answer (rlobs.renderkey) and about a third of a cold render. It calls the same
command functions and the same error boundary (rlobs.boundary) as the Typer app, so it prints and exits exactly as
that would. Any other command line (other flags, --help, anything unusual) goes to the Typer app (rlobs.main),
which is the CLI surface."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from rlobs.errors import RlobsError


class _Render(NamedTuple):
    profiles: list[Path]
    out: Path
    check: bool
    as_json: bool


class _Validate(NamedTuple):
    profiles: list[Path]
    as_json: bool


# The options each command answered here takes (any other goes to Typer), by their names in `_parse`.
_OPTIONS = {"render": ("output", "check", "format"), "validate": ("format",)}


def _parse(argv: list[str]) -> _Render | _Validate | None:
    """A plain render or validate in the forms Typer takes; None for anything else (other flags, --help,
    repeated options, values that look like flags), which Typer then handles."""
    if not argv or argv[0] not in _OPTIONS:
        return None
    allowed = _OPTIONS[argv[0]]
    options: dict[str, str] = {}
    profiles: list[Path] = []
    args = iter(argv[1:])
    for arg in args:
        name, eq, value = arg.partition("=")
        if arg == "--check" and "check" in allowed:
            options.setdefault("check", "")
        elif name in ("-o", "--output", "--format") and not (eq and name == "-o"):
            key = "format" if name == "--format" else "output"
            value = value if eq else next(args, "-")
            if key in options or key not in allowed or value.startswith("-"):
                return None
            options[key] = value
        elif arg.startswith("-") or not arg:
            return None
        else:
            profiles.append(Path(arg))
    if not profiles or options.get("format", "text") not in ("text", "json"):
        return None
    as_json = options.get("format") == "json"
    if argv[0] == "validate":
        return _Validate(profiles, as_json)
    return _Render(profiles, Path(options.get("output", "out")), "check" in options, as_json)


def _render(parsed: _Render) -> Callable[[], int]:
    from rlobs import commands, output, progress

    results = commands.up_to_date(parsed.profiles, parsed.out)
    if results is None:
        results = commands.render_full(
            parsed.profiles,
            parsed.out,
            write=not parsed.check,
            force=False,
            progress=None if parsed.as_json else progress.bundles,  # JSON: one document, nothing else
        )
    return lambda: output.report_render(results, as_json=parsed.as_json, check=parsed.check, diff=False, dry_run=False)


def _validate(parsed: _Validate) -> Callable[[], int]:
    from rlobs import commands, output

    results = commands.validate(parsed.profiles, None)
    warned = commands.warnings([v.profile for v in results])
    return lambda: output.report_validate(results, warned, as_json=parsed.as_json)


# Each command runs inside the error boundary and returns its report, which prints outside it, as the Typer
# commands do (rlobs.main): a report that cannot be written (a closed pipe) is not a user error.
_RUN: dict[type, Callable[..., Callable[[], int]]] = {_Render: _render, _Validate: _validate}


def _answer(argv: list[str]) -> int | None:
    """The exit code of a plain render or validate (the results or errors printed as the Typer app prints them),
    else None."""
    parsed = _parse(argv)
    if parsed is None:
        return None
    try:
        report = _RUN[type(parsed)](parsed)
    except (RlobsError, KeyboardInterrupt, OSError, ValueError) as exc:
        from rlobs import boundary

        code = boundary.exit_code(exc, as_json=parsed.as_json)
        if code is None:
            raise
        return code
    return report()


def _closed_pipe() -> None:
    """As click ends a command whose output pipe was closed (`rlobs ... | head`): quietly, exit status 1. What is
    still buffered goes nowhere, so the interpreter's last flush cannot fail again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(1)


def run() -> None:
    # No cyclic garbage collection during a run: one bundle's garbage is a few megabytes, and the collector's passes
    # over the objects that importing and building the models create cost ~15% of a cold render's CPU. A render of
    # many bundles turns it back on (rlobs.bundle.pool), where garbage grows with the number of bundles.
    gc.disable()
    try:
        code = _answer(sys.argv[1:])
    except KeyboardInterrupt:  # before the boundary is imported
        sys.exit(130)
    except BrokenPipeError:
        _closed_pipe()
    if code is not None:
        sys.exit(code)
    from rlobs.main import run as typer_app

    typer_app()
