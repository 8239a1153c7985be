"""Parse every rendered file back with its own format's parser; a failure is a bug in rlobs, never silent."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType

import yaml

from rlobs.bundle import hclread, memo
from rlobs.bundle.filters import CachedResolve
from rlobs.bundle.hclworker import HclWorker
from rlobs.bundle.spec import Format, Rendered
from rlobs.credentials import found_in
from rlobs.errors import CheckError, RlobsError


class _Loader(CachedResolve, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's parser when PyYAML has it, the safe constructor, each scalar's implicit tag resolved once."""


def _yaml(r: Rendered) -> None:
    for _ in yaml.load_all(r.text, Loader=_Loader):
        pass


def _yaml_syntax(r: Rendered) -> None:
    """YAML the serialiser wrote from data: parsed (every event of every document), not constructed. Its scalars
    are plain strings, numbers, booleans and nulls quoted by the same resolver the loader uses, so constructing
    them adds nothing the parse has not shown; a template's YAML is constructed too (a value such as a bad date
    written plain only fails there). libyaml's parser runs over every event without building Python objects for
    them (CParser.raw_parse, PyYAML's _yaml.pyx), where PyYAML has it."""
    loader = _Loader(r.text)
    try:
        raw_parse = getattr(loader, "raw_parse", None)
        if raw_parse is not None:
            raw_parse()
            return
        while loader.check_event():
            loader.get_event()
    finally:
        loader.dispose()


def _json(r: Rendered) -> None:
    json.loads(r.text)


def _python(r: Rendered) -> None:
    compile(r.text, r.path, "exec", dont_inherit=True)


def _none(r: Rendered) -> None:
    """Markdown and plain text have no syntax to get wrong."""


# In-process parsers; shell and HCL are checked in batches by other processes (see Checker.check).
_SERIALISED: dict[Format, Callable[[Rendered], None]] = {"yaml": _yaml_syntax}  # what Rendered.serialised changes
_PARSERS: dict[Format, Callable[[Rendered], None]] = {
    "yaml": _yaml,
    "json": _json,
    "py": _python,
    "md": _none,
    "text": _none,
}


_HCL_ESCAPES = re.compile(r"(\$\$|%%)\{")


