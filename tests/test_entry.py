"""The console script answers an up-to-date render before Typer is imported, exactly as the Typer app would, and
hands every other command line to the app."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlobs.bundle.request import Mode, RenderRequest
from rlobs.entry import _parse
from testing.helpers import REPO

# Runs the installed rlobs in subprocesses; still run by make test and CI.
pytestmark = pytest.mark.slow

BLUEPRINT = REPO / "blueprints" / "eks-jark.yaml"
RLOBS = Path(sys.executable).parent / "rlobs"
# The Typer app itself (rlobs.main), run as the console script runs it but without the script's own answer.
TYPER_APP = [sys.executable, "-c", "from rlobs.main import app; app(prog_name='rlobs')"]


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["render", "p.yaml"], ([Path("p.yaml")], RenderRequest(Path("out")))),
        (["render", "a", "-o", "o", "b", "--check"], ([Path("a"), Path("b")], RenderRequest(Path("o"), Mode.CHECK))),
        (["render", "--output=o", "a", "--format", "json"], ([Path("a")], RenderRequest(Path("o"), as_json=True))),
        (["render", "a", "--format=text", "--output", "o"], ([Path("a")], RenderRequest(Path("o")))),
    ],
)
def test_the_forms_it_answers(argv: list[str], parsed: tuple[list[Path], RenderRequest]) -> None:
    assert _parse(argv) == parsed


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["validate", "p.yaml"],
        ["--version"],
        ["render"],
        ["render", "p.yaml", "--help"],
        ["render", "p.yaml", "--diff"],
        ["render", "p.yaml", "--dry-run"],
        ["render", "p.yaml", "--force"],
        ["render", "p.yaml", "--preview"],
        ["render", "p.yaml", "--check", "--check"],
        ["render", "p.yaml", "-o", "a", "-o", "b"],
        ["render", "p.yaml", "-o"],
        ["render", "p.yaml", "-o", "--check"],
        ["render", "p.yaml", "--output="],
        ["render", "p.yaml", "-oout"],
        ["render", "p.yaml", "-o=out"],
        ["render", "p.yaml", "--format", "yaml"],
        ["render", "p.yaml", "--", "q.yaml"],
        ["render", ""],
    ],
)
def test_everything_else_goes_to_typer(argv: list[str]) -> None:
    assert _parse(argv) is None


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Profiles and bundles in every state a render meets: up to date (one, and two in out/<name>), a hand edit in
    the way, a bad profile, a profile never rendered."""
    base = tmp_path_factory.mktemp("workspace")
    shutil.copy(BLUEPRINT, base / "rlobs.yaml")
    shutil.copy(REPO / "blueprints" / "gke-managed-otel.yaml", base / "gke.yaml")
    text = BLUEPRINT.read_text()
    (base / "bad.yaml").write_text(text.replace("namespace: ", "namespace: Not_A_Name #", 1) + "extra: 1\n")
    (base / "afile").write_text("x\n")
    for argv in (["rlobs.yaml", "-o", "out"], ["rlobs.yaml", "gke.yaml", "-o", "many"], ["rlobs.yaml", "-o", "edited"]):
        done = subprocess.run([*TYPER_APP, "render", *argv], cwd=base, capture_output=True, check=False)
        assert done.returncode == 0, done.stderr
    (base / "edited/docs/runbook.md").write_text("edited\n")
    return base


def _stderr(text: str) -> tuple[list[str], list[str]]:
    """The error and warning lines in order, and the progress lines of a render of several profiles as a set: they
    come in the order the bundles finish."""
    lines = text.splitlines()
    progress = re.compile(r"rendered \d+/\d+: ")
    return [n for n in lines if not progress.match(n)], sorted(progress.sub("", n) for n in lines if progress.match(n))


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "argv",
    [
        # up to date: answered by the script itself
        ["render", "rlobs.yaml", "-o", "out"],
        ["render", "rlobs.yaml", "--output=out", "--check"],
        ["render", "rlobs.yaml", "-o", "out", "--format", "json"],
        ["render", "--check", "--format=json", "-o", "out", "rlobs.yaml"],
        ["render", "rlobs.yaml", "gke.yaml", "-o", "many", "--check"],
        # a bundle that is not up to date: a hand edit in the way, never rendered, another bundle's folder
        ["render", "rlobs.yaml", "-o", "edited", "--check"],
        ["render", "rlobs.yaml", "-o", "edited"],
        ["render", "rlobs.yaml", "-o", "edited", "--format", "json"],
        ["render", "rlobs.yaml", "-o", "new"],
        ["render", "rlobs.yaml", "-o", "new", "--check", "--format", "json"],
        ["render", "gke.yaml", "-o", "out", "--check"],
        ["render", "rlobs.yaml", "gke.yaml", "-o", "out"],
        # bad input
        ["render", "bad.yaml", "-o", "out"],
        ["render", "bad.yaml", "-o", "out", "--format", "json"],
        ["render", "missing.yaml", "-o", "out"],
        ["render", "missing.yaml", "-o", "out", "--check", "--format=json"],
        ["render", "rlobs.yaml", "-o", "afile"],
        ["render", "rlobs.yaml", "-o", "out/README.md", "--check"],
        ["render", "rlobs.yaml", "rlobs.yaml", "-o", "many"],
        # unusual command lines
        ["render", "rlobs.yaml", "-o", "out", "--check", "--check"],
        ["render", "rlobs.yaml", "-o", "new", "-o", "out", "--check"],
        ["render", "rlobs.yaml", "-oout", "--check"],
        ["render", "rlobs.yaml", "-o"],
        ["render", "rlobs.yaml", "-o", "out", "--format", "yaml"],
        ["render", "rlobs.yaml", "-o", "out", "--format", "JSON"],
        ["render", "rlobs.yaml", "-o", "out", "--", "gke.yaml"],
        ["render", "rlobs.yaml", "-o", "out", "--dry-run"],
        ["render", "rlobs.yaml", "-o", "out", "--no-such-flag"],
        ["render", "-h"],
        ["render"],
        ["render", ""],
        ["validate", "rlobs.yaml"],
        ["validate", "bad.yaml", "--format", "json"],
        ["--version"],
        [],
    ],
    ids=lambda argv: " ".join(argv) or "(none)",
)
def test_the_script_prints_and_exits_as_the_typer_app(workspace: Path, tmp_path: Path, argv: list[str]) -> None:
    """stdout, stderr, the exit code and the files left behind are the same, whether the console script or the Typer
    app runs the command line (each in its own copy of the same workspace)."""
    runs = {}
    for side, command in (("script", [str(RLOBS)]), ("app", TYPER_APP)):
        shutil.copytree(workspace, tmp_path / side)
        done = subprocess.run(
            [*command, *argv], cwd=tmp_path / side, capture_output=True, env={**os.environ, "COLUMNS": "100"}
        )
        runs[side] = (done.returncode, done.stdout.decode(), _stderr(done.stderr.decode()), _files(tmp_path / side))
    assert runs["script"] == runs["app"]
    assert "Traceback" not in str(runs["script"][2])


