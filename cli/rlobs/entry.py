"""The console script. A `render` or `render --check` of bundles that are already up to date is answered here,
from their render keys (rlobs.renderkey), before the CLI framework is imported: Typer builds a pydantic adapter
per parameter, which costs more than the whole answer. Any other command line, or any bundle that may differ,
goes to the Typer app (rlobs.main), which parses it the same way and does the full render."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple


class _Render(NamedTuple):
    profiles: list[Path]
    out: Path
    check: bool
    as_json: bool


def _parse(argv: list[str]) -> _Render | None:
    """`render PROFILE... [-o DIR] [--check] [--format text|json]` in the forms Typer takes; None for anything
    else (other flags, --help, repeated options, values that look like flags), which Typer then handles."""
    if not argv or argv[0] != "render":
        return None
    options: dict[str, str] = {}
    profiles: list[Path] = []
    args = iter(argv[1:])
    for arg in args:
        name, eq, value = arg.partition("=")
        if arg == "--check":
            options.setdefault("check", "")
        elif name in ("-o", "--output", "--format") and not (eq and name == "-o"):
            key = "format" if name == "--format" else "output"
            value = value if eq else next(args, "-")
            if key in options or value.startswith("-"):
                return None
            options[key] = value
        elif arg.startswith("-") or not arg:
            return None
        else:
            profiles.append(Path(arg))
    if not profiles or options.get("format", "text") not in ("text", "json"):
        return None
    return _Render(profiles, Path(options.get("output", "out")), "check" in options, options.get("format") == "json")


def _answer(argv: list[str]) -> int | None:
    """The exit code when the bundles are up to date (the results printed as `render` prints them), else None."""
    parsed = _parse(argv)
    if parsed is None:
        return None
    from rlobs import commands, output

    results = commands.up_to_date(parsed.profiles, parsed.out)
    if results is None:
        return None
    return output.report_render(results, as_json=parsed.as_json, check=parsed.check, diff=False, dry_run=False)


def run() -> None:
    try:
        code = _answer(sys.argv[1:])
    except KeyboardInterrupt:
        sys.exit(130)
    if code is not None:
        sys.exit(code)
    from rlobs.main import run as typer_app

    typer_app()
