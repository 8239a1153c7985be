"""Reading a profile file: capped, a regular file only. Light on imports: the render key reads it before anything
heavy is imported (rlobs.renderkey)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_PROFILE_BYTES = 1 << 20  # a profile is a few kilobytes


class NulByteError(ValueError):
    """A NUL byte in the file (YAML allows none), at 1-based `line` and `column` (counted in bytes)."""

    def __init__(self, data: bytes, offset: int) -> None:
        start = data.rfind(b"\n", 0, offset) + 1
        self.line = data.count(b"\n", 0, offset) + 1
        self.column = len(data[start:offset].decode("utf-8", "replace")) + 1
        super().__init__(f"a NUL byte at line {self.line}, column {self.column}")


def read_source(path: Path) -> bytes:
    """The file's bytes, read with a cap; only a regular file (a FIFO or /dev/zero would never end)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            what = "a folder" if stat.S_ISDIR(mode) else "a device, pipe or socket"
            raise ValueError(f"{what}, not a regular file")
        data = fh.read(MAX_PROFILE_BYTES + 1)
    if len(data) > MAX_PROFILE_BYTES:
        raise ValueError(f"a file over {MAX_PROFILE_BYTES // 1024} KiB")
    nul = data.find(b"\0")
    if nul >= 0:
        raise NulByteError(data, nul)
    return data
