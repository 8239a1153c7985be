"""The run-time check of a rendered bundle: what a profile value could still break, and the credential scan.

What a serialiser wrote from data (rlobs.bundle.filters) is not parsed back here: the tests prove with the real
parsers that it reads back as the data (tests/test_serialisers.py, tests/testing/bundles.py). A template's output is
parsed with its format's parser (`bash -n`, python-hcl2, `compile`, PyYAML, json). Every file is scanned for
credential shapes. A failure is a bug in rlobs, never silent.
"""

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
    """python-hcl2 over each file. Imported here, only when a bundle has HCL from a template: importing it and its
    first loads() (lark's grammar) cost ~200 ms. A child process loading it while the other formats are checked
    was measured no faster on a cold render of the GKE terraform-mode profile (median of 9 on 2 cores: 0.45 s
    in-process, 0.47 s with the child), so it runs in this process."""
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


# One bash process runs `bash -n` on each script in turn, its stdin the script's file (as a pipe would feed it:
# same parser, same messages), and names the scripts that fail; one spawn from here instead of one per script.
_SHELL_LOOP = 'for i; do bash -n <"$i.sh" 2>"$i.err" || printf "%s\\n" "$i"; done'


def _shell(scripts: list[Rendered]) -> list[str]:
    """`bash -n` each script (one bash process per script, as bash stops at the first syntax error)."""
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
    """The check stage; one checker serves many bundles.

    `known`: bundle path -> digests of HCL text that passed before (the manifest of the bundle re-rendered: rlobs
    writes only checked files); such text is not parsed again, so re-rendering an unchanged Terraform bundle does
    not load python-hcl2 (the GKE terraform-mode profile's check: 25 ms instead of 230).

    The texts of the last check() that passed, and those remember() was given, are not checked again: a pool
    worker's bundles share files byte for byte (the app's Python), and a fleet's clusters, checked by the workers,
    come back in the fleet's files (the EKS blueprint renamed: 3 ms after the first instead of 17; the example
    fleet, 143 files: 13 ms instead of 140). Each check() forgets what came before it.
    """

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
            if r.serialised:
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
        """Files another checker of this render passed (a pool worker's, rlobs.bundle.pool): not checked again by
        the next check()."""
        self._passed.update(map(_key, files))


def _key(r: Rendered) -> tuple[str, str]:
    """What a passed check is remembered by: the format, as a template's text is parsed and a serialiser's is not,
    and the text's digest."""
    return ("data" if r.serialised else r.fmt, sha256(r.text))


def _no_credentials(files: list[Rendered]) -> None:
    """The last line of defence: whatever the profile held, no credential shape reaches a file bound for git."""
    found = [f"{r.path}: {', '.join(shapes)}" for r in files if (shapes := found_in(r.text))]
    if found:
        raise RlobsError(
            "refusing to write what looks like a credential (keep it in a Kubernetes Secret and reference it):\n  "
            + "\n  ".join(found)
        )
