"""Whole directory trees as data, for comparing a bundle directory byte for byte (links recorded, not followed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from rlobs.bundle import cache
from rlobs.bundle.manifest import MANIFEST


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


def copy_bundle(src: Path, dst: Path) -> None:
    """A copy of a folder of bundles this machine rendered, as if it had rendered them there: the copy carries the
    user cache's record of each (rlobs.bundle.cache), so a render over it deletes stale files as over the original
    (a folder from elsewhere only has its manifest's word, which keeps them)."""
    shutil.copytree(src, dst, symlinks=True)
    for manifest in [src / MANIFEST, *src.rglob(MANIFEST)]:
        found = cache.recalled(manifest.parent)
        if found is not None:
            cache.remember(dst / manifest.parent.relative_to(src), found)
