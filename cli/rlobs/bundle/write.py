"""The only code that touches the output directory: compare, stage, replace, prune, keep a manifest."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from rlobs.bundle.spec import Rendered
from rlobs.errors import OutputConflictError, RlobsError

MANIFEST = ".rlobs-manifest.json"
_STAGED = ".rlobs-new"


@dataclass(frozen=True, slots=True)
class Changes:
    """What a render does (or, with --check/--dry-run, would do) to the output directory."""

    created: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    diff: str = ""
    manifest_changed: bool = field(default=False, compare=False)

    @property
    def changed(self) -> tuple[str, ...]:
        return tuple(sorted(self.created + self.updated + self.deleted))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _safe_path(root: Path, rel: str) -> Path:
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts or rel != pure.as_posix():
        raise RlobsError(f"refusing to write outside the output directory: {rel!r}")
    target = root.joinpath(*pure.parts)
    resolved_root = root.resolve()
    if not target.resolve().is_relative_to(resolved_root):
        raise RlobsError(f"refusing to write through a link that leaves the output directory: {rel}")
    return target


def _read_manifest(root: Path) -> dict[str, set[str]]:
    """Generated path -> the digests it may have on disk (two while a write is in progress: old and new)."""
    path = root / MANIFEST
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        found: dict[str, set[str]] = {}
        for key in ("files", "pending"):
            entries = data.get(key, {}) if key == "pending" else data[key]
            if not isinstance(entries, dict):
                raise TypeError(f"{key} is not a mapping")
            for name, digest in entries.items():
                found.setdefault(str(name), set()).add(str(digest))
        return found
    except (ValueError, KeyError, TypeError) as exc:
        raise RlobsError(
            f"{path}: expected an rlobs manifest, got unreadable content ({exc}); remove it to start over"
        ) from None


def _manifest_text(files: dict[str, str], pending: dict[str, str] | None = None) -> str:
    body: dict[str, object] = {
        "generator": "rlobs",
        "note": "files rlobs generated here; do not edit",
        "files": dict(sorted(files.items())),
    }
    if pending:
        # Digests the files had before the write in progress: an interrupted write is not mistaken for hand edits.
        body["pending"] = dict(sorted(pending.items()))
    return json.dumps(body, indent=2) + "\n"


@dataclass(slots=True)
class _Plan:
    """What comparing the rendered files with the directory found, file by file."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # there, but not rlobs's
    edited: list[str] = field(default_factory=list)  # rlobs's, but edited since it wrote them
    diff: list[str] = field(default_factory=list)


def plan_changes(
    rendered: Iterable[Rendered], out_dir: Path, *, force: bool = False, with_diff: bool = False
) -> Changes:
    """Compare the rendered bundle with the directory; raise if a file rlobs does not own would be touched."""
    rendered = tuple(rendered)
    previous = _read_manifest(out_dir)
    found = _Plan()
    for r in rendered:
        old_text = _compare(r, out_dir, previous, found, force=force)
        if with_diff and old_text is not None:
            found.diff += _diff(old_text, r.text, f"a/{r.path}", f"b/{r.path}")
    for stale in sorted(set(previous) - {r.path for r in rendered}):
        target = _safe_path(out_dir, stale)
        if not target.is_file():
            continue
        if not force and _digest(target.read_bytes()) not in previous[stale]:
            found.edited.append(stale)
        found.deleted.append(stale)
        if with_diff:
            found.diff += _diff(target.read_text(encoding="utf-8", errors="replace"), "", f"a/{stale}", "/dev/null")
    _refuse(out_dir, found)
    new_manifest = _manifest_text({r.path: _digest(r.text.encode()) for r in rendered})
    manifest_path = out_dir / MANIFEST
    manifest_changed = not manifest_path.exists() or manifest_path.read_text(encoding="utf-8") != new_manifest
    return Changes(
        tuple(found.created),
        tuple(found.updated),
        tuple(found.deleted),
        tuple(found.unchanged),
        "".join(found.diff),
        manifest_changed,
    )


