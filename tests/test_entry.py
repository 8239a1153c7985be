"""The console script answers a plain render (an up-to-date one before Typer is imported) and a plain validate
exactly as the Typer app would, and hands every other command line to the app."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlobs.entry import _parse, _Render, _Validate
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
        (["validate", "p.yaml"], _Validate([Path("p.yaml")], as_json=False)),
        (["validate", "a", "--format", "json", "b"], _Validate([Path("a"), Path("b")], as_json=True)),
    ],
)
def test_the_forms_it_answers(argv: list[str], parsed: _Render | _Validate) -> None:
    assert _parse(argv) == parsed


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["validate"],
        ["validate", "p.yaml", "--cluster-secrets", "s.yaml"],
        ["validate", "p.yaml", "-o", "out"],
        ["validate", "p.yaml", "--check"],
        ["validate", "p.yaml", "--format", "yaml"],
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


def _bad_profile(tmp_path: Path) -> Path:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BLUEPRINT.read_text().replace("namespace: ", "namespace: Not_A_Name #", 1) + "extra: 1\n")
    return bad


@pytest.mark.parametrize(
    "case",
    ["cold", "cold-json", "cold-check", "two", "bad", "bad-json", "missing", "fleet"],
)
def test_a_cold_render_run_by_the_script_is_what_the_typer_app_does(tmp_path: Path, case: str) -> None:
    """Output, errors and exit code the same, whether the console script or the Typer app runs it."""
    profile = tmp_path / "rlobs.yaml"
    shutil.copy(BLUEPRINT, profile)
    args = {
        "cold": [str(profile)],
        "cold-json": [str(profile), "--format", "json"],
        "cold-check": [str(profile), "--check"],
        "two": [str(profile), str(REPO / "blueprints" / "gke-managed-otel.yaml")],
        "bad": [str(_bad_profile(tmp_path))],
        "bad-json": [str(_bad_profile(tmp_path)), "--format=json"],
        "missing": [str(tmp_path / "missing.yaml")],
        "fleet": [str(REPO / "blueprints" / "fleet" / "rl-fleet.yaml")],
    }[case]
    fast = _script("render", *args, "-o", str(tmp_path / "fast"))
    full = CliRunner().invoke(app, ["render", *args, "-o", str(tmp_path / "full")])
    assert fast.returncode == full.exit_code
    assert fast.stdout.replace("/fast", "/full") == full.stdout
    # Progress lines (several profiles) come in the order the bundles finish.
    errors = [[n for n in err.splitlines() if not n.startswith("rendered ")] for err in (fast.stderr, full.stderr)]
    assert errors[0] == errors[1]
    assert "Traceback" not in fast.stderr
    if fast.returncode == 0 and case != "cold-check":
        fast_files = {p.relative_to(tmp_path / "fast") for p in (tmp_path / "fast").rglob("*") if p.is_file()}
        full_files = {p.relative_to(tmp_path / "full") for p in (tmp_path / "full").rglob("*") if p.is_file()}
        assert fast_files == full_files and len(fast_files) > 30


@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_cold_render_or_validate_imports_no_cli_framework(tmp_path: Path, command: str) -> None:
    out = f", '-o', {str(tmp_path / 'out')!r}" if command == "render" else ""
    code = (
        "import sys\n"
        f"sys.argv = ['rlobs', {command!r}, {str(BLUEPRINT)!r}{out}]\n"
        "from rlobs import entry\n"
        "try:\n    entry.run()\nexcept SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'hcl2')], 'imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("case", ["good", "good-json", "two", "bad", "bad-json", "missing", "fleet"])
def test_a_validate_run_by_the_script_is_what_the_typer_app_does(tmp_path: Path, case: str) -> None:
    args = {
        "good": [str(BLUEPRINT)],
        "good-json": [str(BLUEPRINT), "--format", "json"],
        "two": [str(BLUEPRINT), str(REPO / "blueprints" / "gke-managed-otel.yaml")],
        "bad": [str(_bad_profile(tmp_path))],
        "bad-json": [str(_bad_profile(tmp_path)), "--format=json"],
        "missing": [str(tmp_path / "missing.yaml")],
        "fleet": [str(REPO / "blueprints" / "fleet" / "rl-fleet.yaml")],
    }[case]
    fast = _script("validate", *args)
    full = CliRunner().invoke(app, ["validate", *args])
    assert (fast.returncode, fast.stdout, fast.stderr) == (full.exit_code, full.stdout, full.stderr)
    assert fast.returncode == (0 if case in ("good", "good-json", "two", "fleet") else 2)
    assert "Traceback" not in fast.stderr


def _into_closed_pipe(*args: str) -> tuple[int, str]:
    """The console script writing its report into a pipe nobody reads any more (`rlobs ... | head -0`)."""
    import os

    reader, writer = os.pipe()
    os.close(reader)
    rlobs = Path(sys.executable).parent / "rlobs"
    try:
        done = subprocess.run([str(rlobs), *args], stdout=writer, stderr=subprocess.PIPE, text=True, check=False)
    finally:
        os.close(writer)
    return done.returncode, done.stderr


@pytest.mark.parametrize("command", ["validate", "render"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_closed_output_pipe_ends_as_the_typer_app_ends(tmp_path: Path, command: str, fmt: str) -> None:
    # `--` sends the same command line to the Typer app (rlobs.entry._parse hands it over), which click ends
    # quietly with exit status 1; the script's own answer must end the same way, not as a user error.
    def out(name: str) -> list[str]:
        return ["-o", str(tmp_path / name)] if command == "render" else []  # each a cold render, with its warnings

    fast = _into_closed_pipe(command, *out("fast"), "--format", fmt, str(BLUEPRINT))
    full = _into_closed_pipe(command, *out("full"), "--format", fmt, "--", str(BLUEPRINT))
    assert fast == full
    assert fast[0] == 1 and "Traceback" not in fast[1] and "error:" not in fast[1]
