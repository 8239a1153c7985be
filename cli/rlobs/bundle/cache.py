"""What this machine wrote, in the user's cache: believed over a bundle's files, which anyone who commits can edit."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlobs.bundle.owner import Owner
    from rlobs.bundle.spec import Rendered


@dataclass(frozen=True, slots=True)
class RenderKey:
    """The render that wrote a bundle: its inputs' digest (rlobs.renderkey) and the bundle's name."""

    digest: str
    name: str


def root() -> Path:
    # A relative XDG_CACHE_HOME is invalid (XDG Base Directory spec): ignored, never a folder in the user's cwd.
    base = os.environ.get("XDG_CACHE_HOME", "")
    return Path(base if os.path.isabs(base) else os.path.join(os.path.expanduser("~"), ".cache"), "rlobs")


def sha256(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def _bundle_entry(out_dir: Path) -> Path:
    return root() / "bundles" / f"{sha256(os.path.abspath(out_dir))}.json"


def _journal_entry(journal: bytes) -> Path:
    return root() / "journals" / sha256(journal)


def _put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def record(rendered: tuple[Rendered, ...], key: RenderKey | None, owner: Owner, manifest: str) -> dict[str, Any]:
    """Without a render key (a fleet) the record only vouches for the files: which stale ones a later render deletes."""
    files = {r.path: sha256(r.text) for r in rendered}
    executable = sorted(r.path for r in rendered if r.executable)
    named = {"key": key.digest, "name": key.name} if key is not None else {"key": None, "name": None}
    found = {**named, "owner": owner.as_dict(), "executable": executable}
    return {**found, "files": files, "manifest": sha256(manifest)}


def remember(out_dir: Path, record: dict[str, Any]) -> None:
    """Best effort: without the record, the next render only runs in full."""
    with contextlib.suppress(OSError):
        _put(_bundle_entry(out_dir), json.dumps(record, sort_keys=True).encode())


def recalled(out_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(_bundle_entry(out_dir).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def known_digests(out_dir: Path) -> dict[str, set[str]]:
    files = (recalled(out_dir) or {}).get("files")
    return {p: {d} for p, d in files.items() if isinstance(d, str)} if isinstance(files, dict) else {}


def stage_journal(journal: bytes) -> None:
    """Only a journal recorded here is replayed. Best effort: without a writable cache a write still goes ahead (a kill
    after its commit point then needs the user to remove the journal; the refusal says so)."""
    with contextlib.suppress(OSError):
        _put(_journal_entry(journal), b"")


def staged_here(journal: bytes) -> bool:
    return _journal_entry(journal).is_file()


def forget_journal(journal: bytes) -> None:
    with contextlib.suppress(OSError):
        _journal_entry(journal).unlink()