def _compare(r: Rendered, out_dir: Path, previous: dict[str, set[str]], found: _Plan, *, force: bool) -> str | None:
    """File `r` on disk against its rendering, noted in `found`; its old text where it changes, else None."""
    target = _safe_path(out_dir, r.path)
    if not target.exists():
        found.created.append(r.path)
        return ""
    if target.is_dir():
        raise OutputConflictError(f"{target}: expected a file, got a directory")
    old = target.read_bytes()
    if old == r.text.encode() and _mode_ok(target, executable=r.executable):
        found.unchanged.append(r.path)
        return None
    if not force and r.path not in previous:
        found.conflicts.append(r.path)
    elif not force and _digest(old) not in previous[r.path]:
        found.edited.append(r.path)
    found.updated.append(r.path)
    return old.decode("utf-8", errors="replace")


def _diff(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    return list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name))


def _refuse(out_dir: Path, found: _Plan) -> None:
    """Raise when the render would overwrite a file rlobs did not write, or lose a hand edit."""
    parts = []
    if found.conflicts:
        parts.append(
            "these files exist but were not generated by rlobs; refusing to overwrite them "
            "(move them away, or pass --force):\n  " + "\n  ".join(found.conflicts)
        )
    if found.edited:
        parts.append(
            "these generated files were edited since rlobs wrote them and a render would lose the edits "
            "(make the change in the profile, move the file away, or pass --force):\n  " + "\n  ".join(found.edited)
        )
    if parts:
        raise OutputConflictError(f"{out_dir}: " + "\n".join(parts))


def _mode_ok(path: Path, *, executable: bool) -> bool:
    return bool(path.stat().st_mode & 0o100) == executable


def write_tree(rendered: Iterable[Rendered], out_dir: Path, changes: Changes) -> None:
    """Apply `changes`: stage every new file first, then replace, prune stale files, write the manifest last.

    A failure while staging (disk full, permissions) leaves the previous bundle untouched.
    """
    by_path = {r.path: r for r in rendered}
    to_write = [by_path[p] for p in sorted(changes.created + changes.updated)]
    staged: list[tuple[Path, Path]] = []
    try:
        for r in to_write:
            target = _safe_path(out_dir, r.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            # mkstemp creates a new file (O_EXCL): a planted symlink at the staging name cannot redirect the write.
            fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=_STAGED)
            staged.append((Path(name), target))
            with os.fdopen(fd, "wb") as fh:
                fh.write(r.text.encode())
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(name, 0o755 if r.executable else 0o644)
    except OSError as exc:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise RlobsError(f"could not write the bundle to {out_dir}: {exc}; the previous bundle is untouched") from None
    if not (changes.manifest_changed or changes.changed):
        return
    new_files = {p: _digest(r.text.encode()) for p, r in by_path.items()}
    # Before replacing anything, the manifest owns old and new contents alike, so an interrupted render leaves a
    # directory the next render recognises as its own.
    pending = {p: d for p, ds in _read_manifest(out_dir).items() for d in sorted(ds)}
    _replace_text(out_dir / MANIFEST, _manifest_text({**pending, **new_files}, pending))
    for tmp, target in staged:
        os.replace(tmp, target)
    for stale in changes.deleted:
        target = _safe_path(out_dir, stale)
        target.unlink(missing_ok=True)
        _prune_empty_dirs(target.parent, out_dir)
    _replace_text(out_dir / MANIFEST, _manifest_text(new_files))


def _replace_text(path: Path, text: str) -> None:
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=_STAGED)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(name, path)


def _prune_empty_dirs(folder: Path, root: Path) -> None:
    root = root.resolve()
    folder = folder.resolve()
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()  # only succeeds when empty
        except OSError:
            return
        folder = folder.parent
