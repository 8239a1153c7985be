"""The only code that changes the output directory: lock it, compare, stage, switch in one committed step, prune.

A write is a transaction. Every new file and the new manifest are staged in `.rlobs-staging/`, then
`.rlobs-journal.json` is renamed into place: that rename is the commit point. Before it, an interrupted render left
the old bundle untouched and the next render removes the staging folder (roll back); after it, the next render
replays the journal (roll forward: renames and deletions are idempotent) before it looks at anything else. So after
a SIGKILL at any instant the directory holds exactly the old or exactly the new bundle once the next render starts,
and --check reports an unfinished transaction as drift.

Durability (a power cut, not only a killed process): the journal must never reach the disk before the files it
names, or a roll forward would rename empty or partial files into place. So the staged files and the new manifest
are written without a flush each, then one syncfs(2) of the staging folder's filesystem puts all of them on disk,
and only then is the journal written, fsync'ed, renamed into place and the directory fsync'ed: the commit point is
durable after the files it commits. One syncfs instead of an fsync per file (37 for the EKS blueprint) is the same
guarantee at a fraction of the cost (~4 ms instead of ~15 ms here); where there is no syncfs, every file is
fsync'ed as before. The roll forward is renames and unlinks, fsync'ed as a whole at its end: replayed from the
durable journal if a crash loses any of them. The directory's lock (tree.Tree.lock) covers the whole
plan-and-write, so two renders never interleave.

The manifest is not a licence to delete: a file is removed only if an rlobs target can produce its path, it is a
regular file reached without following any link, and its content is still exactly what rlobs wrote.

The manifest also records the folder's owner (bundle.owner): another profile or fleet is refused unless --force.
A folder whose subfolders hold bundles and that holds none itself (the layout of a render of several profiles,
`DIR/<name>/`) is recognised by scanning its immediate subfolders for manifests: that needs no file of its own
that could go stale or be missing (a layout made by hand with `-o DIR/a` and `-o DIR/b`, or by an older rlobs,
is recognised too), and costs one directory listing. Planning never raises for these refusals: it returns them,
so --check, --dry-run and --diff report exactly what a render would refuse; write() raises them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlobs.bundle.owner import Owner, Refusal, bundle_refusal, file_refusal, owner_refusal, parent_refusal
from rlobs.bundle.spec import Rendered
from rlobs.bundle.tree import Kind, Tree, parts
from rlobs.errors import OutputConflictError, RlobsError

MANIFEST = ".rlobs-manifest.json"
JOURNAL = ".rlobs-journal.json"
STAGING = ".rlobs-staging"
# Staging files of rlobs versions before the journal: `.<name>.<random>.rlobs-new` beside each file.
_LEGACY = re.compile(r"\..+\.rlobs-new\Z")
_HEX = re.compile(r"[0-9a-f]{64}\Z")
# The names files are staged under: `N` by stage(), `pN` by prestage(); a journal naming anything else is forged.
_STAGED_NAME = re.compile(r"p?[0-9]+")
LOCK_TIMEOUT = 60.0  # seconds a render waits for another one writing the same directory

Producible = Callable[[str], bool]  # can an rlobs target produce this bundle-relative path?


@dataclass(frozen=True, slots=True)
class RenderKey:
    """What the manifest records of the render that wrote it: the inputs' digest (rlobs.renderkey) and the name."""

    digest: str
    name: str


@dataclass(frozen=True, slots=True)
class Changes:
    """What a render does (or, with --check/--dry-run, would do) to the output directory."""

    created: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # no longer generated but edited by hand: left in place, dropped from the manifest
    leftovers: tuple[str, ...] = ()  # an unfinished write's journal and staging files, still there
    diff: str = ""
    manifest_changed: bool = field(default=False, compare=False)
    recovered: tuple[str, ...] = ()  # the same, finished or undone by this render before it planned
    refused: tuple[Refusal, ...] = ()  # why a render would not write this bundle (write() raises them)
    owner: Owner | None = None  # the bundle the manifest will record

    @property
    def changed(self) -> tuple[str, ...]:
        return tuple(sorted(self.created + self.updated + self.deleted + self.leftovers + self.recovered))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


