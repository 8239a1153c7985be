"""Parse every rendered file back with its own format's parser; a failure is a bug in rlobs, never silent."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterable

import yaml

from rlobs.errors import CheckError
from rlobs.render import Rendered

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml(r: Rendered) -> None:
    for _ in yaml.load_all(r.text, Loader=_Loader):
        pass


def _json(r: Rendered) -> None:
    json.loads(r.text)


def _hcl(r: Rendered) -> None:
    # Imported here: python-hcl2 builds a lark grammar (~100 ms), only paid when a bundle has HCL.
    import hcl2

    hcl2.loads(r.text)


def _python(r: Rendered) -> None:
    compile(r.text, r.path, "exec", dont_inherit=True)


def _shell(scripts: list[Rendered]) -> list[str]:
    """`bash -n` each script (one process per script: bash stops at the first syntax error)."""
    failures = []
    for r in scripts:
        proc = subprocess.run(["bash", "-n"], input=r.text, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            failures.append(f"{r.path}: bash -n: {proc.stderr.strip()}")
    return failures


_PARSERS: dict[str, Callable[[Rendered], None]] = {
    ".yaml": _yaml,
    ".yml": _yaml,
    ".json": _json,
    ".tf": _hcl,
    ".tfvars": _hcl,
    ".py": _python,
}


def check(files: Iterable[Rendered]) -> None:
    """Raise CheckError naming every file that does not parse back."""
    failures: list[str] = []
    scripts: list[Rendered] = []
    for r in files:
        if not r.text.endswith("\n") or r.text.endswith("\n\n"):
            failures.append(f"{r.path}: expected exactly one trailing newline")
        if r.path.endswith(".sh"):
            scripts.append(r)
            continue
        parser = _PARSERS.get(r.path[r.path.rfind(".") :])
        if parser is None:
            continue
        try:
            parser(r)
        except Exception as exc:
            failures.append(f"{r.path}: does not parse back: {type(exc).__name__}: {exc}")
    failures += _shell(scripts)
    if failures:
        raise CheckError("rendered bundle failed its parse-back check (a bug in rlobs):\n  " + "\n  ".join(failures))
