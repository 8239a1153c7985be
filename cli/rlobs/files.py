"""How rlobs reads the files it is given and writes the ones the user names; light on imports (rlobs.renderkey)."""

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
    for unit, scale in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1024)):
        if n >= scale:
            return f"{n // scale} {unit}" if n % scale == 0 else f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def read_capped(path: str | Path, cap: int, *, dir_fd: int | None = None, follow: bool = True) -> bytes:
    """OSError when `path` cannot be opened; ValueError (saying what it is) for no regular file or over `cap` bytes."""
    # O_NONBLOCK: a FIFO is refused without waiting for a writer; a 3 GiB or endless file costs at most cap + 1 bytes.
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
    """A new file, or with `force` a replacement: never a folder, never half, never through a link (it is replaced)."""
    ensure_new(path, force=force)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".rlobs-tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            umask = os.umask(0o022)
            os.umask(umask)
            os.fchmod(fh.fileno(), 0o666 & ~umask)  # as a new file would be (mkstemp makes it 0600)
        os.replace(tmp, path)
    except OSError as exc:
        raise RlobsError(f"{path}: cannot write it: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
