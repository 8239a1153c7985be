"""A bundle's place in its git work tree: the one source of its repository path (eks.gitops.path), so both agree."""

from __future__ import annotations

import os
from itertools import accumulate
from pathlib import Path as FsPath
from typing import Annotated, Any, TypeVar

from rlobs.errors import Problem, ProfileError, RlobsError

# The Quick start's bundle folder: init's proposal, the pre-commit hook's --output and the blueprints' path.
DEFAULT_FOLDER = "observability"

M = TypeVar("M")


def place(folder: FsPath) -> tuple[FsPath, str] | None:
    """(top, `folder`'s path there) by the nearest `.git` up; nothing is run or opened, so no repository steers it."""
    here = FsPath(os.path.abspath(folder))
    for top in (here, *here.parents):
        if os.path.lexists(top / ".git"):
            return top, here.relative_to(top).as_posix()
    return None


def where(folder: FsPath) -> str | None:
    found = place(folder)
    return None if found is None else found[1]


def from_here(path: str) -> str:
    """What `render -o` takes from the current folder for the repository path `path` (itself outside a work tree)."""
    found = place(FsPath.cwd())
    return path if found is None else os.path.relpath(found[0] / path)


def hook_args(profile: FsPath, folder: str) -> str | None:
    """The pre-commit hook rlobs-check's args (run from the work tree's top) for this profile rendered into `folder`."""
    found, bundle = place(profile), place(FsPath(folder))
    if found is None or bundle is None or found[0] != bundle[0]:
        return None
    return f"[{found[1]}, --output, {bundle[1]}]"


def proposed(path: str) -> str:
    """The repository path of the folder `path` names from the current folder (itself outside a work tree)."""
    found = place(FsPath(path))
    return path if found is None or found[1] == "." else found[1]


def placed(profile: M, key: tuple[str, ...], out: FsPath, text: str, display: str) -> M:
    """`profile` with the repository path at `key` (attribute names) from `out`'s place; refused if it says another."""
    found = place(out)
    if found is None:
        return profile
    top, derived = found
    *parents, name = key
    chain: list[Any] = list(accumulate(parents, getattr, initial=profile))
    stated = getattr(chain[-1], name)
    if derived == ".":
        fix = f"render into a folder of it, e.g. -o {os.path.relpath(top / stated)}"
        raise RlobsError(f"-o {out}: expected a folder inside the git work tree at {top}, got its top: {fix}")
    if name in chain[-1].model_fields_set and stated != derived:
        from rlobs.profile.yamlsource import load_located

        pos = load_located(text).pos(key)
        there = os.path.relpath(top / stated)
        fix = f"set it to {derived} or remove it (it then follows -o), or render with -o {there}"
        message = f"expected {derived} (-o {out} is there in the git work tree at {top}), got {stated}: {fix}"
        raise ProfileError([Problem(display, pos.line, pos.column, ".".join(key), message)])
    field = type(chain[-1]).model_fields[name]
    from pydantic import TypeAdapter, ValidationError

    rule: Any = Annotated[(field.annotation, *field.metadata)]  # the field's own: a folder Argo CD can sync
    try:
        TypeAdapter(rule).validate_python(derived)
    except ValidationError as exc:
        why = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise RlobsError(f"-o {out}: {why}, got {derived!r} (its path in the git work tree at {top})") from None
    value: Any = derived
    for obj, part in zip(reversed(chain), reversed(key), strict=False):
        value = obj.model_copy(update={part: value})
    return value  # type: ignore[no-any-return]
