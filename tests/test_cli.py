"""The CLI in-process (CliRunner), plus one run of the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rlobs
from rlobs.main import app
from testing.helpers import GOOD, REPO, write_tree

runner = CliRunner()


def _blueprint_file(tmp_path: Path, name: str = "eks-jark") -> Path:
    result = runner.invoke(app, ["init", "--blueprint", name, "-o", str(tmp_path / f"{name}.yaml")])
    assert result.exit_code == 0, result.output
    return tmp_path / f"{name}.yaml"


def test_package_under_test_is_the_installed_one() -> None:
    # Tests must exercise the wheel's layout (templates inside the package), not the source tree.
    assert "site-packages" in rlobs.__file__, rlobs.__file__


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"rlobs {rlobs.__version__}\n"


@pytest.mark.parametrize("command", ["init", "render", "validate", "schema", "blueprints", "signals"])
def test_every_command_has_help(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0
    assert "Usage" in result.stdout


def test_init_writes_profile_with_schema_modeline(tmp_path: Path) -> None:
    path = _blueprint_file(tmp_path, "gke-managed-otel")
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=./rlobs.schema.json\n")
    schema = json.loads((tmp_path / "rlobs.schema.json").read_text())
    # One branch per target, chosen by `target`, each with the keys every profile has.
    assert [b["$ref"] for b in schema["oneOf"]] == ["#/$defs/EksProfile", "#/$defs/GkeProfile"]
    for branch in ("EksProfile", "GkeProfile"):
        assert schema["$defs"][branch]["properties"]["apiVersion"]["const"] == "rlobs/v1alpha1"


def test_init_never_overwrites_without_force(tmp_path: Path) -> None:
    path = _blueprint_file(tmp_path)
    path.write_text("mine\n")
    result = runner.invoke(app, ["init", "--blueprint", "eks-jark", "-o", str(path)])
    assert result.exit_code == 2
    assert "pass --force" in result.stderr
    assert path.read_text() == "mine\n"
    assert runner.invoke(app, ["init", "-b", "eks-jark", "-o", str(path), "--force"]).exit_code == 0


def test_init_by_target_and_unknown_blueprint(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", "--target", "gke", "-o", str(tmp_path / "p.yaml")])
    assert result.exit_code == 0
    assert "target: gke" in (tmp_path / "p.yaml").read_text()
    result = runner.invoke(app, ["init", "--blueprint", "nope", "-o", str(tmp_path / "q.yaml")])
    assert result.exit_code == 2
    assert "unknown blueprint 'nope'" in result.stderr


def test_init_without_terminal_or_flags_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", "-o", str(tmp_path / "p.yaml")])
    assert result.exit_code == 2
    assert "pass --blueprint NAME or --target eks|gke" in result.stderr


def test_render_twice_then_check(tmp_path: Path) -> None:
    profile = _blueprint_file(tmp_path)
    out = tmp_path / "out"
    first = runner.invoke(app, ["render", str(profile), "-o", str(out)])
    assert first.exit_code == 0, first.output
    assert "create " in first.stdout
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    second = runner.invoke(app, ["render", str(profile), "-o", str(out)])
    assert second.exit_code == 0
    assert "0 changed" in second.stdout
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == stamps
    assert runner.invoke(app, ["render", str(profile), "-o", str(out), "--check"]).exit_code == 0

    readme = out / "README.md"
    readme.write_text(readme.read_text() + "edited\n")
    drift = runner.invoke(app, ["render", str(profile), "-o", str(out), "--check"])
    assert drift.exit_code == 1
    assert f"would update {readme}" in drift.stdout
    diff = runner.invoke(app, ["render", str(profile), "-o", str(out), "--diff"])
    assert "-edited" in diff.stdout
    assert readme.read_text().endswith("edited\n")  # --diff writes nothing


def test_render_json_output(tmp_path: Path) -> None:
    profile = _blueprint_file(tmp_path)
    result = runner.invoke(app, ["render", str(profile), "-o", str(tmp_path / "o"), "--dry-run", "--format", "json"])
    assert result.exit_code == 0
    (entry,) = json.loads(result.stdout)
    assert entry["name"] == "rl-eks" and "README.md" in entry["created"]
    assert not (tmp_path / "o").exists()


def test_hand_written_file_survives_render(tmp_path: Path) -> None:
    profile = _blueprint_file(tmp_path)
    out = tmp_path / "out"
    write_tree(out, {"NOTES.md": "mine\n"})
    assert runner.invoke(app, ["render", str(profile), "-o", str(out)]).exit_code == 0
    assert (out / "NOTES.md").read_text() == "mine\n"


def test_malformed_profile_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    good = _blueprint_file(tmp_path)
    out = tmp_path / "out"
    assert runner.invoke(app, ["render", str(good), "-o", str(out)]).exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        GOOD.replace("namespace: rl", "namespace: RL_Bad").replace("kind: Profile", "kind: Profile\nextra: 1")
    )
    result = runner.invoke(app, ["render", str(bad), "-o", str(out)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"error: {bad}:4:1: extra: unknown key")
    assert lines[1].startswith(f"error: {bad}:10:14: workload.namespace: expected a Kubernetes name")
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_several_profiles_render_into_subdirectories(tmp_path: Path) -> None:
    eks = _blueprint_file(tmp_path, "eks-jark")
    gke = _blueprint_file(tmp_path, "gke-managed-otel")
    result = runner.invoke(app, ["render", str(eks), str(gke), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out/rl-eks/README.md").exists()
    assert (tmp_path / "out/rl-gke/README.md").exists()


@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_parse_back_failure_names_the_profile_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """With several profiles, the "bug in rlobs" message says which profile's bundle failed (issue 10)."""
    import rlobs.pipeline
    from rlobs.bundle.spec import Rendered

    eks = _blueprint_file(tmp_path, "eks-jark")
    gke = _blueprint_file(tmp_path, "gke-managed-otel")
    real = rlobs.pipeline.render

    def broken_for_gke(plan: object) -> tuple[Rendered, ...]:
        files = real(plan)  # type: ignore[arg-type]
        if any(f.path.startswith("scripts/") for f in files):  # the gke bundle only
            return (*files, Rendered("broken.yaml", "a: [\n", "yaml"))
        return files

    monkeypatch.setattr(rlobs.pipeline, "render", broken_for_gke)
    args = [command, str(eks), str(gke)] + (["-o", str(tmp_path / "out")] if command == "render" else [])
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"error: {gke}: rendered bundle failed its parse-back check (a bug in rlobs)"), first
    assert "broken.yaml: does not parse back" in result.stderr
    assert str(eks) not in result.stderr
    assert not (tmp_path / "out").exists()


