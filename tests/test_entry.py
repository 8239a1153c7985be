"""The console script answers an up-to-date render before Typer is imported, exactly as the Typer app would,
and hands every other command line to the app."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlobs.entry import _parse, _Render
from rlobs.main import app
from testing.helpers import REPO

# Runs the installed rlobs in subprocesses; still run by make test and CI.
pytestmark = pytest.mark.slow

BLUEPRINT = REPO / "blueprints" / "eks-jark.yaml"


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["render", "p.yaml"], _Render([Path("p.yaml")], Path("out"), check=False, as_json=False)),
        (["render", "a", "-o", "o", "b", "--check"], _Render([Path("a"), Path("b")], Path("o"), True, False)),
        (["render", "--output=o", "a", "--format", "json"], _Render([Path("a")], Path("o"), False, True)),
        (["render", "a", "--format=text", "--output", "o"], _Render([Path("a")], Path("o"), False, False)),
    ],
)
def test_the_render_forms_it_answers(argv: list[str], parsed: _Render) -> None:
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
        ["render", "p.yaml", "-o", "a", "-o", "b"],
        ["render", "p.yaml", "-o"],
        ["render", "p.yaml", "-o", "--check"],
        ["render", "p.yaml", "-oout"],
        ["render", "p.yaml", "--format", "yaml"],
        ["render", "p.yaml", "--", "q.yaml"],
        ["render", ""],
    ],
)
def test_everything_else_goes_to_typer(argv: list[str]) -> None:
    assert _parse(argv) is None


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    rlobs = Path(sys.executable).parent / "rlobs"
    return subprocess.run([str(rlobs), *args], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("extra", [[], ["--check"], ["--format", "json"], ["--check", "--format", "json"]])
def test_the_answer_is_what_the_typer_app_prints(tmp_path: Path, extra: list[str]) -> None:
    profile = tmp_path / "rlobs.yaml"
    shutil.copy(BLUEPRINT, profile)
    out = tmp_path / "out"
    assert _script("render", str(profile), "-o", str(out)).returncode == 0
    fast = _script("render", str(profile), "-o", str(out), *extra)
    full = CliRunner().invoke(app, ["render", str(profile), "-o", str(out), *extra])
    assert (fast.returncode, fast.stdout) == (full.exit_code, full.stdout)
    files = sum(1 for f in out.rglob("*") if f.is_file() and not f.name.startswith(".rlobs"))
    assert f"{files} unchanged" in fast.stdout or f'"unchanged": {files}' in fast.stdout


def test_an_up_to_date_check_imports_no_cli_framework(tmp_path: Path) -> None:
    profile = tmp_path / "rlobs.yaml"
    shutil.copy(BLUEPRINT, profile)
    assert _script("render", str(profile), "-o", str(tmp_path / "out")).returncode == 0
    code = (
        "import sys\n"
        f"sys.argv = ['rlobs', 'render', {str(profile)!r}, '-o', {str(tmp_path / 'out')!r}, '--check']\n"
        "from rlobs import entry\n"
        "try:\n    entry.run()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'pydantic', 'jinja2', 'hcl2', 'rich'))\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_a_stale_bundle_still_fails_the_check(tmp_path: Path) -> None:
    profile = tmp_path / "rlobs.yaml"
    shutil.copy(BLUEPRINT, profile)
    out = tmp_path / "out"
    assert _script("render", str(profile), "-o", str(out)).returncode == 0
    (out / "docs/runbook.md").write_text("edited\n")
    done = _script("render", str(profile), "-o", str(out), "--check")
    assert done.returncode == 2  # the render would refuse to lose the hand edit
    assert f"would refuse: {out / 'docs/runbook.md'}: was edited" in done.stdout
    profile.write_bytes(profile.read_bytes() + b"# a comment\n")
    (out / "docs/runbook.md").unlink()
    done = _script("render", str(profile), "-o", str(out), "--check")
    assert done.returncode == 1
    assert f"would create {out / 'docs/runbook.md'}" in done.stdout
