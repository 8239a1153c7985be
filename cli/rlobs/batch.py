"""Many profiles in one render: built in parallel, staged as each is done, committed when every one is staged.

Every profile is loaded and validated before any bundle is built (commands._load_all), so a bad profile stops the
render before anything is written. The bundles are then built (planned, rendered, parse-checked) by a process pool
sized to the cores this process may run on (rlobs.bundle.pool), forked after the profiles are validated: only
the rendered files travel between processes, once.

Memory stays bounded: at most two bundles per worker are in flight, and each finished bundle is compared with its
directory and staged there (rlobs.bundle.write: its files durable in the staging folder, the bundle itself
unchanged) as soon as it arrives, then dropped; only its list of changes is kept. Only when every bundle is staged
is each one committed. Anything that goes wrong before that (a file that fails its check, a directory that refuses
the write, Ctrl-C) discards every staging folder: one bad bundle writes nothing. The output is byte for byte what
rendering the profiles one by one writes (tests/test_batch.py), and results are reported in the profiles' order.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlobs.bundle.spec import Rendered
    from rlobs.bundle.write import Bundle, Changes, RenderKey, Staged
    from rlobs.profile.model import Profile


@dataclass(frozen=True, slots=True)
class Job:
    path: Path  # the profile file, as given
    profile: Profile
    key: RenderKey
    out_dir: Path


def render_many(
    jobs: list[Job],
    *,
    write: bool,
    force: bool,
    diff: bool,
    advance: Callable[[str], None] = lambda _: None,
    workers: int | None = None,
) -> list[Changes]:
    """Each job's changes, in the jobs' order. Builds every job's bundle, plans each against its directory (all
    locked, in path order, for the whole render) and stages it as it arrives; commits every staged bundle once all
    are staged. `advance` is called with each bundle's name as it is done (the progress display)."""
    from rlobs.bundle import pool
    from rlobs.bundle.write import open_bundle
    from rlobs.pipeline import build
    from rlobs.targets import producible

    def bundle_of(index: int) -> tuple[Rendered, ...]:
        return build(jobs[index].profile, pool.checker())

    results: list[Changes | None] = [None] * len(jobs)
    with ExitStack() as stack:
        dirs = sorted({j.out_dir for j in jobs})
        bundles: dict[Path, Bundle] = {d: stack.enter_context(open_bundle(d, producible, write=write)) for d in dirs}
        staged: dict[Path, Staged | None] = {}
        try:
            for index, files in pool.run(bundle_of, len(jobs), workers):
                job = jobs[index]
                bundle = bundles[job.out_dir]
                # --check, --diff and --dry-run report foreign or edited files; only a write refuses them.
                changes = bundle.plan(files, force=force or not write, with_diff=diff, key=job.key)
                if write:
                    staged[job.out_dir] = bundle.stage(files, changes, key=job.key)
                results[index] = changes
                advance(job.key.name)
        except BaseException:
            for out_dir in staged:
                bundles[out_dir].discard()
            raise
        for out_dir, staging in staged.items():
            bundles[out_dir].commit(staging)
    return [r for r in results if r is not None]
