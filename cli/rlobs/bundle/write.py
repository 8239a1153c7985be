"""The only code that changes a bundle folder: lock it, compare, stage, commit in one step, prune.

A write stages every new file, the new manifest and a journal (the staged files to rename into place, the stale
files to delete) in `.rlobs-staging/`, then renames the journal to `.rlobs-journal.json`: that rename is the
commit point. Killed before it, the bundle is as it was and the next render removes the staging folder; killed
after it, the next render replays the journal first. --check reports an unfinished write. The directory's lock
(tree.Tree.lock) covers the whole plan-and-write, so two renders never interleave.

No fsync: the guarantee is against a killed process (SIGKILL, the OOM killer, Ctrl-C, a cancelled CI job), not a
power cut. fsync(2) of every staged file and changed folder (53 for the EKS blueprint) made writing one bundle
98 ms instead of 8 ms, and a render of 100 profiles 10.2 s instead of 5.0 s (ext4, 2 shared cores). After a power
cut the manifest's digests make the next render report any file that lost its data instead of trusting it.

A stale file is removed only if an rlobs target can produce its path, it is a regular file reached without
following any link, and its content is still exactly what rlobs wrote (the manifest's digest). The manifest also
records the folder's owner (bundle.owner); a folder holding bundles only in its immediate subfolders (`DIR/<name>/`)
is recognised by their manifests. Planning returns its refusals instead of raising them, so --check, --dry-run and
--diff report exactly what a render would refuse; write() raises them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rlobs.bundle.manifest import JOURNAL, LOCK_TIMEOUT, MANIFEST, MAX_RECORD, STAGING, RenderKey, manifest_text, sha256
from rlobs.bundle.owner import Owner, Refusal, file_refusal, layout_refusals, refusal_error
from rlobs.bundle.spec import Rendered
from rlobs.bundle.tree import MAX_FILE, Kind, Tree, parts
from rlobs.errors import RlobsError
from rlobs.files import read_capped

_STAGED_NAME = re.compile(r"[0-9]+")  # what stage() names staged files; a journal naming anything else is forged

Producible = Callable[[str], bool]  # can an rlobs target produce this bundle-relative path?
_Found = dict[str, list[str]]  # what a plan found: created, updated, deleted, unchanged, kept paths; diff lines
_Journal = tuple[list[tuple[str, str]], list[tuple[str, str]]]  # (staged name, path) renames, (path, digest) deletions


@dataclass(frozen=True, slots=True)
class Changes:
    """What a render does (or, with --check/--dry-run, would do) to the output directory."""

    created: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # no longer generated but edited by hand: left in place, dropped from the manifest
    leftovers: tuple[str, ...] = ()  # an unfinished write's journal and staging folder, still there
    diff: str = ""
    manifest_changed: bool = field(default=False, compare=False)
    recovered: tuple[str, ...] = ()  # the same, finished or undone by this render before it planned
    refused: tuple[Refusal, ...] = ()  # why a render would not write this bundle (write() raises them)
    owner: Owner | None = None  # the bundle the manifest will record

    @property
    def changed(self) -> tuple[str, ...]:
        return tuple(sorted(self.created + self.updated + self.deleted + self.leftovers + self.recovered))


@contextlib.contextmanager
def open_bundle(
    out_dir: Path, producible: Producible, *, write: bool, timeout: float = LOCK_TIMEOUT
) -> Iterator[Bundle]:
    """The bundle directory, locked until the block ends: exclusively (and recovered) to write, shared to read."""
    tree = Tree.open(out_dir, create=write)
    try:
        tree.lock(exclusive=write, timeout=timeout)
        bundle = Bundle(tree, producible)
        if write:
            bundle.recover()
        else:
            bundle.foresee()
        yield bundle
    finally:
        tree.close()


class Bundle:
    """A locked bundle directory: plan a render against it, then write it as one transaction."""

    def __init__(self, tree: Tree, producible: Producible) -> None:
        self.tree = tree
        self.producible = producible
        # Read-only: the files a committed journal will replace (bytes, executable) or delete (None), so a preview
        # plans against what the render will find once it has finished the interrupted write (foresee()).
        self._overlay: dict[str, tuple[bytes, bool] | None] = {}
        self._recovered: tuple[str, ...] = ()
        self._planned: str | None = None  # the manifest plan() found, for stage() to write
        self._staged: _Journal | None = None  # what stage() staged, until commit() or discard()

    @property
    def path(self) -> Path:
        return self.tree.path

    # -- reading -------------------------------------------------------------------------------------------------

    def _manifest(self) -> tuple[dict[str, str], Owner] | None:
        """The manifest's generated paths (-> the digest rlobs wrote) and owner; None when there is none. Entries
        no target can produce are ignored."""
        raw = self._read(MANIFEST)
        if raw is None:
            return None
        try:
            data = json.loads(raw.decode("utf-8"))
            files = {p: d for p, d in data["files"].items() if self._ours(p) and isinstance(d, str)}
            return files, Owner.from_manifest(data["owner"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise RlobsError(
                f"{self.path / MANIFEST}: expected an rlobs manifest, got unreadable content ({exc}); "
                "remove it to start over"
            ) from None

    def owner(self) -> Owner | None:
        """The bundle this folder holds (None: no manifest, so no bundle)."""
        found = self._manifest()
        return found[1] if found is not None else None

    def members(self) -> list[tuple[str, Owner | None]]:
        """The bundles in this folder's immediate subfolders when it holds none itself (DIR/<name>/ each); None for
        a member whose manifest is unreadable."""
        if self.tree.fd is None or self._read(MANIFEST) is not None:
            return []
        found: list[tuple[str, Owner | None]] = []
        for name in sorted(os.listdir(self.tree.fd)):
            rel = f"{name}/{MANIFEST}"
            if name == STAGING or self.tree.kind(rel) != "file":
                continue  # links are never followed, so a linked subfolder is not looked into
            try:
                owner: Owner | None = Owner.from_manifest(json.loads(self.tree.read(rel) or b"")["owner"])
            except (OSError, RlobsError, ValueError, KeyError, TypeError):
                owner = None
            found.append((name, owner))
        return found

    def _read(self, rel: str) -> bytes | None:
        if rel in self._overlay:
            entry = self._overlay[rel]
            return None if entry is None else entry[0]
        try:
            return self.tree.read(rel, MAX_RECORD) if rel in (MANIFEST, JOURNAL) else self.tree.read(rel)
        except OSError as exc:
            raise RlobsError(f"{self.path / rel}: cannot read it: {exc.strerror or exc}") from None

    def _ours(self, rel: object) -> bool:
        if not isinstance(rel, str):
            return False
        try:
            parts(rel)
        except RlobsError:
            return False
        return self.producible(rel)

    def leftovers(self) -> list[str]:
        """An unfinished write's journal and staging folder."""
        return [name for name in (JOURNAL, STAGING) if self.tree.kind(name) != "missing"]

    # -- planning ------------------------------------------------------------------------------------------------

    def plan(
        self,
        rendered: Iterable[Rendered],
        *,
        owner: Owner,
        force: bool = False,
        with_diff: bool = False,
        key: RenderKey | None = None,
        parent: Bundle | None = None,
    ) -> Changes:
        """Compare the rendered bundle of `owner` with the directory, and note every reason a write would refuse:
        a file rlobs does not own or a hand edit in the way, another owner (all three unless `force`), a folder
        holding several bundles, or (`parent`: the folder of a render of several profiles) a parent that is one."""
        rendered = tuple(rendered)
        previous, held = self._manifest() or ({}, None)
        found: _Found = {k: [] for k in ("created", "updated", "deleted", "unchanged", "kept", "diff")}
        refused = self._compare(rendered, previous, found, force=force, diff=with_diff)
        stale = sorted(set(previous) - {r.path for r in rendered})
        refused += self._stale(stale, previous, found, force=force, diff=with_diff)
        parent_owner = parent.owner() if parent is not None else None
        outer = (parent.path, parent_owner) if parent is not None and parent_owner is not None else None
        layout = layout_refusals(self.path, owner, held, self.members(), outer, force=force)
        self._planned = manifest_text(rendered, key, owner)
        return Changes(
            **{k: tuple(paths) for k, paths in found.items() if k != "diff"},
            leftovers=tuple(self.leftovers()),
            diff="".join(found["diff"]),
            manifest_changed=self._read(MANIFEST) != self._planned.encode(),
            recovered=self._recovered,
            refused=(*layout, *refused),
            owner=owner,
        )

    def _compare(
        self, rendered: tuple[Rendered, ...], previous: dict[str, str], found: _Found, *, force: bool, diff: bool
    ) -> list[Refusal]:
        """Each rendered file against the one on disk, noted in `found`; a file rlobs did not write or one edited
        since is refused (unless `force`)."""
        refused = []
        for r in rendered:
            old = self._read(r.path)
            if old is not None and old == r.text.encode() and self._executable(r.path) == r.executable:
                found["unchanged"].append(r.path)
                continue
            found["created" if old is None else "updated"].append(r.path)
            if old is not None and not force and r.path not in previous:
                refused.append(file_refusal("foreign", r.path))
            elif old is not None and not force and sha256(old) != previous[r.path]:
                refused.append(file_refusal("edited", r.path))
            if diff:
                found["diff"] += _diff((old or b"").decode("utf-8", "replace"), r.text, f"a/{r.path}", f"b/{r.path}")
        return refused

    def _stale(
        self, stale: list[str], previous: dict[str, str], found: _Found, *, force: bool, diff: bool
    ) -> list[Refusal]:
        """Files rlobs wrote before and no longer renders: deleted if untouched; else refused, or with `force`
        kept (and forgotten by the manifest)."""
        refused = []
        for rel in stale:
            if self._kind(rel) != "file":
                continue  # gone, or a link or folder now: not the file rlobs wrote, never followed or removed
            old = self._read(rel) or b""
            if sha256(old) == previous[rel]:
                found["deleted"].append(rel)
                if diff:
                    found["diff"] += _diff(old.decode("utf-8", "replace"), "", f"a/{rel}", "/dev/null")
            elif force:
                found["kept"].append(rel)
            else:
                refused.append(file_refusal("edited-stale", rel))
        return refused

    def _executable(self, rel: str) -> bool:
        entry = self._overlay.get(rel)
        return entry[1] if entry is not None else bool(self.tree.stat(rel).st_mode & 0o100)

    def _kind(self, rel: str) -> Kind:
        if rel in self._overlay:
            return "missing" if self._overlay[rel] is None else "file"
        return self.tree.kind(rel)

    # -- writing -------------------------------------------------------------------------------------------------

    def write(self, rendered: Iterable[Rendered], changes: Changes) -> None:
        """Write `changes`, what plan() found for `rendered`, as one transaction (stage, then commit); raise the
        plan's refusals instead, writing nothing."""
        self.stage(rendered, changes)
        self.commit()

    def stage(self, rendered: Iterable[Rendered], changes: Changes) -> None:
        """Every new file, the new manifest and the journal written to the staging folder (`changes`: what plan()
        found for `rendered`); nothing in the bundle changes until commit(), and discard() drops them. Raises the
        plan's refusals instead, writing nothing."""
        manifest, self._planned = self._planned, None
        if changes.refused:
            raise refusal_error([(self.path, changes.refused)])
        if not (changes.manifest_changed or changes.changed):
            return
        assert self.tree.fd is not None and manifest is not None  # opened to write, and planned
        by_path = {r.path: r for r in rendered}
        files = [by_path[p] for p in sorted(changes.created + changes.updated)]
        previous = (self._manifest() or ({}, None))[0]
        renames = [(str(i), r.path) for i, r in enumerate(files)]
        deletions = [(p, previous[p]) for p in changes.deleted]
        journal = {
            "generator": "rlobs",
            "note": "an rlobs write in progress; the next rlobs render finishes it",
            "replace": [{"staged": staged, "path": rel} for staged, rel in renames],
            "delete": [{"path": rel, "digest": wrote} for rel, wrote in deletions],
        }
        try:
            os.mkdir(STAGING, 0o700, dir_fd=self.tree.fd)
            self._staged = renames, deletions
            with self.tree.folder((STAGING,)) as staging:
                assert staging is not None
                for i, r in enumerate(files):
                    _write_new(staging, str(i), r.text.encode(), 0o755 if r.executable else 0o644)
                _write_new(staging, "manifest", manifest.encode(), 0o644)
                _write_new(staging, "journal", (json.dumps(journal) + "\n").encode(), 0o644)
        except OSError as exc:
            raise self._untouched(exc) from None
        except BaseException:  # Ctrl-C while staging: nothing of it stays behind
            self.discard()
            raise

    def commit(self) -> None:
        """Rename the staged journal into place (the commit point), then roll it forward; nothing when stage() had
        nothing to write."""
        if self._staged is None:
            return
        assert self.tree.fd is not None
        try:
            with self.tree.folder((STAGING,)) as staging:
                assert staging is not None  # staged
                os.replace("journal", JOURNAL, src_dir_fd=staging, dst_dir_fd=self.tree.fd)
        except OSError as exc:
            raise self._untouched(exc) from None
        journal, self._staged = self._staged, None
        self._finish(journal)

    def _untouched(self, exc: OSError) -> RlobsError:
        self.discard()
        why = exc.strerror or exc
        return RlobsError(f"could not write the bundle to {self.path}: {why}; the previous bundle is untouched")

    def discard(self) -> None:
        """Drop what stage() staged and was not committed: the bundle stays exactly as it was, and a folder opening
        it created is removed again. A committed write is never dropped: the next render finishes it."""
        self._staged = None
        if self.tree.kind(JOURNAL) == "missing":
            self._discard_staging()
            self.tree.remove_created()

    def _finish(self, journal: _Journal) -> None:
        """Roll a committed journal forward (every step can be replayed), then remove it."""
        renames, deletions = journal
        try:
            for rel, wrote in deletions:
                kind = self.tree.kind(rel)
                # Missing: a replay after a kill between a file's unlink and the removal of the folders it emptied.
                if kind == "missing" or (kind == "file" and sha256(self.tree.read(rel) or b"") == wrote):
                    self.tree.unlink(rel)  # the file, then every folder above it left empty
            with self.tree.folder((STAGING,)) as staging:
                if staging is not None:
                    present = set(os.listdir(staging))
                    moves = [(staged, rel) for staged, rel in renames if staged in present]
                    if "manifest" in present:
                        moves.append(("manifest", MANIFEST))
                    self.tree.move_all_in(staging, moves)
            self._discard_staging()
            self.tree.unlink(JOURNAL)
        except OSError as exc:
            raise RlobsError(
                f"could not finish writing the bundle to {self.path}: {exc.strerror or exc}; "
                f"{JOURNAL} records the rest, and the next render finishes it"
            ) from None

    def _discard_staging(self) -> None:
        """Remove the staging folder (its files only: rlobs puts no folders or links there)."""
        kind = self.tree.kind(STAGING)
        if kind == "missing":
            return
        if kind != "dir":
            self.tree.unlink(STAGING)
            return
        with self.tree.folder((STAGING,)) as staging:
            assert staging is not None
            for name in os.listdir(staging):
                os.unlink(name, dir_fd=staging)
        assert self.tree.fd is not None
        os.rmdir(STAGING, dir_fd=self.tree.fd)

    def recover(self) -> None:
        """Finish (journal committed) or undo (not committed) an interrupted write."""
        self._recovered = tuple(self.leftovers())
        if JOURNAL in self._recovered:
            self._finish(self._journal(self._read(JOURNAL) or b""))
            return
        try:
            self._discard_staging()
        except OSError as exc:
            raise RlobsError(f"could not clean up {self.path}: {exc.strerror or exc}") from None

    def foresee(self) -> None:
        """Read-only: what recover() will make of a committed journal, kept as an overlay the plan reads through."""
        raw = self._read(JOURNAL)
        if raw is None:
            return  # an uncommitted write is only removed: the plan sees the old bundle, as the render will
        renames, deletions = self._journal(raw)
        try:
            for rel, wrote in deletions:
                if self.tree.kind(rel) == "file" and sha256(self.tree.read(rel) or b"") == wrote:
                    self._overlay[rel] = None
            with self.tree.folder((STAGING,)) as staging:
                present = set(os.listdir(staging)) if staging is not None else set()
                for staged, rel in [*renames, ("manifest", MANIFEST)]:
                    if staged in present:
                        data = read_capped(staged, MAX_FILE, dir_fd=staging, follow=False)
                        mode = os.stat(staged, dir_fd=staging, follow_symlinks=False).st_mode
                        self._overlay[rel] = data, bool(mode & 0o100)
        except (OSError, ValueError) as exc:
            raise RlobsError(
                f"{self.path / JOURNAL}: cannot read the unfinished write: {getattr(exc, 'strerror', None) or exc}"
            ) from None

    def _journal(self, raw: bytes) -> _Journal:
        """The journal, every entry checked: it is read from disk and may have been forged."""
        try:
            data = json.loads(raw.decode("utf-8"))
            renames = [
                (op["staged"], op["path"])
                for op in data["replace"]
                if isinstance(op["staged"], str) and _STAGED_NAME.fullmatch(op["staged"]) and self._ours(op["path"])
            ]
            deletions = [(op["path"], str(op["digest"])) for op in data["delete"] if self._ours(op["path"])]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise RlobsError(
                f"{self.path / JOURNAL}: expected an rlobs journal, got unreadable content ({exc}); remove it and "
                f"{STAGING}/ to start over"
            ) from None
        # rlobs never stages a file onto a folder (a render refuses one in the way): replayed, it would fail forever.
        for _, rel in renames:
            if self.tree.kind(rel) == "dir":
                raise RlobsError(
                    f"{self.path / JOURNAL}: expected entries onto files, got one onto the folder {rel}; remove "
                    f"{JOURNAL} and {STAGING}/ to start over"
                )
        return renames, deletions


def _write_new(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    """A new file (O_EXCL, so nothing planted at the name is followed)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _diff(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    import difflib  # only --diff needs it; its import compiles regular expressions

    return list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name))
