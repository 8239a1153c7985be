"""Terminal output: rich on a terminal, plain text when piped or NO_COLOR is set."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from rlobs.errors import EXIT_DRIFT, EXIT_OK, OutputConflictError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rlobs.bundle.request import RenderRequest
    from rlobs.commands import RenderResult, Table, Validated
    from rlobs.errors import Problem


def fancy(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F) if c != 0x0A} | {0x9B: "\\x9b"}


def printable(text: str) -> str:
    """`text` with ECMA-48 C0 controls but newline, DEL and CSI escaped: nothing can move the cursor or forge a line."""
    return text.translate(_CONTROL)


def say(text: str = "", *, err: bool = False, style: str | None = None) -> None:
    """Print a line; styled (rich markup is escaped) only on a colour terminal."""
    stream = sys.stderr if err else sys.stdout
    text = printable(text)
    if style and fancy(stream):
        # rich is imported only when there is a terminal to colour (it costs ~40 ms at start-up).
        from rich.console import Console
        from rich.text import Text

        Console(file=stream, highlight=False, soft_wrap=True).print(Text(text, style=style))
    else:
        print(text, file=stream)


def error(message: str) -> None:
    say(f"error: {message}", err=True, style="red")


def table(rows: list[list[str]], headers: list[str], keep: frozenset[int] = frozenset({0})) -> None:
    """The `keep` columns (names people copy) are never cut: a terminal too narrow for them gets a block per row."""
    stream = sys.stdout
    widths = [max(map(len, column)) for column in zip(headers, *rows, strict=True)]
    if not fancy(stream):
        for row in [headers, *rows]:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        return
    import shutil

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=stream, width=shutil.get_terminal_size().columns, highlight=False)
    loose = [i for i in range(len(widths)) if i not in keep]
    widest = max(loose, key=lambda i: widths[i], default=None)
    floor = {i: min(widths[i], 30 if i == widest else 10) for i in loose}
    needed = sum(floor.get(i, w) for i, w in enumerate(widths)) + 2 * (len(widths) - 1)
    if needed <= console.width:
        t = Table(box=None, header_style="bold", pad_edge=False)
        for i, h in enumerate(headers):
            if i in keep:
                t.add_column(h, no_wrap=True, min_width=widths[i])
            else:
                t.add_column(h, overflow="fold")
        for row in rows:
            t.add_row(*row)
        console.print(t)
        return
    for row in rows:
        console.print(Text(row[0], style="bold"), soft_wrap=True)
        block = Table.grid(padding=(0, 2), pad_edge=True)
        block.add_column(no_wrap=True)
        block.add_column(overflow="fold")
        for h, cell in zip(headers[1:], row[1:], strict=True):
            block.add_row(h.lower(), cell)
        console.print(block)


def paragraph(text: str) -> None:
    if fancy(sys.stdout):
        import shutil
        import textwrap

        text = textwrap.fill(text, width=shutil.get_terminal_size().columns, break_on_hyphens=False)
    print(text)


def as_json(data: Any) -> None:
    print(json.dumps(data, indent=2))


def markdown_tables(tables: Iterable[Table], notes: Iterable[str]) -> None:
    for i, t in enumerate(tables):
        print(("\n" if i else "") + "| " + " | ".join(t.headers) + " |\n" + "|---" * len(t.headers) + "|")
        for row in t.rows:
            print("| " + " | ".join(f"`{c}`" if j in t.code_columns else c for j, c in enumerate(row)) + " |")
    print("\n" + "\n".join(notes))


def report_render(results: list[RenderResult], request: RenderRequest) -> int:
    """Print what `render` did or would do; exit 2 for a preview's refusal (a render raised it), 1 for --check drift."""
    if request.as_json:
        as_json([r.as_dict(request.mode) for r in results])
    else:
        report_warnings([w for r in results for w in r.warnings])
        for r in results:
            _report_text(r, request)
    if any(r.changes.refused for r in results):
        return OutputConflictError.exit_code
    return EXIT_DRIFT if request.checks and any(r.changes.changed for r in results) else EXIT_OK


def _report_text(r: RenderResult, request: RenderRequest) -> None:
    c = r.changes
    if request.with_diff and c.diff:
        sys.stdout.write(c.diff)
    verb = "" if request.writes else "would "
    for label, paths, style in (
        ("create", c.created, "green"),
        ("update", c.updated, "yellow"),
        ("delete", c.deleted, "red"),
        ("clean up", c.leftovers + c.recovered, "yellow"),
        ("finish", c.replayed, "yellow"),  # what finishing an interrupted write changes
    ):
        for p in paths:
            say(f"{verb}{label} {r.out_dir / p}", style=style)
    for refusal in c.refused:  # only a preview gets here with refusals: the same lines a render prints as errors
        say(f"would refuse: {refusal.line(r.out_dir)}", style="red")
    refused = f"would refuse ({_count(len(c.refused), 'problem')}), " if c.refused else ""
    changed = "changed" if request.writes else "would change"
    say(f"{r.name}: {refused}{len(c.changed)} {changed}, {len(c.unchanged)} unchanged in {r.out_dir}", style="bold")


def report_validate(results: list[Validated], warned: list[tuple[Problem, ...]], *, as_json: bool) -> int:
    """One verdict per file; the worst error's exit code, 0 when every file is valid (warnings never fail)."""
    verdicts = list(zip(results, warned, strict=True))
    if as_json:
        print(json.dumps([_verdict(v, ws) for v, ws in verdicts], indent=2))
    else:
        for v, ws in verdicts:
            report_warnings(list(ws))
            if v.error is None:
                say(f"{v.profile}: ok ({v.name})", style="green")
                continue
            lines = v.error.lines()
            for line in lines:
                error(line)
            say(f"{v.profile}: invalid ({_count(len(lines), 'problem')})", style="red")
    return max((v.error.exit_code for v in results if v.error is not None), default=EXIT_OK)


def _verdict(v: Validated, warnings: tuple[Problem, ...]) -> dict[str, object]:
    return {
        "profile": str(v.profile),
        "name": v.name,
        "valid": v.error is None,
        "errors": v.error.as_dicts() if v.error is not None else [],
        "warnings": [w.as_dict() for w in warnings],
    }


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def report_warnings(warnings: list[Problem]) -> None:
    for w in warnings:
        where = f"{w.file}:{w.line}:{w.column}: warning: "
        say(where + (f"{w.path}: {w.message}" if w.path else w.message), err=True, style="yellow")
