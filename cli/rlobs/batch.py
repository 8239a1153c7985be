"""Profiles rendered into bundles: one into its folder, or several, built in parallel, into a folder each."""

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
    """Every profile loaded and keyed before any is rendered, so one bad profile writes nothing at all."""
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
    from rlobs.bundle.cache import known_digests
    from rlobs.bundle.check import Checker
    from rlobs.fleet.paths import producible
    from rlobs.pipeline import build_named

    # HCL text this machine last wrote there was checked then (rlobs writes only checked files): not parsed again.
    files = build_named(job.path, job.profile, Checker(known_digests(request.out)))
    return request.render_into(files, producible, owner=job.owner, key=job.key)


def render_many(jobs: list[Job], request: RenderRequest, workers: int | None = None) -> list[Changes]:
    """Each job's changes, in the jobs' order; nothing is committed unless every bundle is planned and none refused."""
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
        # Read-only, so no folder is made for it: a bundle at `out` itself refuses every member.
        parent = stack.enter_context(open_bundle(out, producible, write=False))
        write_dirs = write and parent.owner() is None
        try:
            for out_dir in sorted(dirs):  # locked in path order: renders of overlapping sets never deadlock
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
