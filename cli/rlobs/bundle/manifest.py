"""A bundle's manifest, and what is told of a folder without rendering (so none of the rendering stack is imported)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from rlobs.bundle import cache
from rlobs.bundle.cache import sha256
from rlobs.bundle.owner import Owner
from rlobs.bundle.spec import Rendered
from rlobs.bundle.tree import Tree
from rlobs.errors import RlobsError
from rlobs.files import MIB

MANIFEST = ".rlobs-manifest.json"
JOURNAL = ".rlobs-journal.json"
STAGING = ".rlobs-staging"
UNFINISHED = "an unfinished rlobs write (rlobs finishes it)"  # why a bundle's .gitignore holds the two
# A manifest or journal lists ~100 bytes a file (~3.5 KiB a fleet cluster): 8 MiB holds a fleet of 2,000 clusters.
MAX_RECORD = 8 * MIB
LOCK_TIMEOUT = 60.0  # seconds a render waits for another one writing the same directory


def manifest_text(rendered: tuple[Rendered, ...], owner: Owner) -> str:
    files = {r.path: sha256(r.text) for r in sorted(rendered, key=lambda r: r.path)}
    body = {"generator": "rlobs", "note": "files rlobs generated here; do not edit", "owner": owner.as_dict()}
    return json.dumps({**body, "files": files}, indent=2) + "\n"


def fresh(out_dir: Path, key: str) -> tuple[str, tuple[str, ...], Owner] | None:
    """(name, generated paths, owner) when `out_dir` holds exactly the bundle of render key `key`, by this machine's
    record (rlobs.bundle.cache), never by the manifest, which anyone who commits can rewrite."""
    found = cache.recalled(out_dir)
    if found is None or found.get("key") != key:
        return None
    try:
        with Tree.open(out_dir, create=False) as tree:
            tree.lock(exclusive=False, timeout=LOCK_TIMEOUT)
            files, executable = dict(found["files"]), set(found["executable"])
            if any(tree.kind(name) != "missing" for name in (JOURNAL, STAGING)) or any(neighbours(tree)):
                return None
            for rel, wrote in [*files.items(), (MANIFEST, found["manifest"])]:
                old = tree.read(rel, MAX_RECORD) if rel == MANIFEST else tree.read(rel)
                if old is None or sha256(old) != wrote or bool(tree.stat(rel).st_mode & 0o100) != (rel in executable):
                    return None
            return str(found["name"]), tuple(sorted(files)), Owner.from_manifest(found["owner"])
    except (OSError, RlobsError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _owner_in(path: str | Path, dir_fd: int | None = None) -> Owner | None:
    """The owner the manifest at `path` records (a link is not followed); None when unreadable (still a bundle)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            return Owner.from_manifest(json.loads(fh.read(MAX_RECORD))["owner"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def enclosing(out_dir: Path) -> tuple[Path, Owner | None] | None:
    """The nearest folder above `out_dir` that holds a bundle (a manifest), and its owner."""
    for found in Path(os.path.abspath(out_dir)).parents:
        parent = found if out_dir.is_absolute() else Path(os.path.relpath(found))  # as the user named the folder
        if os.path.lexists(parent / MANIFEST):
            return parent, _owner_in(parent / MANIFEST)
    return None


def neighbours(tree: Tree) -> tuple[list[tuple[str, Owner | None]], tuple[Path, Owner | None] | None]:
    """The bundles below `tree` (bundle-relative, links not followed, .git not looked into) and the nearest above it."""
    found: list[tuple[str, Owner | None]] = []
    for top, dirs, files, fd in os.fwalk(".", dir_fd=tree.fd) if tree.fd is not None else ():
        dirs[:] = [d for d in dirs if d not in (STAGING, ".git")]
        if top != "." and (MANIFEST in files or MANIFEST in dirs):
            found.append((top[2:], _owner_in(MANIFEST, fd)))
    return sorted(found), enclosing(tree.path)


def holds_bundle(out_dir: Path) -> bool:
    """Whether `out_dir` has a manifest or an unfinished write; True when unsure."""
    try:
        tree = Tree.open(out_dir, create=False)
    except (OSError, RlobsError):
        return True
    with tree:
        return tree.fd is not None and any(tree.kind(name) != "missing" for name in (MANIFEST, JOURNAL))
