"""The one way rlobs reads a file it is given or reads back from a bundle, and the one way it writes a file the user
named. Light on imports: the render key reads profiles before anything heavy is imported (rlobs.renderkey).

Reading: a regular file only (a FIFO, socket or device is refused without waiting: O_NONBLOCK), with a size cap
checked on the open file before any byte is read, and at most the cap plus one byte read, so a 3 GiB or endless file
costs nothing. Writing: a temporary file from mkstemp(3) beside the target, renamed over it; an existing name
(a link included, lexists) is replaced only with --force and is never opened, so a link planted at the name is
replaced, not followed.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from rlobs.errors import RlobsError

MIB = 1 << 20
MAX_INPUT = MIB  # a profile or a fleet file: a few kilobytes


def size(n: int) -> str:
    """A byte count as people read it (1 MiB, 3.0 GiB, 512 bytes)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1024)):
        if n >= scale:
            return f"{n // scale} {unit}" if n % scale == 0 else f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def read_capped(path: str | Path, cap: int, *, dir_fd: int | None = None, follow: bool = True) -> bytes:
    """The bytes of the regular file at `path` (relative to `dir_fd` when given; a link refused unless `follow`):
    OSError when it cannot be opened, ValueError (its message says what was found) when it is no regular file or
    holds more than `cap` bytes."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            what = "a folder" if stat.S_ISDIR(found.st_mode) else "a device, pipe or socket"
            raise ValueError(f"{what}, not a regular file")
        if found.st_size > cap:
            raise ValueError(f"a file of {size(found.st_size)}, over the {size(cap)} this file may hold")
        chunks, left = [], cap + 1  # one byte more than the cap: a file that grew while read is still caught
        while left > 0:
            chunk = os.read(fd, min(left, MIB))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap:
        raise ValueError(f"a file over the {size(cap)} this file may hold")
    return data


def ensure_new(path: Path, *, force: bool) -> None:
    """Refuse a path write_file would refuse, before anything is asked or built for it."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RlobsError(f"{path}: cannot write it: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise RlobsError(f"{path}: expected a file name, got a folder")
    if not force:
        raise RlobsError(f"{path} exists: expected a new file (pass --force to overwrite it)")


def write_file(path: Path, text: str, *, force: bool) -> None:
    """Write one file the user named: a new one, or with `force` a replacement (never a folder, never half, never
    through a link: a link at the name is itself replaced)."""
    ensure_new(path, force=force)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".rlobs-tmp", dir=path.parent)
    except OSError as exc:
        raise RlobsError(f"{path}: cannot write it: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            umask = os.umask(0o022)
            os.umask(umask)
            os.fchmod(fh.fileno(), 0o666 & ~umask)  # as a new file would be (mkstemp makes it 0600)
        os.replace(tmp, path)
    except OSError as exc:
        raise RlobsError(f"{path}: cannot write it: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
