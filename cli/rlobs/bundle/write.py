"""The only code that changes a bundle folder: lock, compare, stage, commit in one rename, prune (docs/bundle.md)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rlobs.bundle import cache, interrupt
from rlobs.bundle.cache import RenderKey, sha256
from rlobs.bundle.gitignore import MINIMAL as GITIGNORE
from rlobs.bundle.manifest import (
    JOURNAL,
    LOCK_TIMEOUT,
    MANIFEST,
    MAX_RECORD,
    STAGING,
    manifest_text,
    neighbours,
)
from rlobs.bundle.owner import Owner, Refusal, layout_refusals, refusal, refusal_error
from rlobs.bundle.spec import Rendered
from rlobs.bundle.tree import Kind, Tree, parts
from rlobs.errors import RlobsError

_STAGED_NAME = re.compile(r"[0-9]+")  # what stage() names staged files (and "manifest")

Producible = Callable[[str], bool]  # can an rlobs target produce this bundle-relative path?
_Found = dict[str, list[str]]  # what a plan found: created, updated, deleted, unchanged, kept paths; diff lines
_Op = tuple[str, str | None, bytes | None]  # a replay's step: path, staged name (None: delete it), staged bytes


@dataclass(frozen=True, slots=True)
class Changes:
    created: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # no longer generated but edited by hand: left in place, dropped from the manifest
    leftovers: tuple[str, ...] = ()  # an unfinished write's journal and staging folder, still there
    diff: str = ""
    manifest_changed: bool = field(default=False, compare=False)
    recovered: tuple[str, ...] = ()  # the same, finished or undone by this render before it planned
    replayed: tuple[str, ...] = ()  # files that finishing an unfinished write creates, replaces or deletes
    refused: tuple[Refusal, ...] = ()  # why a render would not write this bundle (write() raises them)
    owner: Owner | None = None  # the bundle the manifest will record

    @property
    def written(self) -> tuple[str, ...]:  # what a write of these changes creates, replaces or deletes
        return self.created + self.updated + self.deleted

    @property
    def changed(self) -> tuple[str, ...]:
        return tuple(sorted({*self.written, *self.leftovers, *self.recovered, *self.replayed}))


@contextlib.contextmanager
def open_bundle(
    out_dir: Path, producible: Producible, *, write: bool, timeout: float = LOCK_TIMEOUT
) -> Iterator[Bundle]:
    """The bundle directory, locked until the block ends: exclusively (and recovered) to write, shared to read."""
    with Tree.open(out_dir, create=write) as tree:
        tree.lock(exclusive=write, timeout=timeout)
        bundle = Bundle(tree, producible)
        if write:
            bundle.recover()
        else:
            bundle.foresee()
        yield bundle


class Bundle:
    """A locked bundle directory: plan a render against it, then write it as one transaction."""

    def __init__(self, tree: Tree, producible: Producible) -> None:
        self.tree = tree
        self.producible = producible
        # Read-only: what a committed journal will replace (bytes, executable) or delete (None): foresee().
        self._overlay: dict[str, tuple[bytes, bool] | None] = {}
        self._recovered: tuple[str, ...] = ()
        self._replayed: tuple[str, ...] = ()
        self._planned: tuple[tuple[Rendered, ...], str, dict[str, object]] | None = None  # for stage()
        self._staged: bytes | None = None  # the journal stage() staged, until commit() or discard()
        self._steps: list[_Op] = []  # what commit() rolls forward: the staged journal's entries
        self._record: dict[str, object] = {}  # what the user cache keeps once the write is done

    @property
    def path(self) -> Path:
        return self.tree.path

    # -- reading -------------------------------------------------------------------------------------------------

    def _manifest(self) -> tuple[dict[str, str], Owner] | None:
        """The manifest's paths (-> the digest rlobs wrote) and owner; entries no target can produce are ignored."""
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
        found = self._manifest()
        return found[1] if found is not None else None

    def _read(self, rel: str) -> bytes | None:
        if rel in self._overlay:
            entry = self._overlay[rel]
            return None if entry is None else entry[0]
        try:
            return self.tree.read(rel, MAX_RECORD) if rel in (MANIFEST, JOURNAL) else self.tree.read(rel)
        except OSError as exc:
            raise RlobsError(f"{self.path / rel}: cannot read it: {exc.strerror or exc}") from None

    def _ours(self, rel: object) -> bool:
        try:  # .gitignore first: no target module imported for it
            return isinstance(rel, str) and bool(parts(rel)) and (rel == GITIGNORE.path or self.producible(rel))
        except RlobsError:
            return False

    def leftovers(self) -> tuple[str, ...]:
        """An unfinished write's journal and staging folder."""
        return tuple(name for name in (JOURNAL, STAGING) if self.tree.kind(name) != "missing")

    # -- planning ------------------------------------------------------------------------------------------------

    def plan(
        self,
        rendered: Iterable[Rendered],
        *,
        owner: Owner,
        force: bool = False,
        with_diff: bool = False,
        key: RenderKey | None = None,
    ) -> Changes:
        """Compare the render of `owner` (and its .gitignore) with the folder, noting every reason a write would
        refuse, so --check, --dry-run and --diff report what write() raises. With `key`, a bundle found equal to its
        render is remembered in the user cache (so the next render answers without rendering)."""
        rendered = tuple(rendered)
        rendered += () if any(r.path == GITIGNORE.path for r in rendered) else (GITIGNORE,)
        previous, held = self._manifest() or ({}, None)
        found: _Found = {k: [] for k in ("created", "updated", "deleted", "unchanged", "kept", "diff")}
        refused = self._compare(rendered, previous, found, force=force, diff=with_diff)
        stale = sorted(set(previous) - {r.path for r in rendered})
        refused += self._stale(stale, previous, found, force=force, diff=with_diff)
        layout = layout_refusals(self.path, owner, held, *neighbours(self.tree), force=force)
        manifest = manifest_text(rendered, owner)
        entry = cache.record(rendered, key, owner, manifest)  # kept after a write, with or without a key
        self._planned = rendered, manifest, entry
        changes = Changes(
            **{k: tuple(paths) for k, paths in found.items() if k != "diff"},
            leftovers=self.leftovers(),
            diff="".join(found["diff"]),
            manifest_changed=self._read(MANIFEST) != manifest.encode(),
            recovered=self._recovered,
            replayed=self._replayed,
            refused=(*layout, *refused),
            owner=owner,
        )
        if key is not None and not (changes.refused or changes.manifest_changed or changes.written):
            cache.remember(self.path, entry)  # compared byte for byte: the bundle is what its render key renders
        return changes

    def _compare(
        self, rendered: tuple[Rendered, ...], previous: dict[str, str], found: _Found, *, force: bool, diff: bool
    ) -> list[Refusal]:
        """A file the manifest does not list with the digest on disk (foreign or edited) is refused unless `force`."""
        refused = []
        for r in rendered:
            old = self._read(r.path)
            if old is not None and old == r.text.encode() and self._executable(r.path) == r.executable:
                found["unchanged"].append(r.path)
                continue
            found["created" if old is None else "updated"].append(r.path)
            if old is not None and not force and r.path not in previous:
                refused.append(refusal("foreign", r.path))
            elif old is not None and not force and sha256(old) != previous[r.path]:
                refused.append(refusal("edited", r.path))
            if diff:
                found["diff"] += _diff((old or b"").decode("utf-8", "replace"), r.text, f"a/{r.path}", f"b/{r.path}")
        return refused

    def _stale(
        self, stale: list[str], previous: dict[str, str], found: _Found, *, force: bool, diff: bool
    ) -> list[Refusal]:
        """Files rlobs wrote before and no longer renders: deleted if untouched and this machine's record says rlobs
        wrote them, kept (forgotten by the manifest) if only the manifest says so or with `force`; else refused."""
        refused, wrote_here = [], cache.known_digests(self.path)
        for rel in stale:
            if self._kind(rel) != "file":
                continue  # gone, or a link or folder now: not the file rlobs wrote, never followed or removed
            old = self._read(rel) or b""
            untouched = sha256(old) == previous[rel]
            if untouched and previous[rel] in wrote_here.get(rel, ()):
                found["deleted"].append(rel)
                found["diff"] += _diff(old.decode("utf-8", "replace"), "", f"a/{rel}", "/dev/null") if diff else []
            elif untouched or force:  # untouched by the committed manifest's word only: not proof enough to delete
                found["kept"].append(rel)
            else:
                refused.append(refusal("edited-stale", rel))
        return refused

    def _executable(self, rel: str) -> bool:
        entry = self._overlay.get(rel)
        return entry[1] if entry is not None else bool(self.tree.stat(rel).st_mode & 0o100)

    def _kind(self, rel: str) -> Kind:
        if rel in self._overlay:
            return "missing" if self._overlay[rel] is None else "file"
        return self.tree.kind(rel)

    # -- writing -------------------------------------------------------------------------------------------------

    def write(self, changes: Changes) -> None:
        """Write `changes`, what the last plan() found, as one transaction (stage, then commit); raise the plan's
        refusals instead, writing nothing. Interrupted before the commit point, it leaves the bundle as it was."""
        try:
            self.stage(changes)
            self.commit()
        except BaseException:
            self.discard()
            raise

    def stage(self, changes: Changes) -> None:
        """Stage every new file, the new manifest and the journal (`changes`: the last plan()'s); nothing in the
        bundle changes until commit(). Raises the plan's refusals instead, writing nothing."""
        assert self._planned is not None  # planned
        (rendered, manifest, self._record), self._planned = self._planned, None
        if changes.refused:
            raise refusal_error([(self.path, changes.refused)])
        if not (changes.manifest_changed or changes.written):
            return
        assert self.tree.fd is not None  # opened to write
        by_path = {r.path: r for r in rendered}
        files = [by_path[p] for p in sorted(changes.created + changes.updated)]
        previous = (self._manifest() or ({}, None))[0]
        steps = [(r.path, str(i), r.text) for i, r in enumerate(files)] + [(MANIFEST, "manifest", manifest)]
        entries = [
            {"path": rel, "staged": staged, "digest": sha256(text), "replaces": self._state(rel)}
            for rel, staged, text in steps
        ]
        entries += [{"path": rel, "staged": None, "digest": None, "replaces": previous[rel]} for rel in changes.deleted]
        self._steps = [(rel, staged, None) for rel, staged, _ in steps] + [(rel, None, None) for rel in changes.deleted]
        note = "an rlobs write in progress; the next rlobs render on the machine that started it finishes it"
        journal = {"generator": "rlobs", "note": note, "id": secrets.token_hex(16), "files": entries}
        self._staged = (json.dumps(journal) + "\n").encode()
        try:
            os.mkdir(STAGING, 0o700, dir_fd=self.tree.fd)
            with self.tree.folder((STAGING,)) as staging:
                assert staging is not None
                for i, r in enumerate(files):
                    _write_new(staging, str(i), r.text.encode(), 0o755 if r.executable else 0o644)
                _write_new(staging, "manifest", manifest.encode(), 0o644)
                _write_new(staging, "journal", self._staged, 0o644)
            cache.stage_journal(self._staged)
        except OSError as exc:
            raise self._untouched(exc) from None
        except BaseException:  # Ctrl-C while staging: nothing of it stays behind
            self.discard()
            raise

    def commit(self) -> None:
        """Rename the staged journal into place (the commit point), then roll it forward, with Ctrl-C and SIGTERM
        held until it is done; nothing when stage() had nothing to write."""
        if self._staged is None:
            return
        assert self.tree.fd is not None
        with interrupt.blocked():
            try:
                with self.tree.folder((STAGING,)) as staging:
                    assert staging is not None  # staged
                    os.replace("journal", JOURNAL, src_dir_fd=staging, dst_dir_fd=self.tree.fd)
            except OSError as exc:
                raise self._untouched(exc) from None
            journal, self._staged = self._staged, None
            self._finish(self._steps, journal)  # planned and staged under this lock: nothing to check again
            cache.remember(self.path, self._record)

    def _untouched(self, exc: OSError) -> RlobsError:
        self.discard()
        why = exc.strerror or exc
        return RlobsError(f"could not write the bundle to {self.path}: {why}; the previous bundle is untouched")

    def discard(self) -> None:
        """Drop what stage() staged and was not committed: the bundle stays exactly as it was, and a folder opening
        it created is removed again. A committed write is never dropped: the next render finishes it."""
        if self.tree.kind(JOURNAL) == "missing":
            if self._staged is not None:
                cache.forget_journal(self._staged)
            self._discard_staging()
            self.tree.remove_created()
        self._staged = None

    def _finish(self, ops: list[_Op], journal: bytes) -> None:
        """Roll a committed journal forward (its steps checked by _replay(); each can be replayed), then remove it."""
        try:
            for rel, staged, _ in ops:
                if staged is None:
                    self.tree.unlink(rel)  # the file, then every folder above it left empty
            with self.tree.folder((STAGING,)) as staging:
                if staging is not None:  # in any order: the journal, removed last, is what says the write is done
                    self.tree.move_all_in(staging, [(st, rel) for rel, st, _ in ops if st is not None])
            self._discard_staging()
            self.tree.unlink(JOURNAL)
            cache.forget_journal(journal)
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
        self._recovered = self.leftovers()
        if JOURNAL in self._recovered:
            ops = self._replay(journal := self._read(JOURNAL) or b"")
            with interrupt.blocked():
                self._finish(ops, journal)
            return
        try:
            self._discard_staging()
        except OSError as exc:
            raise RlobsError(f"could not clean up {self.path}: {exc.strerror or exc}") from None

    def foresee(self) -> None:
        """Read-only: what recover() will make of a committed journal, kept as an overlay the plan reads through."""
        journal = self._read(JOURNAL)
        if journal is None:
            return  # an uncommitted write is only removed: the plan sees the old bundle, as the render will
        for rel, staged, data in self._replay(journal):
            executable = staged is not None and bool(self.tree.stat(f"{STAGING}/{staged}").st_mode & 0o100)
            self._overlay[rel] = None if data is None else (data, executable)

    def _state(self, rel: str) -> str | None:
        """The digest of the regular file at `rel`, None when nothing is there, or what stands there instead."""
        kind = self.tree.kind(rel)
        if kind == "file":
            return sha256(self._read(rel) or b"")
        return None if kind == "missing" else f"a {kind}, not a regular file"

    def _replay(self, journal: bytes) -> list[_Op]:
        """The steps an interrupted write's committed journal still needs, each checked first: the journal is one
        this machine staged, each staged file a regular file with its entry's digest, each file it replaces or
        deletes still as the entry expects (else one line saying what to remove)."""
        where, remove = self.path / JOURNAL, f"remove {JOURNAL} and {STAGING}/ to keep the bundle as it is"
        if not cache.staged_here(journal):
            why = f"an unfinished write this machine did not start (no record of it in {cache.root()})"
            raise RlobsError(f"{where}: {why}; {remove}")
        try:
            data = json.loads(journal.decode("utf-8"))
            entries = [(e["path"], e["staged"], e["digest"], e["replaces"]) for e in data["files"]]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise RlobsError(f"{where}: expected an rlobs journal, got unreadable content ({exc}); {remove}") from None
        ops: list[_Op] = []
        for i, (rel, staged, digest, replaces) in enumerate(entries):
            what = f"{where}: entry {i} ({rel!r})"
            ours = self._ours(rel) and _STAGED_NAME.fullmatch(str(staged or 0))  # None: a deletion
            if not (rel == MANIFEST if staged == "manifest" else ours):
                raise RlobsError(f"{what}: expected a bundle path and a staged name rlobs writes; {remove}")
            try:
                new = self.tree.read(f"{STAGING}/{staged}") if staged is not None else None
            except (OSError, RlobsError):
                raise RlobsError(f"{what}: {STAGING}/{staged} is not a regular file; {remove}") from None
            now = self._state(rel)
            if new is not None and sha256(new) != digest:
                raise RlobsError(f"{what}: {STAGING}/{staged} is not the file staged; {remove}")
            if new is not None and now != replaces:
                raise RlobsError(f"{what}: {rel} changed since the write began; {remove}")
            if new is None and now != digest and (staged is not None or now != replaces):
                raise RlobsError(f"{what}: {rel} is neither what the write replaces nor what it writes; {remove}")
            if new is not None or staged is None or now != digest:  # a deletion again: it empties its folders too
                ops.append((rel, staged if new is not None else None, new))
        self._replayed = tuple(sorted(rel for rel, _, _ in ops if rel != MANIFEST))
        return ops


def _write_new(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    """A new file (O_EXCL, so nothing planted at the name is followed). No fsync: the guarantee is against a killed
    process, not a power cut (fsync of every staged file and folder made writing the EKS blueprint 98 ms instead of
    8 ms; after a power cut the digests make the next render report it)."""
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