@dataclass(slots=True)
class _Plan:
    """What comparing the rendered files with the directory found, file by file."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # there, but not rlobs's
    edited: list[str] = field(default_factory=list)  # rlobs's, but edited since it wrote them
    edited_stale: list[str] = field(default_factory=list)  # the same, and no longer rendered
    diff: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Staged:
    """A write staged in a bundle's staging folder and not committed yet (Bundle.stage, Bundle.commit). `durable`:
    its files and journal are on disk; a stage that left that to its caller is committed by commit_all()."""

    journal: dict[str, Any]
    durable: bool = True


class Bundle:
    """A locked bundle directory: plan a render against it, then write it as one transaction."""

    def __init__(self, tree: Tree, producible: Producible) -> None:
        self.tree = tree
        self.producible = producible
        # Read-only: the files a committed journal will replace (bytes, executable) or delete (None), so a preview
        # plans against what the render will find once it has finished the interrupted write (foresee()).
        self._overlay: dict[str, tuple[bytes, bool] | None] = {}
        self._recovered: tuple[str, ...] = ()
        self._prestaged: dict[str, tuple[str, str, bool]] = {}  # path -> (staged name, text, executable)

    @property
    def path(self) -> Path:
        return self.tree.path

    # -- reading -------------------------------------------------------------------------------------------------

    def manifest(self) -> dict[str, set[str]]:
        """Generated path -> the digests rlobs wrote there; entries no target can produce are ignored."""
        raw = self._read_meta(MANIFEST)
        if raw is None:
            return {}
        try:
            data = json.loads(raw.decode("utf-8"))
            found: dict[str, set[str]] = {}
            # `pending` is written by rlobs versions before the journal, while a write was in progress.
            for key in ("files", "pending"):
                entries = data.get(key, {}) if key == "pending" else data[key]
                if not isinstance(entries, dict):
                    raise TypeError(f"{key} is not a mapping")
                for name, digest in entries.items():
                    if self._ours(name) and isinstance(digest, str):
                        found.setdefault(name, set()).add(digest)
            return found
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise RlobsError(
                f"{self.path / MANIFEST}: expected an rlobs manifest, got unreadable content ({exc}); "
                "remove it to start over"
            ) from None

    def owner(self) -> Owner | None:
        """The bundle this folder holds (None: no manifest, so no bundle)."""
        raw = self._read_meta(MANIFEST)
        if raw is None:
            return None
        self.manifest()  # an unreadable manifest is one error
        data = json.loads(raw.decode("utf-8"))
        return Owner.from_manifest(data) if isinstance(data, dict) else Owner("", "")

    def members(self) -> list[tuple[str, Owner]]:
        """The bundles in this folder's immediate subfolders when it holds none itself (DIR/<name>/ each)."""
        if self.tree.fd is None or self._read_meta(MANIFEST) is not None:
            return []
        found = []
        for name in sorted(os.listdir(self.tree.fd)):
            rel = f"{name}/{MANIFEST}"
            if name == STAGING or self.tree.kind(rel) != "file":
                continue  # links are never followed, so a linked subfolder is not looked into
            try:
                data = json.loads((self.tree.read(rel) or b"").decode("utf-8"))
                owner = Owner.from_manifest(data) if isinstance(data, dict) else Owner("", "")
            except (OSError, RlobsError, ValueError):
                owner = Owner("", "")
            found.append((name, owner))
        return found

    def _read_meta(self, name: str) -> bytes | None:
        if name in self._overlay:
            entry = self._overlay[name]
            return None if entry is None else entry[0]
        try:
            return self.tree.read(name)
        except OSError as exc:
            raise RlobsError(f"{self.path / name}: cannot read it: {exc.strerror or exc}") from None

    def _ours(self, rel: object) -> bool:
        if not isinstance(rel, str):
            return False
        try:
            parts(rel)
        except RlobsError:
            return False
        return self.producible(rel)

    def leftovers(self, paths: Iterable[str]) -> list[str]:
        """An unfinished write's files: the journal, the staging folder, old-style staging files beside `paths`."""
        found = [name for name in (JOURNAL, STAGING) if self.tree.kind(name) != "missing"]
        folders = {tuple(parts(p)[:-1]) for p in paths}
        for folder in sorted(folders):
            try:
                with self.tree.folder(folder) as fd:
                    names = os.listdir(fd) if fd is not None else []
            except OutputConflictError:  # a link or a file on the way: nothing of rlobs's can be there
                continue
            found += ["/".join((*folder, n)) for n in sorted(names) if _LEGACY.match(n)]
        return found

    # -- planning ------------------------------------------------------------------------------------------------

    def plan(
        self,
        rendered: Iterable[Rendered],
        *,
        owner: Owner | None = None,
        force: bool = False,
        with_diff: bool = False,
        key: RenderKey | None = None,
        parent: Bundle | None = None,
    ) -> Changes:
        """Compare the rendered bundle of `owner` with the directory, and note every reason a write would refuse:
        a file rlobs does not own or a hand edit in the way, another owner (all three unless `force`), a folder
        holding several bundles, or (`parent`: the folder of a render of several profiles) a parent that is one."""
        rendered = tuple(rendered)
        previous = self.manifest()
        found = _Plan()
        for r in rendered:
            old_text = self._compare(r, previous, found, force=force)
            if with_diff and old_text is not None:
                found.diff += _diff(old_text, r.text, f"a/{r.path}", f"b/{r.path}")
        for stale in sorted(set(previous) - {r.path for r in rendered}):
            self._stale(stale, previous[stale], found, force=force, with_diff=with_diff)
        new_manifest = _manifest_of(rendered, key, owner)
        leftovers = self.leftovers([*(r.path for r in rendered), *previous])
        return Changes(
            tuple(found.created),
            tuple(found.updated),
            tuple(found.deleted),
            tuple(found.unchanged),
            tuple(found.kept),
            tuple(leftovers),
            "".join(found.diff),
            self._read_meta(MANIFEST) != new_manifest.encode(),
            self._recovered,
            tuple(self._refusals(found, owner, parent, force=force)),
            owner,
        )

    def _refusals(self, found: _Plan, owner: Owner | None, parent: Bundle | None, *, force: bool) -> list[Refusal]:
        refused = []
        held = parent.owner() if parent is not None else None
        if held is not None and parent is not None:
            refused.append(bundle_refusal(parent.path, held))
        members = self.members()
        if members:  # never with --force: the bundles beside would be mixed with this one
            refused.append(parent_refusal(self.path, members, owner))
        previous = self.owner()
        if not force and owner is not None and previous is not None and not previous.same(owner):
            refused.append(owner_refusal(previous, owner))
        refused += [file_refusal("foreign", p) for p in found.conflicts]
        refused += [file_refusal("edited", p) for p in found.edited]
        refused += [file_refusal("edited-stale", p) for p in found.edited_stale]
        return refused

    def _compare(self, r: Rendered, previous: dict[str, set[str]], found: _Plan, *, force: bool) -> str | None:
        """File `r` on disk against its rendering, noted in `found`; its old text where it changes, else None."""
        old = self._read(r.path)
        if old is None:
            found.created.append(r.path)
            return ""
        if old == r.text.encode() and self._mode_ok(r):
            found.unchanged.append(r.path)
            return None
        if not force and r.path not in previous:
            found.conflicts.append(r.path)
        elif not force and _digest(old) not in previous[r.path]:
            found.edited.append(r.path)
        found.updated.append(r.path)
        return old.decode("utf-8", errors="replace")

    def _read(self, rel: str) -> bytes | None:
        return self._read_meta(rel)

    def _mode_ok(self, r: Rendered) -> bool:
        entry = self._overlay.get(r.path)
        executable = entry[1] if entry is not None else bool(self.tree.stat(r.path).st_mode & 0o100)
        return executable == r.executable

    def _kind(self, rel: str) -> Kind:
        if rel in self._overlay:
            return "missing" if self._overlay[rel] is None else "file"
        return self.tree.kind(rel)

    def _stale(self, rel: str, digests: set[str], found: _Plan, *, force: bool, with_diff: bool) -> None:
        """A file rlobs wrote before and no longer renders: deleted if untouched, else kept (or refused)."""
        if self._kind(rel) != "file":
            return  # gone, or a link or folder now: not the file rlobs wrote, never followed or removed
        old = self._read(rel) or b""
        if _digest(old) not in digests:
            (found.kept if force else found.edited_stale).append(rel)
            return
        found.deleted.append(rel)
        if with_diff:
            found.diff += _diff(old.decode("utf-8", errors="replace"), "", f"a/{rel}", "/dev/null")

    # -- writing -------------------------------------------------------------------------------------------------

    def write(self, rendered: Iterable[Rendered], changes: Changes, *, key: RenderKey | None = None) -> None:
        """Apply `changes` as one transaction: stage everything, commit the journal, then roll it forward; raise
        the refusals the plan found instead, before anything is written."""
        if changes.refused:
            raise refusal_error([(self.path, changes)])
        self.commit(self.stage(rendered, changes, key=key))

    def commit(self, staged: Staged | None) -> None:
        """Commit what stage() staged (nothing when it had nothing to do): the journal, then its roll forward."""
        if staged is not None:
            if not staged.durable:
                raise ValueError("a stage that deferred its sync is committed by commit_all()")
            self._commit()
            self._finish(staged.journal)

    def discard(self) -> None:
        """Drop what stage() staged and was not committed: the bundle stays exactly as it was, and a folder opening
        it created is removed again."""
        self._discard_staging()
        self.tree.remove_created()

    def stage(
        self, rendered: Iterable[Rendered], changes: Changes, *, key: RenderKey | None = None, durable: bool = True
    ) -> Staged | None:
        """Every new file and the new manifest, durable in the staging folder; nothing in the bundle changes until
        commit(). None when there is nothing to write. `durable=False` leaves the flush to commit_all(), which
        syncs the filesystem once for many staged bundles (where there is no syncfs, files are flushed here)."""
        if not (changes.manifest_changed or changes.changed):
            return None
        rendered = tuple(rendered)
        by_path = {r.path: r for r in rendered}
        to_write = [by_path[p] for p in sorted(changes.created + changes.updated)]
        manifest = _manifest_of(rendered, key, changes.owner)
        try:
            deferred = not durable and _syncfs() is not None
            return Staged(self._stage(to_write, manifest, changes.deleted, deferred=deferred), durable=not deferred)
        except OSError as exc:
            self._discard_staging()
            raise RlobsError(
                f"could not write the bundle to {self.path}: {exc.strerror or exc}; the previous bundle is untouched"
            ) from None

    def _commit(self, *, sync: bool = True) -> None:
        """Rename the staged journal into place: the commit point (module docstring); durable when this returns
        unless `sync` is false (commit_all() then flushes many commit points at once)."""
        try:
            with self.tree.folder((STAGING,)) as staging:
                assert staging is not None and self.tree.fd is not None
                os.replace("journal", JOURNAL, src_dir_fd=staging, dst_dir_fd=self.tree.fd)
            if sync:
                self.tree.sync()
        except OSError as exc:
            self._discard_staging()
            raise RlobsError(
                f"could not write the bundle to {self.path}: {exc.strerror or exc}; the previous bundle is untouched"
            ) from None

    def prestage(self, rendered: Iterable[Rendered]) -> None:
        """Write ahead into the staging folder the files of `rendered` that differ from the directory, before the
        plan of the whole bundle (a fleet's clusters, each staged as it is built while the others still build,
        so creating the files overlaps the building). stage() then writes only what is not staged yet; what the
        plan refuses is discarded with the rest. Nothing in the bundle changes, as with stage()."""
        assert self.tree.fd is not None  # opened to write
        # Unchanged files are not staged: the plan will say so, and stage() writes nothing for them.
        changed = [r for r in rendered if not (self._read(r.path) == r.text.encode() and self._mode_ok(r))]
        if not changed:
            return  # and no staging folder is made: a render that changes nothing leaves none behind
        try:
            if not self._prestaged:
                self._discard_staging()
                os.mkdir(STAGING, 0o700, dir_fd=self.tree.fd)
            with self.tree.folder((STAGING,)) as staging:
                assert staging is not None
                sync = _syncfs() is None
                for r in changed:
                    name = f"p{len(self._prestaged)}"
                    _write_new(staging, name, r.text.encode(), 0o755 if r.executable else 0o644, sync=sync)
                    self._prestaged[r.path] = (name, r.text, r.executable)
        except OSError as exc:
            self._prestaged.clear()
            self._discard_staging()
            raise RlobsError(
                f"could not write the bundle to {self.path}: {exc.strerror or exc}; the previous bundle is untouched"
            ) from None

    def _staged_name(self, r: Rendered) -> str | None:
        """The name `r` was prestaged under with this very text and mode, else None (stage() writes it)."""
        found = self._prestaged.get(r.path)
        if found is None or found[2] != r.executable or found[1] != r.text:  # the same str object: no compare
            return None
        return found[0]

    def _stage(
        self, files: list[Rendered], manifest: str, deleted: tuple[str, ...], *, deferred: bool = False
    ) -> dict[str, Any]:
        """Every new file, the manifest and the journal in the staging folder (commit() renames the journal);
        flushed to disk unless `deferred` (then commit_all() syncs the filesystem before any journal is renamed).
        Files prestage() wrote with the same text are named, not written again."""
        assert self.tree.fd is not None  # opened to write
        if not self._prestaged:
            self._discard_staging()
            os.mkdir(STAGING, 0o700, dir_fd=self.tree.fd)
        old = self.manifest()
        staged = [self._staged_name(r) for r in files]
        journal: dict[str, Any] = {
            "generator": "rlobs",
            "note": "an rlobs write in progress; the next rlobs render finishes it",
            "replace": [{"staged": staged[i] or str(i), "path": r.path} for i, r in enumerate(files)],
            "delete": [{"path": p, "digests": sorted(old.get(p, ()))} for p in deleted],
        }
        with self.tree.folder((STAGING,)) as staging, _behind(self, staged.count(None)):
            assert staging is not None
            syncfs = _syncfs()
            for i, r in enumerate(files):
                if staged[i] is not None:
                    continue
                _write_new(staging, str(i), r.text.encode(), 0o755 if r.executable else 0o644, sync=syncfs is None)
            _write_new(staging, "manifest", manifest.encode(), 0o644, sync=syncfs is None)
            if deferred:
                _write_new(staging, "journal", (json.dumps(journal, indent=2) + "\n").encode(), 0o644, sync=False)
                return journal
            if syncfs is not None:
                syncfs(staging)  # every staged file on disk before the journal that names them (module docstring)
            _write_new(staging, "journal", (json.dumps(journal, indent=2) + "\n").encode(), 0o644)
            os.fsync(staging)
        return journal

    def _finish(self, journal: dict[str, Any]) -> None:
        try:
            self._roll_forward(journal)
        except OSError as exc:
            raise RlobsError(
                f"could not finish writing the bundle to {self.path}: {exc.strerror or exc}; "
                f"{JOURNAL} records the rest, and the next render finishes it"
            ) from None

    def _roll_forward(self, journal: dict[str, Any]) -> None:
        """Finish a committed write; every step is idempotent, so an interrupted roll-forward is replayed. The
        files are all in place and durable before the journal that replays them is removed."""
        self._apply(journal)
        self.tree.sync()
        self._close()
        self.tree.sync()

    def _apply(self, journal: dict[str, Any]) -> None:
        """The journal's deletions and renames (the staged files into place, then the manifest)."""
        for op in journal["delete"]:
            rel = op["path"]
            kind = self.tree.kind(rel)
            # Missing: a replay after a kill between a file's unlink and the removal of the folders it emptied.
            if kind == "missing" or (kind == "file" and _digest(self.tree.read(rel) or b"") in op["digests"]):
                self.tree.unlink(rel)  # the file, then every folder above it left empty
        with self.tree.folder((STAGING,)) as staging:
            if staging is not None:
                present = set(os.listdir(staging))
                moves = [(op["staged"], op["path"]) for op in journal["replace"] if op["staged"] in present]
                self.tree.move_all_in(staging, moves)
                if "manifest" in present:
                    self.tree.move_in(staging, "manifest", MANIFEST)

    def _close(self) -> None:
        """The end of a rolled-forward write: the emptied staging folder and the journal removed."""
        self._discard_staging()
        self.tree.unlink(JOURNAL)

    def _discard_staging(self) -> None:
        """Remove the staging folder (its files only: rlobs puts no folders or links there)."""
        self._prestaged.clear()
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
        """Finish (journal committed) or undo (not committed) an interrupted write, and remove old staging files."""
        raw = self._read_meta(JOURNAL)
        try:
            before = self.manifest()
        except RlobsError:  # the journal may hold the manifest that replaces it; the plan reports it if not
            before = {}
        self._recovered = tuple(self.leftovers(before))
        try:
            if raw is not None:
                self._finish(self._journal(raw))
            else:
                self._discard_staging()
            for rel in self.leftovers(self.manifest()):
                if rel not in (JOURNAL, STAGING) and self.tree.kind(rel) == "file":
                    self.tree.unlink(rel)
        except OSError as exc:
            raise RlobsError(f"could not clean up {self.path}: {exc.strerror or exc}") from None

    def foresee(self) -> None:
        """Read-only: what recover() will make of a committed journal, kept as an overlay the plan reads through."""
        raw = self._read_meta(JOURNAL)
        if raw is None:
            return  # an uncommitted write is only removed: the plan sees the old bundle, as the render will
        journal = self._journal(raw)
        try:
            for op in journal["delete"]:
                rel = op["path"]
                if self.tree.kind(rel) == "file" and _digest(self.tree.read(rel) or b"") in op["digests"]:
                    self._overlay[rel] = None
            with self.tree.folder((STAGING,)) as staging:
                if staging is None:
                    return
                present = set(os.listdir(staging))
                for op in journal["replace"]:
                    if op["staged"] in present:
                        self._overlay[op["path"]] = _read_staged(staging, op["staged"])
                if "manifest" in present:
                    self._overlay[MANIFEST] = _read_staged(staging, "manifest")
        except OSError as exc:
            raise RlobsError(
                f"{self.path / JOURNAL}: cannot read the unfinished write: {exc.strerror or exc}"
            ) from None

    def _journal(self, raw: bytes) -> dict[str, Any]:
        """The journal, every entry checked: it is read from disk and may have been forged."""
        try:
            data = json.loads(raw.decode("utf-8"))
            replace = [
                {"staged": str(op["staged"]), "path": op["path"]}
                for op in data["replace"]
                if _STAGED_NAME.fullmatch(str(op["staged"])) and self._ours(op["path"])
            ]
            delete = [
                {"path": op["path"], "digests": [d for d in op["digests"] if isinstance(d, str) and _HEX.match(d)]}
                for op in data["delete"]
                if self._ours(op["path"])
            ]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise RlobsError(
                f"{self.path / JOURNAL}: expected an rlobs journal, got unreadable content ({exc}); remove it and "
                f"{STAGING}/ to start over"
            ) from None
        return {"replace": replace, "delete": delete}


