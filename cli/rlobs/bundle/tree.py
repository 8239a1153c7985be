"""A bundle directory opened once and used only through directory descriptors, never following a symbolic link."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from rlobs.errors import OutputConflictError, RlobsError
from rlobs.files import MIB, read_capped

Kind = Literal["missing", "file", "dir", "link", "other"]

# Each path is walked a component at a time (openat(2)) with O_NOFOLLOW: a link planted anywhere (a committed symlink is
# enough) is refused, and a check cannot be raced into writing or deleting elsewhere.
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Any file of a bundle read back: the largest rlobs generates (a fleet's dashboards) is a few hundred KiB, and a file
# rlobs wrote is compared whole (its digest), so the cap is what no rendered file reaches.
MAX_FILE = 16 * MIB
_LINK_HINT = "rlobs never follows a link inside a bundle; replace it with the real folder or file"


def parts(rel: str) -> tuple[str, ...]:
    """The components of a bundle-relative POSIX path; refused when it could leave the root or is not in its normal
    form: the paths `PurePosixPath(rel).as_posix() == rel` keeps that are relative, not empty and without `..`
    (tests/test_tree.py compares the two rules), split rather than parsed by pathlib (a fleet asks thousands)."""
    names = tuple(rel.split("/"))
    if "\0" in rel or "" in names or "." in names or ".." in names:
        raise RlobsError(f"refusing to write outside the output directory: {rel!r}")
    return names


_KINDS: dict[int, Kind] = {stat.S_IFLNK: "link", stat.S_IFREG: "file", stat.S_IFDIR: "dir"}


class Tree:
    """The bundle root; `fd` is None while the directory does not exist (read-only use on a fresh output)."""

    def __init__(self, path: Path, fd: int | None, created: tuple[Path, ...] = ()) -> None:
        self.path = path
        self.fd = fd
        self.created = created  # the folders open() made for it, deepest first (remove_created() takes them back)

    @classmethod
    def open(cls, path: Path, *, create: bool) -> Tree:
        created: tuple[Path, ...] = ()
        if create:
            created = tuple(p for p in (path, *path.parents) if not p.exists())
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(FileExistsError):
                    path.mkdir()
            except (FileExistsError, NotADirectoryError) as exc:
                raise RlobsError(f"{exc.filename}: expected a folder to write the bundle in, got a file") from None
        try:
            return cls(path, os.open(path, _DIR), created)
        except FileNotFoundError:
            if create:
                raise
            return cls(path, None)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and path.is_symlink():
                raise OutputConflictError(f"{path}: expected a directory, got a symbolic link ({_LINK_HINT})") from None
            if exc.errno == errno.ENOTDIR:
                raise RlobsError(f"{path}: expected a directory, got a file") from None
            raise

    def remove_created(self) -> None:
        """Deepest first, while they are empty: a render that wrote nothing leaves no folder behind."""
        for folder in self.created:
            try:
                os.rmdir(folder)
            except OSError:
                return

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> Tree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lock(self, *, exclusive: bool, timeout: float) -> None:
        """flock(2) on the root (no lock file in the bundle) until close(); waits up to `timeout` seconds."""
        if self.fd is None:
            return
        op = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(self.fd, op)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise RlobsError(
                        f"{self.path}: another rlobs render is writing this directory; waited {timeout:g} s, "
                        "try again when it has finished"
                    ) from None
                time.sleep(0.02)

    @contextlib.contextmanager
    def folder(self, names: tuple[str, ...], *, create: bool = False) -> Iterator[int | None]:
        """A descriptor of the folder `names` below the root (None when missing); links are refused."""
        fd = None if self.fd is None else os.dup(self.fd)
        try:
            for i, name in enumerate(names):
                if fd is None:
                    break
                kind = self._stat_kind(fd, name)
                if kind == "missing" and create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, dir_fd=fd)
                    kind = self._stat_kind(fd, name)
                if kind not in ("dir", "missing"):
                    what = f"a symbolic link ({_LINK_HINT})" if kind == "link" else "a file"
                    raise OutputConflictError(f"{self.path / '/'.join(names[: i + 1])}: expected a folder, got {what}")
                child = os.open(name, _DIR, dir_fd=fd) if kind == "dir" else None
                os.close(fd)
                fd = child
            yield fd
        finally:
            if fd is not None:
                os.close(fd)

    @staticmethod
    def _stat_kind(dir_fd: int, name: str) -> Kind:
        try:
            mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return "missing"
        return _KINDS.get(stat.S_IFMT(mode), "other")

    def kind(self, rel: str) -> Kind:
        """What is at `rel`; "link" when it, or any folder on the way to it, is a symbolic link."""
        *folders, name = parts(rel)
        try:
            with self.folder(tuple(folders)) as fd:
                return "missing" if fd is None else self._stat_kind(fd, name)
        except OutputConflictError as exc:  # a link on the way, or a file where a folder would be (nothing at rel)
            return "link" if "symbolic link" in str(exc) else "missing"

    def stat(self, rel: str) -> os.stat_result:
        *folders, name = parts(rel)
        with self.folder(tuple(folders)) as fd:
            if fd is None:
                raise FileNotFoundError(errno.ENOENT, "no such file", str(self.path / rel))
            return os.stat(name, dir_fd=fd, follow_symlinks=False)

    def read(self, rel: str, cap: int = MAX_FILE) -> bytes | None:
        """The bytes of the regular file at `rel`, None when nothing is there; links, folders, special files and a
        file over `cap` bytes are refused (read without blocking, never more than the cap: rlobs.files)."""
        *folders, name = parts(rel)
        with self.folder(tuple(folders)) as fd:
            if fd is None:
                return None
            kind = self._stat_kind(fd, name)
            if kind == "missing":
                return None
            if kind != "file":
                what = {"link": "a symbolic link", "dir": "a folder"}.get(kind, "a special file")
                hint = f" ({_LINK_HINT})" if kind == "link" else ""
                raise OutputConflictError(f"{self.path / rel}: expected a file, got {what}{hint}")
            try:
                return read_capped(name, cap, dir_fd=fd, follow=False)
            except ValueError as exc:  # swapped for a FIFO since the stat, or over the cap
                raise OutputConflictError(f"{self.path / rel}: expected a file rlobs generated, got {exc}") from None

    def move_all_in(self, src_fd: int, moves: Iterable[tuple[str, str]]) -> None:
        """rename(2) each staged file (staged name, rel) onto `rel`, creating its folders; a link at `rel` is replaced,
        not followed. Each folder is opened once for all its files (a fleet: thousands into hundreds)."""
        by_folder: dict[tuple[str, ...], list[tuple[str, str]]] = {}
        for src_name, rel in moves:
            *folders, name = parts(rel)
            by_folder.setdefault(tuple(folders), []).append((src_name, name))
        for folder, names in by_folder.items():
            with self.folder(folder, create=True) as fd:
                assert fd is not None  # created above
                for src_name, name in names:
                    os.replace(src_name, name, src_dir_fd=src_fd, dst_dir_fd=fd)

    def unlink(self, rel: str) -> None:
        """Remove the file at `rel`, then every folder above it left empty (never the root), passing over those already
        gone (a replayed deletion); nothing when a file or a link stands where one of its folders would be."""
        names = parts(rel)
        try:
            with self.folder(names[:-1]) as fd:
                if fd is not None:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(names[-1], dir_fd=fd)
        except OutputConflictError:  # a file or a link where a folder would be: nothing is at rel, none to empty
            return
        for depth in range(len(names) - 1, 0, -1):
            with self.folder(names[: depth - 1]) as fd:
                if fd is None:
                    continue  # its parent is gone too
                try:
                    os.rmdir(names[depth - 1], dir_fd=fd)
                except FileNotFoundError:
                    continue
                except OSError:  # not empty (or not a folder): the folders above are not empty either
                    return
