"""Profiles rendered into bundles: one into its folder, or several, built in parallel, into a folder each.

Every profile is loaded and validated before any bundle is built, so one bad profile writes nothing. Several are
built by worker processes (rlobs.bundle.pool); this process alone plans and writes. It locks `out` (shared) and
every `out/<metadata.name>` (exclusively, in path order, so two renders of overlapping sets never deadlock), then
plans and stages each bundle as its files arrive, so only a few bundles' files are in memory at once. Only when
every bundle is planned and none is refused is each one committed; anything going wrong before (a refusal, a failed
check, a killed worker, Ctrl-C) discards every staging folder. The output is byte for byte what rendering the
profiles one by one writes (tests/test_batch.py).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rlobs.bundle.cache import RenderKey
from rlobs.bundle.owner import Owner
from rlobs.bundle.request import RenderRequest
from rlobs.errors import RlobsError

if TYPE_CHECKING:
    from rlobs.bundle.spec import Rendered
    from rlobs.bundle.write import Bundle, Changes
    from rlobs.profile.model import ProfileBase as Profile


@dataclass(frozen=True, slots=True)
class Job:
    path: Path  # the profile file, as given
    profile: Profile
    key: RenderKey  # its name is the bundle's folder under the render's output folder when there are several
    owner: Owner


def load(profiles: list[Path], out: Path) -> list[Job]:
    """Every profile loaded and keyed before any is rendered into `out` (several: `out/<name>` each), so one bad
    profile writes nothing at all. A profile's path in the Git repository follows its folder (profile.worktree)."""
    from rlobs.errors import ProfileError
    from rlobs.profile.problems import repeats
    from rlobs.profile.worktree import placed, where
    from rlobs.renderkey import render_keys
    from rlobs.targets import TARGETS, load_source

    loaded, problems = [], []
    for path in profiles:
        try:
            data, profile = load_source(path)
            key = TARGETS[profile.target].REPO_PATH
            folder = out if len(profiles) == 1 else out / profile.metadata.name
            loaded.append((data, profile if key is None else placed(profile, key, folder, data.decode(), str(path))))
        except ProfileError as exc:
            problems += exc.problems
    if problems:
        raise ProfileError(problems)
    dupes = sorted({name for _, name in repeats(p.metadata.name for _, p in loaded)})
    if dupes:
        raise RlobsError(f"profiles share metadata.name {', '.join(dupes)}: expected one bundle name per profile")
    keys = render_keys([data for data, _ in loaded], where=where(out))
    return [
        Job(path, p, RenderKey(key, p.metadata.name), Owner("profile", p.metadata.name, p.target))
        for path, (_, p), key in zip(profiles, loaded, keys, strict=True)
    ]


def render_one(job: Job, request: RenderRequest) -> Changes:
    """One profile's bundle into the request's folder (RenderRequest.render_into)."""
    from rlobs.bundle.cache import known_digests
    from rlobs.bundle.check import Checker
    from rlobs.fleet.paths import producible
    from rlobs.pipeline import build_named

    # HCL text this machine last wrote there was checked then (rlobs writes only checked files): not parsed again.
    files = build_named(job.path, job.profile, Checker(known_digests(request.out)))
    return request.render_into(files, producible, owner=job.owner, key=job.key)


def render_many(jobs: list[Job], request: RenderRequest, workers: int | None = None) -> list[Changes]:
    """Each job's changes, in the jobs' order, its bundle in `out/<name>` (module docstring). When `out` is a bundle
    itself every member is refused, and opened read-only so no folder is created."""
    from rlobs.bundle import interrupt, pool
    from rlobs.bundle.owner import refusal_error
    from rlobs.bundle.render import make_env
    from rlobs.bundle.write import open_bundle
    from rlobs.fleet.paths import producible
    from rlobs.pipeline import build_named

    env = make_env()  # loaded once here, so every worker starts with the templates loaded so far

    def build(index: int) -> tuple[Rendered, ...]:
        job = jobs[index]
        return build_named(job.path, job.profile, pool.checker(), env)

    out, write, show, force, diff = request.out, request.writes, request.progress, request.force, request.with_diff
    dirs = [out / job.key.name for job in jobs]
    results: list[Changes | None] = [None] * len(jobs)
    bundles: dict[Path, Bundle] = {}
    with ExitStack() as stack:
        built = stack.enter_context(pool.run(build, len(jobs), workers))
        parent = stack.enter_context(open_bundle(out, producible, write=False))
        write_dirs = write and parent.owner() is None
        try:
            for out_dir in sorted(dirs):
                bundles[out_dir] = stack.enter_context(open_bundle(out_dir, producible, write=write_dirs))
            advance = stack.enter_context(show(len(jobs))) if show else lambda _name: None
            refused = False
            for index, files in built:
                job, bundle = jobs[index], bundles[dirs[index]]
                changes = bundle.plan(files, owner=job.owner, force=force, with_diff=diff, key=job.key)
                results[index] = changes
                refused = refused or bool(changes.refused)
                if write and not refused:
                    bundle.stage(changes)
                advance(job.key.name)
            found = [c for c in results if c is not None]
            if write and refused:
                raise refusal_error((d, c.refused) for d, c in zip(dirs, found, strict=True))
            with interrupt.blocked():  # from the first commit point to the end of the last write
                for out_dir in sorted(bundles):
                    bundles.pop(out_dir).commit()
        except BaseException:
            for out_dir in sorted(bundles, reverse=True):  # the first opened last: it may have made `out` too
                bundles[out_dir].discard()
            raise
    return found