def _read_staged(dir_fd: int, name: str) -> tuple[bytes, bool]:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(), bool(os.fstat(fh.fileno()).st_mode & 0o100)


class WriteBehind:
    """Flush the filesystem of a bundle every FLUSH_INTERVAL seconds from a thread, while files are being staged
    (many bundles, or a fleet's thousands of files). The final flush before the commit points is still the one
    that counts (commit_all, Bundle.stage); this one only writes the data behind the staging, overlapping the disk
    with the work instead of one long flush at the end. It also keeps file creation cheap where the kernel checks
    for recently freed inodes (ext4 without a journal: fs/ext4/ialloc.c, recently_deleted()): each file created
    scans past every inode freed in the last 5 s, or in the last 300 s while its inode-table block is dirty, and a
    flush cleans those blocks. Measured here (Linux 6.18), creating a file cost ~0.05 ms just after a flush and
    climbed to ~0.9 ms as unflushed files accumulated; creating 1,500 files took 0.86 ms each without a flush and
    0.25-0.42 ms each, flushes included, with one every 37 to 300 files. A failed flush here is ignored: the final
    flush reports it."""

    def __init__(self, bundle: Bundle, interval: float = 0.2) -> None:
        import threading

        self._fd = bundle.tree.fd
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        import threading

        syncfs = _syncfs()
        if syncfs is None or self._fd is None or self._thread is not None:
            return
        fd = self._fd

        def flush() -> None:
            while not self._stop.wait(self._interval):
                with contextlib.suppress(OSError):
                    syncfs(fd)

        self._thread = threading.Thread(target=flush, name="rlobs-write-behind", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> WriteBehind:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


WRITE_BEHIND_FILES = 256  # a stage of this many files flushes behind itself (WriteBehind): a fleet's bundle


def commit_all(staged: Iterable[tuple[Bundle, Staged | None]]) -> None:
    """Commit many staged bundles (a render of several profiles, rlobs.batch) in the order one commit takes, each
    step for every bundle before one flush for all of them: the staged files and journals on disk (stages that
    deferred their flush); every journal renamed into place (the commit points), flushed; every roll forward,
    flushed; every staging folder and journal removed, flushed. Each step is durable before the next begins, as
    in Bundle.commit (module docstring), with a flush per step instead of one per bundle and step: a flush of the
    filesystem costs about what a directory's fsync does, and concurrent ones wait for each other's data. A
    failure before a commit point leaves every bundle as it was; after one, the journals record the rest, and
    the next render of a bundle finishes it (recover)."""
    pairs = [(b, s) for b, s in staged if s is not None]
    try:
        _flush([b for b, s in pairs if not s.durable])
    except OSError as exc:
        for bundle, _ in pairs:
            bundle.discard()
        raise RlobsError(
            f"could not write the bundles: {exc.strerror or exc}; the previous bundles are untouched"
        ) from None
    bundles = [b for b, _ in pairs]
    for bundle in bundles:
        bundle._commit(sync=False)  # its own failure: that bundle untouched, and the ones before it committed
    try:
        _flush(bundles)
        for bundle, staging in pairs:
            bundle._apply(staging.journal)
        _flush(bundles)
        for bundle in bundles:
            bundle._close()
        _flush(bundles)
    except OSError as exc:
        raise RlobsError(
            f"could not finish writing the bundles: {exc.strerror or exc}; each bundle's {JOURNAL} records the "
            "rest, and the next render of it finishes it"
        ) from None


def _behind(bundle: Bundle, files: int) -> contextlib.AbstractContextManager[object]:
    return WriteBehind(bundle) if files >= WRITE_BEHIND_FILES else contextlib.nullcontext()


def _flush(bundles: list[Bundle]) -> None:
    """Everything written to the bundles' folders on disk: one syncfs(2) per filesystem holding them, or where
    there is none an fsync of each folder (what each step of a commit flushes)."""
    syncfs = _syncfs()
    if syncfs is None:
        for bundle in bundles:
            bundle.tree.sync()
        return
    devices = {os.fstat(b.tree.fd).st_dev: b.tree.fd for b in bundles if b.tree.fd is not None}
    for fd in devices.values():
        syncfs(fd)


def refusal_error(found: Iterable[tuple[Path, Changes]]) -> OutputConflictError:
    """Every refusal of the bundles in `found` as one error: one line per problem, nothing written."""
    details: dict[str, dict[str, object]] = {}  # by line: several members refused for one parent say it once
    for out, changes in found:
        for r in changes.refused:
            line = r.line(out)
            details.setdefault(line, {"message": line, "reason": r.reason, "output": str(out), "path": r.path})
    return OutputConflictError("\n".join(details), list(details.values()))


def _write_new(dir_fd: int, name: str, data: bytes, mode: int, *, sync: bool = True) -> None:
    """A new file (O_EXCL, so nothing planted at the name is followed), flushed to disk unless `sync` is false."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:  # unbuffered: a file object would add a terminal check, a seek and a flag lookup per file
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _syncfs() -> Callable[[int], None] | None:
    """syncfs(2) (Linux): everything written to the filesystem holding a descriptor, on disk when it returns
    (writeback errors reported since Linux 5.8); None where the C library has no syncfs, and files are then
    fsync'ed one by one."""
    import ctypes

    try:
        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (AttributeError, OSError):
        return None

    def syncfs(fd: int) -> None:
        if call(fd) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, os.strerror(errno))

    return syncfs


