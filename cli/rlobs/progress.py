"""A render's progress on stderr (stdout carries the results): a rich bar on a terminal, else a line per bundle."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rlobs.output import fancy, printable

MIN_BUNDLES = 2  # one bundle needs no progress display


@contextmanager
def bundles(total: int, stream: TextIO | None = None) -> Iterator[Callable[[str], None]]:
    """A function to call with each bundle's name as it is done, showing `done/total`."""
    stream = sys.stderr if stream is None else stream
    if total < MIN_BUNDLES:
        yield lambda _name: None
        return
    if not fancy(stream):
        done = itertools.count(1)
        yield lambda name: print(f"rendered {next(done)}/{total}: {printable(name)}", file=stream, flush=True)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("rendering"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )
    with Progress(*columns, console=Console(file=stream), transient=True) as bar:
        task = bar.add_task("", total=total)

        def advance(name: str) -> None:
            bar.update(task, advance=1, description=printable(name))

        yield advance
