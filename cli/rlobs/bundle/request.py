"""What a render is asked to do: one value from the command line through the commands to the writer and the report."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import Flag
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlobs.bundle.cache import RenderKey
    from rlobs.bundle.owner import Owner
    from rlobs.bundle.spec import Rendered
    from rlobs.bundle.write import Changes, Producible

# Called with the number of bundles, a function to call with each one's name as it is done (rlobs.progress.bundles).
Progress = Callable[[int], AbstractContextManager[Callable[[str], None]]]


class Mode(Flag):
    """No flag writes; --check, --diff and --dry-run write nothing and combine (`--check --diff`: diff, exit 1)."""

    WRITE = 0
    CHECK = 1
    DIFF = 2
    DRY_RUN = 4

    @classmethod
    def of(cls, *, check: bool = False, diff: bool = False, dry_run: bool = False) -> Mode:
        return cls(sum(m.value for m, on in ((cls.CHECK, check), (cls.DIFF, diff), (cls.DRY_RUN, dry_run)) if on))


@dataclass(frozen=True, slots=True)
class RenderRequest:
    out: Path = Path("out")  # one profile's (or a fleet's) bundle folder, or the folder of several bundles
    mode: Mode = Mode.WRITE
    force: bool = False  # overwrite files rlobs did not write or that were edited; take over another owner's folder
    progress: Progress | None = None  # shown while many bundles render
    as_json: bool = False  # the report's format

    @property
    def writes(self) -> bool:
        return self.mode == Mode.WRITE

    @property
    def checks(self) -> bool:
        return Mode.CHECK in self.mode

    @property
    def with_diff(self) -> bool:
        return Mode.DIFF in self.mode

    def render_into(
        self, files: tuple[Rendered, ...], producible: Producible, *, owner: Owner, key: RenderKey | None = None
    ) -> Changes:
        """Locked for both plan and write; writing nothing, it plans as the write does and reports its refusals."""
        from rlobs.bundle.write import open_bundle

        with open_bundle(self.out, producible, write=self.writes) as bundle:
            changes = bundle.plan(files, owner=owner, force=self.force, with_diff=self.with_diff, key=key)
            if self.writes:
                bundle.write(changes)  # raises the plan's refusals, writing nothing (and removes a folder it made)
        return changes
