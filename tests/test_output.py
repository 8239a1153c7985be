"""Colour only for people at a terminal: plain text when piped, NO_COLOR or TERM=dumb."""

from __future__ import annotations

import io

import pytest

from rlobs.output import fancy


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_gets_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    assert fancy(_Tty())


def test_pipe_no_color_and_dumb_terminal_get_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    assert not fancy(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not fancy(_Tty())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not fancy(_Tty())
