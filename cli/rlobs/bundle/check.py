"""The run-time check of a rendered bundle: each template's output parsed back, and every file's credential scan."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterable, Mapping

import yaml

from rlobs.bundle.cache import sha256
from rlobs.bundle.spec import Format, Rendered
from rlobs.credentials import found_in
from rlobs.errors import CheckError, RlobsError

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML has it


# Parsers run in this process, one file at a time; shell scripts and HCL are checked together (see Checker.check).
# Markdown and plain text have no syntax to get wrong.
_PARSERS: dict[Format, Callable[[Rendered], object]] = {
    "yaml": lambda r: list(yaml.load_all(r.text, Loader=_Loader)),
    "json": lambda r: json.loads(r.text),
    "py": lambda r: compile(r.text, r.path, "exec", dont_inherit=True),
    "md": lambda _r: None,
    "text": lambda _r: None,
}


_HCL_ESCAPES = re.compile(r"(\$\$|%%)\{")


def hcl_for_parser(text: str) -> str:
    """HCL text as python-hcl2 can read it, with the same values: its lexer takes `$${` and `%%{` only when a `}`
    follows, while Terraform reads them anywhere in a quoted string as the literal `${` and `%{` (hashicorp/hcl
    hclsyntax spec.md, "Template Literals"); `\u007b` is the same literal `{` and is read by both."""
    return _HCL_ESCAPES.sub(lambda m: m.group(1)[0] + "\\u007b", text)


def _hcl(files: list[Rendered]) -> list[str]:
    """Imported only when a bundle has HCL from a template: importing it and its first loads() cost ~200 ms. Loading
    it in a child meanwhile was no faster (GKE terraform-mode, cold, median of 9 on 2 cores: 0.45 s here, 0.47 s)."""
    if not files:
        return []
    import hcl2

    failures = []
    for r in files:
        try:
            hcl2.loads(hcl_for_parser(r.text))
        except Exception as exc:
            failures.append(f"{r.path}: does not parse back: {type(exc).__name__}: {exc}")
    return failures


# One bash process runs `bash -n` on each script in turn (bash stops at a script's first syntax error), its stdin the
# script's file (as a pipe would feed it: same parser, same messages), and names the scripts that fail; one spawn
# from here instead of one per script.
_SHELL_LOOP = 'for i; do bash -n <"$i.sh" 2>"$i.err" || printf "%s\\n" "$i"; done'


def _shell(scripts: list[Rendered]) -> list[str]:
    if not scripts:
        return []
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="rlobs-sh-") as tmp:
        folder = Path(tmp)
        for i, r in enumerate(scripts):
            (folder / f"{i}.sh").write_text(r.text, encoding="utf-8")
        done = subprocess.run(
            ["bash", "-c", _SHELL_LOOP, "bash", *(str(i) for i in range(len(scripts)))],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or done.stderr:
            raise CheckError(f"bash -n could not run: {done.stderr.strip() or f'exit {done.returncode}'}")
        return [
            f"{scripts[int(i)].path}: bash -n: {(folder / f'{i}.err').read_text(encoding='utf-8').strip()}"
            for i in done.stdout.split()
        ]


class Checker:
    """One checker serves many bundles. `known`: bundle path -> digests of HCL that passed before (the re-rendered
    bundle's manifest: rlobs writes only checked files), not parsed again (GKE terraform-mode: 25 ms instead of 230).
    Text of the last check() that passed, or given to remember(), is not checked again: a pool worker's bundles share
    files, and a fleet's clusters come back in its files (the example fleet, 143 files: 13 ms instead of 140)."""

    def __init__(self, known: Mapping[str, set[str]] | None = None) -> None:
        self._known = known or {}
        self._passed: set[tuple[str, str]] = set()  # (format, sha256) of text that passed

    def check(self, files: Iterable[Rendered]) -> None:
        """Raise CheckError naming every file that does not parse back, and refuse any credential-shaped text."""
        keys = {r: _key(r) for r in files}
        todo = [r for r, key in keys.items() if key not in self._passed]
        _no_credentials(todo)
        failures: list[str] = []
        scripts: list[Rendered] = []
        hcl: list[Rendered] = []
        trusted: set[tuple[str, str]] = set()  # passed on the manifest's word, not checked here
        for r in todo:
            if not r.text.endswith("\n") or r.text.endswith("\n\n"):
                failures.append(f"{r.path}: expected exactly one trailing newline")
            if r.serialised:  # the tests read a serialiser's output back with the real parsers (test_serialisers.py)
                continue
            if r.fmt == "sh":
                scripts.append(r)
            elif r.fmt == "hcl":
                if keys[r][1] in self._known.get(r.path, ()):
                    trusted.add(keys[r])
                else:
                    hcl.append(r)
            else:
                try:
                    _PARSERS[r.fmt](r)
                except Exception as exc:
                    failures.append(f"{r.path}: does not parse back: {type(exc).__name__}: {exc}")
        failures += _shell(scripts)
        failures += _hcl(hcl)
        if failures:
            raise CheckError(
                "rendered bundle failed its parse-back check (a bug in rlobs):\n  " + "\n  ".join(failures)
            )
        self._passed = set(keys.values()) - (trusted - {keys[r] for r in hcl})

    def remember(self, files: Iterable[Rendered]) -> None:
        """Files another checker of this render passed (a pool worker's): not checked again by the next check()."""
        self._passed.update(map(_key, files))


def _key(r: Rendered) -> tuple[str, str]:
    """The format ("data" for a serialiser's text, which is not parsed) and the text's digest."""
    return ("data" if r.serialised else r.fmt, sha256(r.text))


def _no_credentials(files: list[Rendered]) -> None:
    """The last line of defence: whatever the profile held, no credential shape reaches a file bound for git."""
    found = [f"{r.path}: {', '.join(shapes)}" for r in files if (shapes := found_in(r.text))]
    if found:
        raise RlobsError(
            "refusing to write what looks like a credential (keep it in a Kubernetes Secret and reference it):\n  "
            + "\n  ".join(found)
        )