def manifest_text(
    files: dict[str, str], key: RenderKey | None = None, executable: Iterable[str] = (), owner: Owner | None = None
) -> str:
    body: dict[str, object] = {"generator": "rlobs", "note": "files rlobs generated here; do not edit"}
    if owner is not None:
        body["owner"] = owner.as_dict()
    body["files"] = dict(sorted(files.items()))
    if key is not None:
        record = {"key": key.digest, "name": key.name, "executable": sorted(executable)}
        body["render"] = {**record, "seal": _seal(record, body["files"], body.get("owner"))}
    return json.dumps(body, indent=2) + "\n"


def _manifest_of(rendered: tuple[Rendered, ...], key: RenderKey | None, owner: Owner | None = None) -> str:
    files = {r.path: _digest(r.text.encode()) for r in rendered}
    return manifest_text(files, key, (r.path for r in rendered if r.executable), owner)


def _seal(record: dict[str, Any], files: object, owner: object) -> str:
    """Binds the render record to the file list and owner it was written with: a manifest edited by hand (an
    entry added, removed or changed, another owner) no longer matches its seal, and the next render runs in full."""
    return _digest(json.dumps([record, files, owner], sort_keys=True).encode())


def fresh(out_dir: Path, key: str) -> tuple[str, tuple[str, ...], Owner] | None:
    """(name, generated paths, owner) when `out_dir` holds exactly the bundle whose render key is `key`, else None.

    Exactly: the manifest records `key` under an intact seal, no write is unfinished (journal, staging folder or
    old-style staging files), and every generated file is a regular file, reached without a link, with the
    digest and executable bit rlobs wrote. Anything else, or anything unreadable, is None: the full render then
    decides (and reports) what differs. Only reads, under the directory's shared lock.
    """
    try:
        tree = Tree.open(out_dir, create=False)
    except (OSError, RlobsError):
        return None
    try:
        tree.lock(exclusive=False, timeout=LOCK_TIMEOUT)
        return _fresh(tree, key)
    except (OSError, RlobsError, ValueError, KeyError, TypeError, AttributeError):
        return None
    finally:
        tree.close()