def hcl_for_parser(text: str) -> str:
    """HCL text as python-hcl2 can read it, with the same values: its lexer takes `$${` and `%%{` only when a `}`
    follows, while Terraform reads them anywhere in a quoted string as the literal `${` and `%{` (hashicorp/hcl
    hclsyntax spec.md, "Template Literals"); `\u007b` is the same literal `{` and is read by both."""
    return _HCL_ESCAPES.sub(lambda m: m.group(1)[0] + "\\u007b", text)


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
    """The parse-back stage; one checker serves many bundles. HCL in the attribute-file shape rlobs writes (its
    tfvars) is read by rlobs.bundle.hclread; any other HCL (the GKE Terraform templates) by python-hcl2 in a worker
    process (hclworker.py), started only when some HCL text needs it, before the other formats are checked so that
    its ~250 ms start-up overlaps them.

    `known` maps bundle paths to digests (sha256) of HCL text that already passed this check: the manifest of the
    bundle being re-rendered, as rlobs writes only checked files. HCL text with a known digest is not parsed again.

    A file that passed is remembered by its format and digest, and the same text is not checked again by this
    checker: the bundles of many profiles (or of a fleet's clusters) share most of their files byte for byte (the
    app, the docs, the tests), and every check here depends on the text and the format alone. What check()
    remembers is bounded (rlobs.bundle.memo): a pool worker's checker serves any number of bundles.
    """

    def __init__(self, known: Mapping[str, set[str]] | None = None) -> None:
        self._known = known or {}
        self._hcl: HclWorker | None = None
        self._passed: set[tuple[str, str]] = set()
        # text -> its sha256: a fleet's files come back from the workers (remember) and are checked again as the
        # fleet's (check), the same str objects, so each is hashed once. Emptied by each check(), so a checker
        # serving many bundles (a pool worker's) holds no text beyond the bundle it checks.
        self._digests: dict[str, str] = {}

    def _worker(self) -> HclWorker:
        if self._hcl is None:
            self._hcl = HclWorker()
        return self._hcl

    def check(self, files: Iterable[Rendered]) -> None:
        """Raise CheckError naming every file that does not parse back, and refuse any credential-shaped text."""
        todo = self._new(files)
        self._digests.clear()
        files = tuple(r for r, _ in todo)
        _no_credentials(files)
        failures: list[str] = []
        scripts: list[Rendered] = []
        hcl_files = self._for_worker(todo)
        if hcl_files:
            self._worker()  # starting now, while the other formats are checked
        for r in files:
            if not r.text.endswith("\n") or r.text.endswith("\n\n"):
                failures.append(f"{r.path}: expected exactly one trailing newline")
            if r.fmt == "sh":
                scripts.append(r)
            elif r.fmt != "hcl":  # HCL: read by hclread above, or by the worker below
                try:
                    (_SERIALISED.get(r.fmt, _PARSERS[r.fmt]) if r.serialised else _PARSERS[r.fmt])(r)
                except Exception as exc:
                    failures.append(f"{r.path}: does not parse back: {type(exc).__name__}: {exc}")
        failures += _shell(scripts)
        if hcl_files:
            failures += self._worker().parse(hcl_files)
        if failures:
            raise CheckError(
                "rendered bundle failed its parse-back check (a bug in rlobs):\n  " + "\n  ".join(failures)
            )
        # HCL skipped as known from a manifest was not checked here: only what was is remembered.
        memo.add(
            self._passed, ((_kind(r), d) for r, d in todo if not (r.fmt == "hcl" and d in self._known.get(r.path, ())))
        )

    def remember(self, files: Iterable[Rendered]) -> None:
        """Files another checker of this render passed (a pool worker's, rlobs.bundle.pool): not checked again. Not
        bounded, unlike what check() remembers: these are one fleet's files, which the fleet's build holds anyway."""
        self._passed.update((_kind(r), self._digest(r.text)) for r in files)

    def _new(self, files: Iterable[Rendered]) -> list[tuple[Rendered, str]]:
        """Each text (with its digest) not checked before, once per format: a fleet's clusters share most files."""
        todo, seen = [], set(self._passed)
        for r in files:
            digest = self._digest(r.text)
            if (_kind(r), digest) not in seen:
                seen.add((_kind(r), digest))
                todo.append((r, digest))
        return todo

    def _digest(self, text: str) -> str:
        found = self._digests.get(text)
        if found is None:
            found = self._digests[text] = hashlib.sha256(text.encode()).hexdigest()
        return found

    def _for_worker(self, todo: list[tuple[Rendered, str]]) -> dict[str, str]:
        """The new HCL text (path -> text as python-hcl2 reads it) that rlobs.bundle.hclread leaves to python-hcl2."""
        found = {}
        for r, digest in todo:
            if r.fmt == "hcl" and digest not in self._known.get(r.path, ()):
                try:
                    hclread.read(r.text)
                except hclread.NotOurs:
                    found[r.path] = hcl_for_parser(r.text)
        return found

    def close(self) -> None:
        if self._hcl is not None:
            self._hcl.close()

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()


def _kind(r: Rendered) -> str:
    """What a passed check is remembered by, with the digest: the format, and whether the text was checked as
    serialised data (a template's identical text is checked in full)."""
    return _DATA_KIND.get(r.fmt, r.fmt) if r.serialised else r.fmt


_DATA_KIND = {fmt: f"{fmt}:data" for fmt in _SERIALISED}  # one string each, however many files are remembered


def _no_credentials(files: tuple[Rendered, ...]) -> None:
    """The last line of defence: whatever the profile held, no credential shape reaches a file bound for git."""
    found = [f"{r.path}: {', '.join(shapes)}" for r in files if (shapes := found_in(r.text))]
    if found:
        raise RlobsError(
            "refusing to write what looks like a credential (keep it in a Kubernetes Secret and reference it):\n  "
            + "\n  ".join(found)
        )


def check(files: Iterable[Rendered]) -> None:
    """Check one set of files with a checker of its own."""
    with Checker() as checker:
        checker.check(files)
