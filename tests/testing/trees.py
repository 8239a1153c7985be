"""Whole directory trees as data, for comparing a bundle directory byte for byte (links recorded, not followed)."""

from __future__ import annotations

import os
from pathlib import Path


def snapshot(root: Path) -> dict[str, bytes | str | None]:
    """Every entry below `root`: file -> bytes (with its executable bit), folder `x/` -> None, link -> its target,
    anything else -> "special"."""
    found: dict[str, bytes | str | None] = {}
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root)
        for name in dirs:
            path = Path(folder, name)
            key = (rel / name).as_posix()
            found[key + "/"] = f"-> {os.readlink(path)}" if path.is_symlink() else None
        for name in files:
            path = Path(folder, name)
            key = (rel / name).as_posix()
            if path.is_symlink():
                found[key] = f"-> {os.readlink(path)}"
            elif not path.is_file():  # a FIFO or a socket: never opened (a FIFO would block)
                found[key] = "special"
            else:
                found[key] = path.read_bytes() + (b" [x]" if os.access(path, os.X_OK) else b"")
    return found
