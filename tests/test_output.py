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


def test_table_keeps_name_columns_whole_and_falls_back_to_blocks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlobs import output

    monkeypatch.setattr(output, "fancy", lambda _stream: True)
    monkeypatch.setenv("COLUMNS", "40")
    name = "rl.environment.episode.length.mean"
    output.table([[name, "a long description " * 4]], ["METRIC", "DESCRIPTION"])
    table = capsys.readouterr().out
    assert name in table.split() and max(map(len, table.splitlines())) <= 40
    monkeypatch.setenv("COLUMNS", "60")  # both names side by side need 76
    output.table([[name, name.replace(".", "_") + "_total"]], ["METRIC", "SERIES"], frozenset({0, 1}))
    blocks = capsys.readouterr().out.splitlines()
    assert blocks[0].strip() == name and blocks[1].split() == ["series", name.replace(".", "_") + "_total"]