def test_validate(tmp_path: Path) -> None:
    profile = _blueprint_file(tmp_path)
    result = runner.invoke(app, ["validate", str(profile)])
    assert result.exit_code == 0
    assert "ok (rl-eks)" in result.stdout
    missing = runner.invoke(app, ["validate", str(tmp_path / "missing.yaml")])
    assert missing.exit_code == 2


def test_schema_is_json_and_forbids_unknown_keys() -> None:
    result = runner.invoke(app, ["schema"])
    schema = json.loads(result.stdout)
    for branch in ("EksProfile", "GkeProfile"):
        assert schema["$defs"][branch]["additionalProperties"] is False
        assert "workload" in schema["$defs"][branch]["required"]
    assert "eks" in schema["$defs"]["EksProfile"]["required"] and "gke" in schema["$defs"]["GkeProfile"]["required"]


def test_blueprints_lists_both_targets() -> None:
    result = runner.invoke(app, ["blueprints", "--format", "json"])
    names = {b["name"]: b["target"] for b in json.loads(result.stdout)}
    assert names == {"eks-jark": "eks", "gke-managed-otel": "gke"}
    plain = runner.invoke(app, ["blueprints"])
    assert plain.stdout.startswith("NAME")
    assert "\x1b[" not in plain.stdout


def test_usage_error_exits_2() -> None:
    result = runner.invoke(app, ["render", "--no-such-flag"])
    assert result.exit_code == 2


