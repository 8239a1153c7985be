"""A render of many bundles shows a progress bar on a terminal and plain lines when piped, on stderr."""

from __future__ import annotations

import io

import pytest

from rlobs import progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_piped_it_prints_a_plain_line_per_bundle() -> None:
    stream = io.StringIO()
    with progress.bundles(3, stream) as advance:
        for name in ("a", "b\x1b[2J", "c"):
            advance(name)
    assert stream.getvalue() == "rendered 1/3: a\nrendered 2/3: b\\x1b[2J\nrendered 3/3: c\n"


def test_on_a_terminal_it_draws_a_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    stream = _Terminal()
    with progress.bundles(2, stream) as advance:
        advance("first")
        advance("second")
    shown = stream.getvalue()
    assert "rendering" in shown and "2/2" in shown and "\x1b[" in shown  # drawn, then cleared (transient)
    assert "rendered 1/2" not in shown


def test_one_bundle_shows_nothing() -> None:
    stream = _Terminal()
    with progress.bundles(1, stream) as advance:
        advance("only")
    assert stream.getvalue() == ""


def test_no_color_means_plain_lines_on_a_terminal_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    stream = _Terminal()
    with progress.bundles(2, stream) as advance:
        advance("a")
        advance("b")
    assert stream.getvalue() == "rendered 1/2: a\nrendered 2/2: b\n"