def test_an_up_to_date_check_imports_no_cli_framework(tmp_path: Path) -> None:
    profile = tmp_path / "rlobs.yaml"
    shutil.copy(BLUEPRINT, profile)
    out = tmp_path / "out"
    assert subprocess.run([str(RLOBS), "render", str(profile), "-o", str(out)], check=False).returncode == 0
    code = (
        "import sys\n"
        f"sys.argv = ['rlobs', 'render', {str(profile)!r}, '-o', {str(out)!r}, '--check']\n"
        "from rlobs import entry\n"
        "try:\n    entry.run()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'pydantic', 'jinja2', 'hcl2', 'rich'))\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def _into_closed_pipe(command: list[str], cwd: Path) -> tuple[int, str]:
    """A command writing its report into a pipe nobody reads any more (`rlobs ... | head -0`)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(command, stdout=writer, stderr=subprocess.PIPE, cwd=cwd, text=True, check=False)
    finally:
        os.close(writer)
    return done.returncode, done.stderr


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_closed_output_pipe_ends_as_the_typer_app_ends(workspace: Path, fmt: str) -> None:
    argv = ["render", "rlobs.yaml", "-o", "out", "--check", "--format", fmt]
    assert _into_closed_pipe([str(RLOBS), *argv], workspace) == _into_closed_pipe([*TYPER_APP, *argv], workspace)


# A real SIGINT, sent by the process to itself from an audit hook (sys.addaudithook) at the first import of a point:
# `typer` while the Typer app is imported, or any import once rlobs.main is loaded, i.e. while Typer builds and parses
# the command line, before any command's own error boundary runs.
_SIGINT_AT = """
import os, signal, sys
point = sys.argv.pop(1)
def hook(event, args):
    main = sys.modules.get("rlobs.main")
    if event == "import" and (args[0] == point or (point == "parse" and hasattr(main, "run"))):
        os.kill(os.getpid(), signal.SIGINT)
sys.addaudithook(hook)
from rlobs.entry import run
run()
"""


@pytest.mark.parametrize("point", ["typer", "parse"])
@pytest.mark.parametrize("argv", [["blueprints"], ["render", "missing.yaml", "-o", "out", "--dry-run"]])
def test_ctrl_c_while_typer_starts_or_parses_says_so_and_exits_130(tmp_path: Path, point: str, argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _SIGINT_AT, point, *argv], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr, done.stdout) == (130, "error: interrupted, nothing written\n", "")
    assert list(tmp_path.iterdir()) == []


# A real SIGINT as the render's report starts printing: the write is done by then.
_SIGINT_AT_REPORT = """
import os, signal, time
from rlobs import output
real = output.report_render
def report(*args, **kw):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
    return real(*args, **kw)
output.report_render = report
from rlobs.main import run
run()
"""


@pytest.mark.parametrize(("flags", "said"), [([], "interrupted after the commit: finished"), (["--dry-run"], None)])
def test_ctrl_c_while_the_report_prints_says_whether_the_bundle_was_written(
    tmp_path: Path, flags: list[str], said: str | None
) -> None:
    profile = str(REPO / "blueprints" / "eks-jark.yaml")
    argv = [sys.executable, "-c", _SIGINT_AT_REPORT, "render", profile, "-o", "out", *flags]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (130, f"error: {said or 'interrupted, nothing written'}\n")
    assert (tmp_path / "out/.rlobs-manifest.json").exists() == (not flags)