def recorded_key(out_dir: Path) -> str | None:
    """The render key `out_dir`'s manifest records, unchecked (fresh() checks it); None when there is none."""
    try:
        tree = Tree.open(out_dir, create=False)
    except (OSError, RlobsError):
        return None
    try:
        raw = tree.read(MANIFEST) if tree.fd is not None else None
        key = json.loads(raw.decode("utf-8"))["render"]["key"] if raw is not None else None
    except (OSError, RlobsError, ValueError, KeyError, TypeError):
        return None
    finally:
        tree.close()
    return key if isinstance(key, str) else None


def recorded_digests(out_dir: Path) -> dict[str, set[str]]:
    """Path -> the digest the manifest of `out_dir` records (unchecked: only a hint of what rlobs wrote)."""
    try:
        tree = Tree.open(out_dir, create=False)
    except (OSError, RlobsError):
        return {}
    try:
        raw = tree.read(MANIFEST) if tree.fd is not None else None
        files = json.loads(raw.decode("utf-8"))["files"] if raw is not None else {}
        return {p: {d} for p, d in files.items() if isinstance(p, str) and isinstance(d, str)}
    except (OSError, RlobsError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    finally:
        tree.close()


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


def _fresh(tree: Tree, key: str) -> tuple[str, tuple[str, ...], Owner] | None:
    if tree.fd is None or any(tree.kind(name) != "missing" for name in (JOURNAL, STAGING)):
        return None
    raw = tree.read(MANIFEST)
    if raw is None:
        return None
    data = json.loads(raw.decode("utf-8"))
    render, files = data["render"], data["files"]
    record = {"key": render["key"], "name": render["name"], "executable": render["executable"]}
    if render["key"] != key or render["seal"] != _seal(record, files, data.get("owner")) or "pending" in data:
        return None
    executable = set(render["executable"])
    for rel, digest in files.items():
        old = tree.read(rel)
        if old is None or _digest(old) != digest or bool(tree.stat(rel).st_mode & 0o100) != (rel in executable):
            return None
    for folder in sorted({tuple(parts(p)[:-1]) for p in files}):
        with tree.folder(folder) as fd:
            if fd is None or any(_LEGACY.match(n) for n in os.listdir(fd)):
                return None
    return str(render["name"]), tuple(sorted(files)), Owner.from_manifest(data)


def _diff(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    import difflib  # only --diff needs it; its import compiles regular expressions

    return list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name))