@pytest.mark.slow
def test_installed_console_script(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "rlobs"
    env = {**os.environ, "NO_COLOR": "1"}
    out = tmp_path / "out"
    run = subprocess.run(
        [str(script), "render", str(REPO / "blueprints/eks-jark.yaml"), "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert (out / "README.md").exists()
    check = subprocess.run(
        [str(script), "render", str(REPO / "blueprints/eks-jark.yaml"), "-o", str(out), "--check"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert check.returncode == 0, check.stdout


def test_init_asks_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rlobs.main._interactive", lambda: True)
    result = runner.invoke(app, ["init", "-o", str(tmp_path / "p.yaml")], input="gke-managed-otel\n")
    assert result.exit_code == 0, result.output
    assert "gke-managed-otel" in result.stdout  # the choices were listed
    assert "target: gke" in (tmp_path / "p.yaml").read_text()


def test_errors_as_json_for_machines(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD.replace("location: us-central1", "location: nowhere"))
    result = runner.invoke(app, ["validate", str(bad), "--format", "json"])
    assert result.exit_code == 2
    (problem,) = json.loads(result.stdout)["errors"]
    assert problem == {
        "file": str(bad),
        "line": 14,
        "column": 13,
        "path": "gke.location",
        "message": "expected a GCP region or zone like us-central1 or us-central1-a, got 'nowhere'",
    }


def test_output_that_is_a_file_or_a_foreign_file_is_refused(tmp_path: Path) -> None:
    profile = _blueprint_file(tmp_path)
    (tmp_path / "afile").write_text("x")
    result = runner.invoke(app, ["render", str(profile), "-o", str(tmp_path / "afile")])
    assert result.exit_code == 2
    assert "expected a directory, got a file" in result.stderr
    out = tmp_path / "out"
    write_tree(out, {"README.md": "mine\n"})
    result = runner.invoke(app, ["render", str(profile), "-o", str(out)])
    assert result.exit_code == 2
    assert "not generated by rlobs" in result.stderr
    assert (out / "README.md").read_text() == "mine\n"
    assert not (out / ".rlobs-manifest.json").exists()


def test_render_refuses_to_lose_edits_to_a_generated_file(tmp_path: Path) -> None:
    profile = _blueprint_file(tmp_path)
    out = tmp_path / "out"
    assert runner.invoke(app, ["render", str(profile), "-o", str(out)]).exit_code == 0
    readme = out / "README.md"
    readme.write_text("my notes\n")
    result = runner.invoke(app, ["render", str(profile), "-o", str(out)])
    assert result.exit_code == 2
    assert "edited since rlobs wrote them" in result.stderr
    assert readme.read_text() == "my notes\n"
    assert runner.invoke(app, ["render", str(profile), "-o", str(out), "--force"]).exit_code == 0
    assert readme.read_text() != "my notes\n"


def test_init_target_comes_from_the_blueprints(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", "--target", "gke", "-o", str(tmp_path / "p.yaml")])
    assert result.exit_code == 0
    assert "target: gke" in (tmp_path / "p.yaml").read_text()
    result = runner.invoke(app, ["init", "--target", "aks", "-o", str(tmp_path / "q.yaml")])
    assert result.exit_code == 2
    assert "unknown target 'aks': expected one of eks, gke" in result.stderr
    assert not (tmp_path / "q.yaml").exists()


def _gke(tmp_path: Path) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(GOOD)
    return path


@pytest.mark.parametrize(
    ("setup", "args", "expected"),
    [
        (
            lambda t: (t / "o/.rlobs-manifest.json").mkdir(parents=True),
            ["render", "{p}", "-o", "{t}/o"],
            "got a folder",
        ),
        (lambda t: (t / "afile").write_text("x"), ["render", "{p}", "-o", "{t}/afile/sub"], "got a file"),
        (lambda t: (t / "d").mkdir(), ["schema", "-o", "{t}/d"], "got a folder"),
        (lambda t: (t / "s.json").write_text("x"), ["schema", "-o", "{t}/s.json"], "pass --force"),
        (lambda t: (t / "d").mkdir(), ["init", "--target", "gke", "-o", "{t}/d", "--force"], "got a folder"),
        (lambda _: None, ["validate", "/dev/zero"], "not a regular file"),
        (lambda _: None, ["validate", "{t}"], "expected a readable UTF-8 file"),
        (lambda t: (t / "n.yaml").write_bytes(b"a: 1\0\n"), ["validate", "{t}/n.yaml"], "NUL byte"),
        (lambda t: (t / "l.yaml").write_text("a: &x [1]\nb: *x\n"), ["validate", "{t}/l.yaml"], "anchors or aliases"),
        (lambda t: (t / "i.yaml").write_text("a: " + "9" * 5000 + "\n"), ["validate", "{t}/i.yaml"], "at most 40"),
        (lambda t: (t / "x.yaml").write_text("a: " + "[" * 500 + "]" * 500), ["validate", "{t}/x.yaml"], "nesting"),
    ],
)
def test_bad_paths_and_hostile_files_are_one_error_line_and_exit_2(
    tmp_path: Path, setup: object, args: list[str], expected: str
) -> None:
    setup(tmp_path)  # type: ignore[operator]
    profile = _gke(tmp_path)
    argv = [a.format(p=profile, t=tmp_path) for a in args]
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and expected in lines[0], result.output
    assert "Traceback" not in result.output


def test_schema_output_is_replaced_only_with_force(tmp_path: Path) -> None:
    target = tmp_path / "new/rlobs.schema.json"
    assert runner.invoke(app, ["schema", "-o", str(target)]).exit_code == 0
    target.write_text("old")
    assert runner.invoke(app, ["schema", "-o", str(target)]).exit_code == 2
    assert target.read_text() == "old"
    assert runner.invoke(app, ["schema", "-o", str(target), "--force"]).exit_code == 0
    assert json.loads(target.read_text())["$schema"]


def test_a_symlink_at_a_profiles_bundle_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out/demo").symlink_to(elsewhere)
    other = tmp_path / "q.yaml"
    other.write_text(GOOD.replace("name: demo", "name: other"))
    result = runner.invoke(app, ["render", str(_gke(tmp_path)), str(other), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "symbolic link" in result.output
    assert list(elsewhere.iterdir()) == []
    assert not (tmp_path / "out/other").exists() or list((tmp_path / "out/other").iterdir()) == []


def test_control_characters_never_reach_the_terminal(tmp_path: Path) -> None:
    out = tmp_path / "a\x1b[2Jb"
    result = runner.invoke(app, ["render", str(_gke(tmp_path)), "-o", str(out)])
    assert result.exit_code == 0
    assert "\x1b" not in result.output and "\\x1b[2J" in result.output


@pytest.mark.parametrize("command", ["init", "render", "validate", "schema", "blueprints", "signals"])
def test_help_shows_no_python_types(command: str) -> None:
    text = runner.invoke(app, [command, "--help"], env={"COLUMNS": "120"}).stdout
    assert "<bool>" not in text and "list[" not in text and "Path]" not in text, text
    if command in ("render", "validate"):
        assert "{PROFILE}..." in text and "PROFILE  " in text


def test_shell_completion_is_on(monkeypatch: pytest.MonkeyPatch) -> None:
    text = runner.invoke(app, ["--help"]).stdout
    assert "--install-completion" in text and "--show-completion" in text
    # Typer detects the shell from the process tree; under `make` that can be plain sh, which it has no script for.
    monkeypatch.setattr("typer.completion._get_shell_name", lambda: "bash")
    shown = runner.invoke(app, ["--show-completion", "bash"], prog_name="rlobs")
    assert shown.exit_code == 0 and "_RLOBS_COMPLETE" in shown.stdout, shown.output


def test_signals_on_an_80_column_terminal_never_cuts_a_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlobs import commands, output

    monkeypatch.setattr(output, "fancy", lambda _stream: True)
    result = runner.invoke(app, ["signals"], env={"COLUMNS": "80", "NO_COLOR": None, "TERM": "xterm"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    words = {w for line in lines for w in line.split()}
    report = commands.signals()
    names = {row[i] for t in report.tables for row in t.rows for i in t.code_columns}
    assert names and sorted(n for n in names if n not in words) == []
