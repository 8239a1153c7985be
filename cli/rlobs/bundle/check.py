"""Parse every rendered file back with its own format's parser; a failure is a bug in rlobs, never silent."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterable

import yaml

from rlobs.bundle.hclworker import HclWorker
from rlobs.bundle.render import Rendered
from rlobs.errors import CheckError

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml(r: Rendered) -> None:
    for _ in yaml.load_all(r.text, Loader=_Loader):
        pass


def _json(r: Rendered) -> None:
    json.loads(r.text)


def _python(r: Rendered) -> None:
    compile(r.text, r.path, "exec", dont_inherit=True)


def _shell(scripts: list[Rendered]) -> list[str]:
    """`bash -n` each script, all at once (one process per script: bash stops at the first syntax error)."""
    procs = [
        (r, subprocess.Popen(["bash", "-n"], stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)) for r in scripts
    ]
    failures = []
    for r, proc in procs:
        _, err = proc.communicate(r.text)
        if proc.returncode != 0:
            failures.append(f"{r.path}: bash -n: {err.strip()}")
    return failures


_HCL_SUFFIXES = (".tf", ".tfvars")


_PARSERS: dict[str, Callable[[Rendered], None]] = {
    ".yaml": _yaml,
    ".yml": _yaml,
    ".json": _json,
    ".py": _python,
}


def check(files: Iterable[Rendered], hcl: HclWorker | None = None) -> None:
    """Raise CheckError naming every file that does not parse back.

    HCL goes to `hcl`, a python-hcl2 worker the caller started early (see hclworker.py), or a new one.
    """
    failures: list[str] = []
    scripts: list[Rendered] = []
    hcl_files: dict[str, str] = {}
    for r in files:
        if not r.text.endswith("\n") or r.text.endswith("\n\n"):
            failures.append(f"{r.path}: expected exactly one trailing newline")
        if r.path.endswith(".sh"):
            scripts.append(r)
            continue
        if r.path.endswith(_HCL_SUFFIXES):
            hcl_files[r.path] = r.text
            continue
        parser = _PARSERS.get(r.path[r.path.rfind(".") :])
        if parser is None:
            continue
        try:
            parser(r)
        except Exception as exc:
            failures.append(f"{r.path}: does not parse back: {type(exc).__name__}: {exc}")
    failures += _shell(scripts)
    if hcl_files:
        if hcl is None:
            with HclWorker() as own:
                failures += own.parse(hcl_files)
        else:
            failures += hcl.parse(hcl_files)
    if failures:
        raise CheckError("rendered bundle failed its parse-back check (a bug in rlobs):\n  " + "\n  ".join(failures))
