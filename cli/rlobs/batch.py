"""Many profiles in one render: built in parallel, staged as each is done, committed when every one is staged.

Every profile is loaded and validated before any bundle is built (commands._load_all), so a bad profile stops the
render before anything is written. The bundles are then built (planned, rendered, parse-checked) by a process pool
sized to the cores this process may run on (rlobs.bundle.pool), forked after the profiles are validated: only
the rendered files travel between processes, once.

Each worker also compares the bundle it built with its directory and stages it there (rlobs.bundle.write: its files
in the staging folder, the bundle itself unchanged), through the bundle it inherited, opened and locked by this
process before the fork. Staging is mostly creating files, which is kernel time: done by the workers it runs on
every core instead of queueing in this process, and only the list of changes travels back, never the files.
Memory stays bounded: at most two bundles per worker are in flight, and a staged bundle is dropped. Only when
every bundle is staged is each one committed, here, after one flush of the filesystem for all of them
(write.commit_all: a flush per bundle in each worker would make the workers wait on each other's data), while
a thread of this process flushes behind the workers as they stage (write.WriteBehind). Anything
that goes wrong
before that (a file that fails its check, a directory that refuses the write, Ctrl-C) discards every staging
folder once the workers have stopped: one bad bundle writes nothing. The output is byte for byte what rendering
the profiles one by one writes (tests/test_batch.py), and results are reported in the profiles' order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rlobs.bundle.owner import Owner
    from rlobs.bundle.write import Bundle, Changes, RenderKey, Staged
    from rlobs.profile.profiles import Profile


@dataclass(frozen=True, slots=True)
class Job:
    path: Path  # the profile file, as given
    profile: Profile
    key: RenderKey  # its name is the bundle's folder under the render's output folder
    owner: Owner


def render_many(
    jobs: list[Job],
    out: Path,
    *,
    write: bool,
    force: bool,
    diff: bool,
    advance: Callable[[str], None] = lambda _: None,
    workers: int | None = None,
) -> list[Changes]:
    """Each job's changes, in the jobs' order, its bundle in `out/<name>`. Builds every job's bundle, plans each
    against its directory (`out` locked shared and each bundle folder exclusively, in path order, for the whole
    render) and stages it as it arrives; commits every staged bundle once all are staged and none is refused.
    `out` is never a bundle itself: then every member is refused, and opened read-only so no folder is created.
    --check, --diff and --dry-run plan exactly as the write does and report its refusals instead of raising them.
    `advance` is called with each bundle's name as it is done (the progress display)."""
    from rlobs.bundle import pool
    from rlobs.bundle.render import make_env
    from rlobs.bundle.write import WriteBehind, commit_all, open_bundle, refusal_error
    from rlobs.fleet.paths import producible
    from rlobs.pipeline import build_named

    results: list[Changes | None] = [None] * len(jobs)
    with ExitStack() as stack:
        parent = stack.enter_context(open_bundle(out, producible, write=False))
        write_dirs = write and parent.owner() is None
        dirs = {j.key.name: out / j.key.name for j in jobs}
        bundles: dict[Path, Bundle] = {
            d: stack.enter_context(open_bundle(d, producible, write=write_dirs)) for d in sorted(dirs.values())
        }

        env = make_env()  # loaded once here, so every worker starts with the templates it has loaded so far

        def staged_bundle(index: int) -> tuple[Changes, Staged | None]:
            """Build, plan and (when it is to be written and nothing refuses it) stage one bundle; in a worker."""
            job = jobs[index]
            files = build_named(job.path, job.profile, pool.checker(), env)
            bundle = bundles[dirs[job.key.name]]
            changes = bundle.plan(files, owner=job.owner, force=force, with_diff=diff, key=job.key, parent=parent)
            if not write or changes.refused:
                return changes, None
            return changes, bundle.stage(files, changes, key=job.key, durable=False)  # commit_all() syncs

        staged: dict[Path, Staged | None] = {}
        behind = WriteBehind(bundles[min(bundles)])  # flushes what the workers stage, behind them
        built = pool.run(staged_bundle, len(jobs), workers, behind.start if write else lambda: None)
        try:
            shared = _Shared()
            for index, result in built:
                changes, staging = shared.result(*result)
                job = jobs[index]
                staged[dirs[job.key.name]] = staging
                results[index] = changes
                advance(job.key.name)
            found = [r for r in results if r is not None]
            if write and any(c.refused for c in found):
                raise refusal_error((dirs[j.key.name], c) for j, c in zip(jobs, found, strict=True))
        except BaseException:
            # The workers stage into the bundles: they have stopped (closing the pool waits for the jobs they are
            # running) before anything is discarded, whatever was raised here (Ctrl-C while a result is handled).
            built.close()
            behind.stop()
            for out_dir in sorted(bundles, reverse=True):  # members before the folder holding them
                bundles[out_dir].discard()
            raise
        behind.stop()
        commit_all((bundles[out_dir], staging) for out_dir, staging in staged.items())
    return found


H = TypeVar("H", bound=Hashable)


class _Shared:
    """One object for each path and journal entry that the bundles' results repeat, kept until the commit. A
    result arrives from a worker unpickled, with strings of its own: in a render of 1,000 copies of the EKS
    blueprint, the 37 paths and journal entries of each bundle were 12 MiB of the main process, 40% of its peak.
    The journals are never changed once staged (Bundle._apply only reads them), so their entries can be shared."""

    def __init__(self) -> None:
        self._seen: dict[Any, Any] = {}

    def _one(self, value: H) -> H:
        return self._seen.setdefault(value, value)  # type: ignore[no-any-return]

    def _paths(self, paths: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(map(self._one, paths))

    def _op(self, op: dict[str, Any]) -> dict[str, Any]:
        if set(op) != {"staged", "path"}:  # a deletion carries its digests: rare, and kept as it came
            return op
        key = ("op", op["staged"], op["path"])
        if key not in self._seen:
            self._seen[key] = {"staged": self._one(op["staged"]), "path": self._one(op["path"])}
        return self._seen[key]  # type: ignore[no-any-return]

    def result(self, changes: Changes, staged: Staged | None) -> tuple[Changes, Staged | None]:
        changes = replace(
            changes,
            created=self._paths(changes.created),
            updated=self._paths(changes.updated),
            deleted=self._paths(changes.deleted),
            unchanged=self._paths(changes.unchanged),
            kept=self._paths(changes.kept),
        )
        if staged is not None:
            journal = {
                key: self._one(value) if isinstance(value, str) else value for key, value in staged.journal.items()
            }
            journal["replace"] = [self._op(op) for op in staged.journal["replace"]]
            journal["delete"] = [self._op(op) for op in staged.journal["delete"]]
            staged = replace(staged, journal=journal)
        return changes, staged
