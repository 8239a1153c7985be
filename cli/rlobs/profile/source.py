"""Reading a profile file, capped and a regular file only; light on imports, as rlobs.renderkey reads it first."""

from __future__ import annotations

from pathlib import Path

from rlobs.files import MAX_INPUT, read_capped


class NulByteError(ValueError):
    """A NUL byte in the file (YAML allows none), at 1-based `line` and `column` (counted in bytes)."""

    def __init__(self, data: bytes, offset: int) -> None:
        start = data.rfind(b"\n", 0, offset) + 1
        self.line = data.count(b"\n", 0, offset) + 1
        self.column = len(data[start:offset].decode("utf-8", "replace")) + 1
        super().__init__(f"a NUL byte at line {self.line}, column {self.column}")


def read_source(path: Path) -> bytes:
    data = read_capped(path, MAX_INPUT)
    nul = data.find(b"\0")
    if nul >= 0:
        raise NulByteError(data, nul)
    return data
