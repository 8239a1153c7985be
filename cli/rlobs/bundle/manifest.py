"""A bundle's manifest (what rlobs generated there, for whom, from which render), and what reading it tells without
rendering: whether the bundle is exactly what a render key renders (rlobs.commands.up_to_date; this module imports
none of the rendering stack). The writer's journal and staging folder are named here: an unfinished write means a
bundle is not up to date.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlobs.bundle.owner import Owner
from rlobs.bundle.spec import Rendered
from rlobs.bundle.tree import Tree
from rlobs.errors import RlobsError
from rlobs.files import MIB

MANIFEST = ".rlobs-manifest.json"
JOURNAL = ".rlobs-journal.json"
STAGING = ".rlobs-staging"
# A manifest or journal lists ~100 bytes a file (~3.5 KiB a fleet cluster): 8 MiB holds a fleet of 2,000 clusters.
MAX_RECORD = 8 * MIB
LOCK_TIMEOUT = 60.0  # seconds a render waits for another one writing the same directory


@dataclass(frozen=True, slots=True)
class RenderKey:
    """What the manifest records of the render that wrote it: the inputs' digest (rlobs.renderkey) and the name."""

    digest: str
    name: str


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_text(rendered: tuple[Rendered, ...], key: RenderKey | None, owner: Owner) -> str:
    files = {r.path: sha256(r.text.encode()) for r in sorted(rendered, key=lambda r: r.path)}
    note = "files rlobs generated here; do not edit"
    body: dict[str, Any] = {"generator": "rlobs", "note": note, "owner": owner.as_dict(), "files": files}
    if key is not None:
        record = {"key": key.digest, "name": key.name, "executable": sorted(r.path for r in rendered if r.executable)}
        body["render"] = {**record, "seal": _seal(record, files, body["owner"])}
    return json.dumps(body, indent=2) + "\n"


def _seal(record: dict[str, Any], files: object, owner: object) -> str:
    """Binds the render record to the file list and owner it was written with: a manifest edited by hand (an
    entry added, removed or changed, another owner) no longer matches its seal, and the next render runs in full."""
    return sha256(json.dumps([record, files, owner], sort_keys=True).encode())


@contextlib.contextmanager
def _recorded(out_dir: Path, *, lock: bool = False) -> Iterator[tuple[Tree, Any] | None]:
    """`out_dir` opened (locked shared with `lock`) and its manifest as JSON, unchecked; None when either is missing
    or unreadable."""
    try:
        tree = Tree.open(out_dir, create=False)
    except (OSError, RlobsError):
        yield None
        return
    try:
        if lock:
            tree.lock(exclusive=False, timeout=LOCK_TIMEOUT)
        raw = tree.read(MANIFEST, MAX_RECORD) if tree.fd is not None else None
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (OSError, RlobsError, ValueError):
        data = None
    try:
        yield (tree, data) if data is not None else None
    finally:
        tree.close()


def fresh(out_dir: Path, key: str) -> tuple[str, tuple[str, ...], Owner] | None:
    """(name, generated paths, owner) when `out_dir` holds exactly the bundle whose render key is `key`: the manifest
    records `key` under an intact seal, no write is unfinished, and every generated file is a regular file, reached
    without a link, with the digest and executable bit rlobs wrote. Else None (the full render then reports what
    differs). Only reads, under the directory's shared lock."""
    with _recorded(out_dir, lock=True) as found:
        if found is None:
            return None
        tree, data = found
        try:
            render, files = data["render"], data["files"]
            record = {"key": render["key"], "name": render["name"], "executable": render["executable"]}
            if render["key"] != key or render["seal"] != _seal(record, files, data["owner"]):
                return None
            if any(tree.kind(name) != "missing" for name in (JOURNAL, STAGING)):
                return None
            executable = set(render["executable"])
            for rel, wrote in files.items():
                old = tree.read(rel)
                if old is None or sha256(old) != wrote or bool(tree.stat(rel).st_mode & 0o100) != (rel in executable):
                    return None
            return str(render["name"]), tuple(sorted(files)), Owner.from_manifest(data["owner"])
        except (OSError, RlobsError, ValueError, KeyError, TypeError, AttributeError):
            return None


def recorded_key(out_dir: Path) -> str | None:
    """The render key `out_dir`'s manifest records, unchecked (fresh() checks it); None when there is none."""
    with _recorded(out_dir) as found:
        try:
            key = found[1]["render"]["key"] if found is not None else None
        except (KeyError, TypeError):
            return None
    return key if isinstance(key, str) else None


def recorded_digests(out_dir: Path) -> dict[str, set[str]]:
    """Path -> the digest the manifest of `out_dir` records (unchecked: only a hint of what rlobs wrote)."""
    with _recorded(out_dir) as found:
        try:
            files = found[1]["files"] if found is not None else {}
            return {p: {d} for p, d in files.items() if isinstance(p, str) and isinstance(d, str)}
        except (KeyError, TypeError, AttributeError):
            return {}


def holds_bundle(out_dir: Path) -> bool:
    """Whether `out_dir` is a bundle folder (has a manifest or an unfinished write); True when unsure."""
    try:
        tree = Tree.open(out_dir, create=False)
    except (OSError, RlobsError):
        return True
    try:
        return tree.fd is not None and any(tree.kind(name) != "missing" for name in (MANIFEST, JOURNAL))
    finally:
        tree.close()
