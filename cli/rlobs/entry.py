"""The console script: an up-to-date render is answered before Typer is imported (0.17 s, not 0.40 s, for EKS)."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rlobs.bundle import interrupt

if TYPE_CHECKING:
    from rlobs.bundle.request import RenderRequest


def _parse(argv: list[str]) -> tuple[list[Path], RenderRequest] | None:
    """`render PROFILE... [-o DIR] [--check] [--format text|json]`, each option once; else None (Typer reads it)."""
    if not argv or argv[0] != "render":
        return None
    options: dict[str, str] = {}
    profiles: list[Path] = []
    args = iter(argv[1:])
    for arg in args:
        name, eq, value = arg.partition("=")
        if arg == "--check":
            key = "check"
        elif arg in ("-o", "--output", "--format") or (eq and name in ("--output", "--format")):
            key = "format" if name == "--format" else "output"
            value = value if eq else next(args, "")
            if not value or value.startswith("-"):
                return None
        elif arg and not arg.startswith("-"):
            profiles.append(Path(arg))
            continue
        else:
            return None
        if key in options:
            return None
        options[key] = value
    if not profiles or options.get("format", "text") not in ("text", "json"):
        return None
    from rlobs.bundle.request import Mode, RenderRequest

    out, mode = Path(options.get("output", "out")), Mode.of(check="check" in options)
    return profiles, RenderRequest(out, mode, as_json=options.get("format") == "json")


def _up_to_date(argv: list[str]) -> int | None:
    parsed = _parse(argv)
    if parsed is None:
        return None
    from rlobs import commands

    profiles, request = parsed
    try:
        results = commands.up_to_date(profiles, request.out)
    except KeyboardInterrupt as exc:  # its only exception: any error is a None, and the full render reports it
        from rlobs import boundary

        return boundary.exit_code(exc, as_json=request.as_json)
    if results is None:
        return None
    from rlobs import output

    return output.report_render(results, request)


def _closed_pipe() -> None:
    """Exit 1 quietly, as click does for `rlobs ... | head`; stdout goes nowhere, so the last flush cannot fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(1)


def run() -> None:
    # rlobs validates its own input with its own models: no installed pydantic plugin (an entry point of group
    # `pydantic`) may see or change them. pydantic's documented switch, read whenever it builds a model.
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    # No cyclic garbage collection: ~100 collector passes over what imports and model building create were 26-34 ms
    # of a ~500 ms cold render (timed with gc.callbacks). A render of many bundles turns it back on (bundle.pool).
    gc.disable()
    interrupt.install()
    try:
        code = _up_to_date(sys.argv[1:])
        if code is None:
            from rlobs.main import run as typer_app

            typer_app()  # the Typer app ends the process
    except KeyboardInterrupt as exc:  # before the boundary is imported, or while Typer is
        sys.stderr.write(f"error: {interrupt.message(exc)}\n")
        sys.exit(130)
    except BrokenPipeError:
        _closed_pipe()
    sys.exit(code)
