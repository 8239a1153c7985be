"""The CLI in-process (CliRunner), plus one run of the installed console script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rlobs
from rlobs.boundary import exit_code
from rlobs.bundle.request import RenderRequest
from rlobs.main import app
from testing.helpers import GOOD, REPO, write_tree
from testing.trees import snapshot

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
    # A preview of a fresh folder says what a render would change, not that it changed it.
    preview = runner.invoke(app, ["render", str(profile), "-o", str(tmp_path / "fresh"), "--dry-run"])
    assert re.search(r": \d+ would change, 0 unchanged in ", preview.stdout), preview.stdout
    assert " changed," not in preview.stdout and not (tmp_path / "fresh").exists()

    readme = out / "README.md"
    readme.write_text(readme.read_text() + "edited\n")
    # A hand edit: the render would refuse it (exit 2), and so does --check; with --force it is only drift.
    refused = runner.invoke(app, ["render", str(profile), "-o", str(out), "--check"])
    assert refused.exit_code == 2
    assert f"would refuse: {readme}: was edited since rlobs wrote it" in refused.stdout
    drift = runner.invoke(app, ["render", str(profile), "-o", str(out), "--check", "--force"])
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


def test_errors_as_json_for_machines(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD.replace("location: us-central1", "location: nowhere"))
    result = runner.invoke(app, ["validate", str(bad), "--format", "json"])
    assert result.exit_code == 2
    assert result.stderr == ""  # one channel: JSON on stdout, nothing repeated as text
    (verdict,) = json.loads(result.stdout)
    assert (verdict["profile"], verdict["name"], verdict["valid"]) == (str(bad), None, False)
    (problem,) = verdict["errors"]
    assert problem == {
        "file": str(bad),
        "line": 14,
        "column": 13,
        "path": "gke.location",
        "message": "expected a GCP region or zone like us-central1 or us-central1-a, got 'nowhere' (the regions and "
        "zones gcping 85ed7a9 + skypilot-catalog 006059e lists, 2026-12-03)",
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
    assert "edited since rlobs wrote it" in result.stderr
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
    result = runner.invoke(app, ["init", "-b", "eks-jark", "-t", "gke", "-o", str(tmp_path / "q.yaml")])
    assert result.exit_code == 2 and "blueprint eks-jark is for target eks, not gke" in result.stderr
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
def test_help_says_what_to_type(command: str) -> None:
    """Flags show no value, and every option that takes one names it (DIR, FILE, NAME, FORMAT): no Python type."""
    text = runner.invoke(app, [command, "--help"], env={"COLUMNS": "120"}).stdout
    options = text[text.index("Options:") :]
    names = [line.split("  ")[1] for line in options.splitlines() if line.startswith("  -")]
    assert names and [n for n in names if not re.fullmatch(r"(-\w, )?--[\w-]+( [A-Z]+)?", n)] == [], options
    if command in ("render", "validate"):
        # typer's own layout, which no public option changes: `PROFILE` (before 0.27), `{PROFILE}` (0.27, 0.28) or
        # `{PROFILE}...`; typer 0.27 and later also label the argument's row with its Python type (`<list[Path]>`).
        assert re.search(rf"^Usage: rlobs {command} \[OPTIONS\] (PROFILE|{{PROFILE}}(\.\.\.)?)$", text, re.M), text
        assert "--format FORMAT  " in options
    if command == "render":
        assert "-o, --output DIR  " in options


def test_shell_completion_is_on(tmp_path: Path) -> None:
    text = runner.invoke(app, ["--help"]).stdout
    assert "--install-completion" in text and "--show-completion" in text
    # Typer finds the shell in the process tree (shellingham): run the script from a real bash. `; exit` keeps bash
    # the script's parent instead of replacing itself with it.
    script = Path(sys.executable).parent / "rlobs"
    shown = subprocess.run(
        ["bash", "-c", f"{script} --show-completion; exit $?"], capture_output=True, text=True, check=False
    )
    assert shown.returncode == 0 and "_RLOBS_COMPLETE" in shown.stdout, shown.stderr


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


def test_signals_of_one_framework_map_every_catalog_metric() -> None:
    from rlobs.rl.catalog import load_catalog

    catalog = load_catalog()
    result = runner.invoke(app, ["signals", "--framework", "verl", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["framework"] == "verl" and [r["metric"] for r in data["metrics"]] == [m.name for m in catalog.metrics]
    table = runner.invoke(app, ["signals", "--framework", "verl", "--format", "markdown"]).stdout
    assert "| metric | coverage | verl key | value, conversion | phase | note |" in table
    assert "In the bundle (workload.run.system: verl): app/rlobs_adapter.py;" in table
    result = runner.invoke(app, ["signals", "--framework", "nope"])
    known = ", ".join(f.name for f in catalog.frameworks)
    assert result.exit_code == 2 and result.stderr == f"error: unknown framework 'nope': expected one of {known}\n"


@pytest.mark.parametrize("argv", [["signals", "--format", "yaml"], ["validate", "--format", "yaml", "p.yaml"]])
def test_a_bad_choice_is_a_usage_error_without_pydantic_words(argv: list[str]) -> None:
    result = runner.invoke(app, argv)
    assert result.exit_code == 2
    assert "'yaml' is not one of" in result.output and "Value error" not in result.output


@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_bundle_refused_after_rendering_names_its_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    import rlobs.pipeline
    from rlobs.errors import CheckError

    real = rlobs.pipeline.build

    def build(profile: object, checker: object, env: object = None) -> object:
        if profile.metadata.name == "rl-gke":  # type: ignore[attr-defined]
            raise CheckError("rendered bundle failed its parse-back check (a bug in rlobs):\n  x.json: bad")
        return real(profile, checker, env)  # type: ignore[arg-type]

    monkeypatch.setattr(rlobs.pipeline, "build", build)
    eks, gke = _blueprint_file(tmp_path, "eks-jark"), _blueprint_file(tmp_path, "gke-managed-otel")
    argv = [command, str(eks), str(gke), *(["-o", str(tmp_path / "out")] if command == "render" else [])]
    result = runner.invoke(app, argv)
    assert result.exit_code == 1
    assert f"error: {gke} (rl-gke): rendered bundle failed its parse-back check" in result.stderr
    assert not (tmp_path / "out").exists()


# -- the output folder's owner, the one-and-several layout, and previews that predict the render --------------------


def _render(*args: object) -> object:
    return runner.invoke(app, ["render", *map(str, args)])


def test_another_profile_into_a_bundle_folder_refuses_and_leaves_it_intact(tmp_path: Path) -> None:
    eks, gke, out = _blueprint_file(tmp_path, "eks-jark"), _blueprint_file(tmp_path, "gke-managed-otel"), tmp_path / "x"
    assert runner.invoke(app, ["render", str(eks), "-o", str(out)]).exit_code == 0
    before = snapshot(out)
    result = runner.invoke(app, ["render", str(gke), "-o", str(out)])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line == (
        f"error: {out}: holds the bundle of profile rl-eks (target eks), not of profile rl-gke (target gke); "
        "rendering it here would replace that bundle (choose another folder with -o, or pass --force to take this "
        "one over)"
    )
    assert snapshot(out) == before  # every EKS file intact, nothing written
    taken = runner.invoke(app, ["render", str(gke), "-o", str(out), "--force"])
    assert taken.exit_code == 0, taken.output
    manifest = json.loads((out / ".rlobs-manifest.json").read_text())
    assert manifest["owner"] == {"kind": "profile", "name": "rl-gke", "target": "gke"}
    assert not (out / "argocd").exists()


def test_one_profile_is_never_written_beside_several_bundles(tmp_path: Path) -> None:
    eks, gke, out = _blueprint_file(tmp_path, "eks-jark"), _blueprint_file(tmp_path, "gke-managed-otel"), tmp_path / "x"
    assert runner.invoke(app, ["render", str(eks), str(gke), "-o", str(out)]).exit_code == 0
    before = snapshot(out)
    for force in ([], ["--force"]):  # never, not even with --force
        result = runner.invoke(app, ["render", str(eks), "-o", str(out), *force])
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.splitlines()
        assert line == (
            f"error: {out}: holds bundles in its subfolders: rl-eks/ (profile rl-eks (target eks)), "
            f"rl-gke/ (profile rl-gke (target gke)); a single bundle is never written beside them (render it into "
            f"its own folder: -o {out / 'rl-eks'})"
        )
    assert snapshot(out) == before
    assert runner.invoke(app, ["render", str(eks), "-o", str(out / "rl-eks")]).exit_code == 0
    assert snapshot(out) == before  # the path it names is that bundle's own folder: nothing differs


def test_several_profiles_never_render_into_a_bundle(tmp_path: Path) -> None:
    eks, gke, out = _blueprint_file(tmp_path, "eks-jark"), _blueprint_file(tmp_path, "gke-managed-otel"), tmp_path / "x"
    assert runner.invoke(app, ["render", str(eks), "-o", str(out)]).exit_code == 0
    before = snapshot(out)
    for force in ([], ["--force"]):
        result = runner.invoke(app, ["render", str(eks), str(gke), "-o", str(out), *force])
        assert result.exit_code == 2, result.output
        # Progress lines ("rendered i/n: name", piped) come first: the bundles are built before they are planned.
        assert {line for line in result.stderr.splitlines() if not line.startswith("rendered ")} == {
            f"error: {out}: holds the bundle of profile rl-eks (target eks); a bundle is never written inside another "
            "one (choose an -o outside it)"
        }
    assert snapshot(out) == before


def test_a_fleet_folder_has_an_owner_too(tmp_path: Path) -> None:
    fleet, profile = tmp_path / "fleet.yaml", _gke(tmp_path)
    assert runner.invoke(app, ["init", "--fleet", "-o", str(fleet)]).exit_code == 0
    out = tmp_path / "fleet-out"
    assert runner.invoke(app, ["render", str(fleet), "-o", str(out)]).exit_code == 0
    assert json.loads((out / ".rlobs-manifest.json").read_text())["owner"]["kind"] == "fleet"
    before = snapshot(out)
    into_fleet = runner.invoke(app, ["render", str(profile), "-o", str(out)])
    assert into_fleet.exit_code == 2 and "holds the bundle of fleet rl-fleet, not of profile demo" in into_fleet.stderr
    assert snapshot(out) == before
    single = tmp_path / "single"
    assert runner.invoke(app, ["render", str(profile), "-o", str(single)]).exit_code == 0
    over = runner.invoke(app, ["render", str(fleet), "-o", str(single), "--dry-run"])
    assert over.exit_code == 2 and "holds the bundle of profile demo (target gke), not of fleet rl-fleet" in over.stdout


def _variant(tmp_path: Path, name: str, replace: tuple[str, str] = ("name: demo", "name: demo")) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(GOOD.replace(*replace))
    return path


def _case_clean(t: Path, p: Path, out: Path) -> list[Path]:
    assert _render(p, "-o", out).exit_code == 0  # type: ignore[attr-defined]
    return [p]


def _case_new(t: Path, p: Path, out: Path) -> list[Path]:
    return [p]


def _case_foreign(t: Path, p: Path, out: Path) -> list[Path]:
    write_tree(out, {"README.md": "mine\n", "NOTES.md": "mine\n"})
    return [p]


def _case_edited(t: Path, p: Path, out: Path) -> list[Path]:
    _case_clean(t, p, out)
    (out / "README.md").write_text("my notes\n")
    return [p]


def _case_deleted(t: Path, p: Path, out: Path) -> list[Path]:
    _case_clean(t, p, out)
    (out / "docs/runbook.md").unlink()
    return [p]


def _case_edited_stale(t: Path, p: Path, out: Path) -> list[Path]:
    tf = _variant(t, "tf", ("cluster: rl-cluster", "cluster: rl-cluster\n  manage: terraform"))
    assert _render(tf, "-o", out).exit_code == 0  # type: ignore[attr-defined]
    (out / "terraform/variables.tf").write_text("# mine\n")  # rlobs no longer renders it for `p`
    return [p]


def _case_owner(t: Path, p: Path, out: Path) -> list[Path]:
    assert _render(_variant(t, "other", ("name: demo", "name: other")), "-o", out).exit_code == 0  # type: ignore[attr-defined]
    return [p]


def _case_staging(t: Path, p: Path, out: Path) -> list[Path]:
    _case_clean(t, p, out)
    write_tree(out, {".rlobs-staging/0": "half\n"})
    return [p]


def _case_journal(t: Path, p: Path, out: Path) -> list[Path]:
    """A write killed after its commit point: the journal is in place, nothing rolled forward yet."""
    from rlobs import commands
    from testing import kills

    _case_clean(t, p, out)
    variant = _variant(t, "variant", ("namespace: rl", "namespace: rl-2"))
    with pytest.raises(kills.Stopped), kills.stopped_after_commit():
        commands.render([variant], RenderRequest(out))
    assert (out / ".rlobs-journal.json").exists()
    return [variant]


def _case_parent(t: Path, p: Path, out: Path) -> list[Path]:
    other = _variant(t, "other", ("name: demo", "name: other"))
    assert _render(p, other, "-o", out).exit_code == 0  # type: ignore[attr-defined]
    return [p]


def _case_into_bundle(t: Path, p: Path, out: Path) -> list[Path]:
    _case_clean(t, p, out)
    return [p, _variant(t, "other", ("name: demo", "name: other"))]


# case -> (its set-up, render's exit code without --force): every refusal the writer has, and the cases it writes.
WRITER_CASES = {
    "clean": (_case_clean, 0),
    "new folder": (_case_new, 0),
    "foreign file in the way": (_case_foreign, 2),
    "edited generated file": (_case_edited, 2),
    "deleted generated file": (_case_deleted, 0),
    "edited file rlobs no longer renders": (_case_edited_stale, 2),
    "owner mismatch": (_case_owner, 2),
    "stale staging leftovers": (_case_staging, 0),
    "committed but unfinished write": (_case_journal, 0),
    "folder of several bundles": (_case_parent, 2),
    "several profiles into a bundle": (_case_into_bundle, 2),
}


def _json(result: object) -> object:
    return json.loads(result.stdout)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("case", "force"),
    [(c, False) for c in WRITER_CASES] + [(c, True) for c, (_, code) in WRITER_CASES.items() if code == 2],
)
def test_previews_predict_what_render_does(tmp_path: Path, case: str, force: bool) -> None:
    """Every writer case through render, --dry-run and --check (JSON and text): the previews write nothing, exit
    as render does (--check: 1 where render writes), and name the same files and the same refusals."""
    setup, refused_code = WRITER_CASES[case]
    out = tmp_path / "out"
    profiles = setup(tmp_path, _variant(tmp_path, "demo"), out)
    text = ["render", *map(str, profiles), "-o", str(out), *(["--force"] if force else [])]
    base = [*text, "--format", "json"]
    before = snapshot(out) if out.exists() else None
    dry, check = runner.invoke(app, [*base, "--dry-run"]), runner.invoke(app, [*base, "--check"])
    dry_text, check_text = runner.invoke(app, [*text, "--dry-run"]), runner.invoke(app, [*text, "--check"])
    assert (snapshot(out) if out.exists() else None) == before  # previews write nothing
    done = runner.invoke(app, base)
    assert done.exit_code in (0, 2), done.output
    if not force or case in ("folder of several bundles", "several profiles into a bundle"):
        assert done.exit_code == refused_code, done.output
    else:
        assert done.exit_code == 0, done.output  # --force takes over everything but the layout
    assert dry.exit_code == done.exit_code, dry.output
    if done.exit_code == 2:
        messages = {e["message"] for e in _json(done)["errors"]}  # type: ignore[index]
        assert done.stderr == ""  # one channel: JSON on stdout only
        for preview in (dry, check):
            assert preview.exit_code == 2
            results = _json(preview)
            assert {r["message"] for b in results for r in b["refusals"]} == messages  # type: ignore[index,union-attr]
            assert "would_refuse" in {b["status"] for b in results}  # type: ignore[index,union-attr]
        refused_text, diff_text = runner.invoke(app, text), runner.invoke(app, [*text, "--diff"])
        assert refused_text.exit_code == dry_text.exit_code == check_text.exit_code == diff_text.exit_code == 2
        refused_lines = [x for x in refused_text.stderr.splitlines() if not x.startswith("rendered ")]  # progress
        assert {line.removeprefix("error: ") for line in refused_lines} == messages
        for preview_text in (dry_text, check_text):
            lines = preview_text.stdout.splitlines()
            assert {x.removeprefix("would refuse: ") for x in lines if x.startswith("would refuse: ")} == messages
        assert (snapshot(out) if out.exists() else None) == before  # the refused render wrote nothing either
        return
    written = _json(done)
    changed = any(b["status"] == "changed" for b in written)  # type: ignore[index,union-attr]
    assert check.exit_code == (1 if changed else 0), check.output
    for preview, status in ((dry, "changed"), (check, "drift")):
        for got, real in zip(_json(preview), written, strict=True):  # type: ignore[call-overload]
            assert got["status"] == (status if real["status"] == "changed" else real["status"])
            assert [(f["path"], f["action"]) for f in got["files"]] == [(f["path"], f["action"]) for f in real["files"]]
            assert got["refusals"] == real["refusals"] == []
    assert [b["drift"] for b in _json(check)] == [b["status"] == "changed" for b in written]  # type: ignore[index,union-attr]
    assert (dry_text.exit_code, check_text.exit_code) == (0, check.exit_code)


def test_validate_gives_every_profile_its_own_verdict(tmp_path: Path) -> None:
    a, c = _variant(tmp_path, "a", ("name: demo", "name: a")), _variant(tmp_path, "c", ("name: demo", "name: c"))
    bad = _variant(tmp_path, "bad", ("location: us-central1", "location: nowhere"))
    result = runner.invoke(app, ["validate", str(a), str(bad), str(c)])
    assert result.exit_code == 2
    assert result.stdout.splitlines() == [f"{a}: ok (a)", f"{bad}: invalid (1 problem)", f"{c}: ok (c)"]
    errors = [line for line in result.stderr.splitlines() if ": warning: " not in line]  # a and c warn: no channel
    assert len(errors) == 1 and errors[0].startswith(f"error: {bad}:14:13: gke.location: expected a GCP region")
    found = runner.invoke(app, ["validate", str(a), str(bad), str(c), "--format", "json"])
    assert found.exit_code == 2 and found.stderr == ""
    verdicts = json.loads(found.stdout)
    assert [(v["profile"], v["name"], v["valid"]) for v in verdicts] == [
        (str(a), "a", True),
        (str(bad), None, False),
        (str(c), "c", True),
    ]
    assert [len(v["errors"]) for v in verdicts] == [0, 1, 0]


@pytest.mark.parametrize(
    "argv",
    [
        ["render", "{t}/missing.yaml", "-o", "{t}/o"],
        ["render", "{p}", "-o", "{t}/afile"],
        ["validate", "{t}/missing.yaml"],
        ["blueprints"],
    ],
)
def test_json_errors_are_printed_once_on_stdout(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "afile").write_text("x")
    profile = _gke(tmp_path)
    result = runner.invoke(app, [*(a.format(p=profile, t=tmp_path) for a in argv), "--format", "json"])
    assert result.stderr == ""
    data = json.loads(result.stdout)  # one JSON document, nothing else
    if result.exit_code:
        errors = data["errors"] if isinstance(data, dict) else [e for v in data for e in v["errors"]]
        assert errors and all(e["message"] for e in errors)


def test_the_up_to_date_answer_never_covers_an_owner_or_layout_mismatch(tmp_path: Path) -> None:
    """commands.up_to_date answers from the render keys alone (rlobs.entry runs it before Typer): it must send
    every case the full render refuses down the full path."""
    from rlobs import commands

    demo, other, out = _variant(tmp_path, "demo"), _variant(tmp_path, "other", ("name: demo", "name: other")), tmp_path
    out = tmp_path / "out"
    assert _render(demo, other, "-o", out).exit_code == 0  # type: ignore[attr-defined]
    assert commands.up_to_date([demo, other], out) is not None
    manifest = out / "demo/.rlobs-manifest.json"
    (out / ".rlobs-manifest.json").write_bytes(manifest.read_bytes())  # the parent made a bundle by hand
    assert commands.up_to_date([demo, other], out) is None
    assert _render(demo, other, "-o", out, "--check").exit_code == 2  # type: ignore[attr-defined]
    (out / ".rlobs-manifest.json").unlink()
    data = json.loads(manifest.read_text())
    data["owner"]["name"] = "other"  # another owner, the key kept: the seal no longer matches
    manifest.write_text(json.dumps(data))
    assert commands.up_to_date([demo], out / "demo") is None
    assert _render(demo, "-o", out / "demo", "--check").exit_code == 2  # type: ignore[attr-defined]


def test_ctrl_c_says_nothing_was_written(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(KeyboardInterrupt(), as_json=False) == 130
    assert capsys.readouterr().err == "error: interrupted, nothing written\n"


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("init --target ", ["eks", "gke"]),
        ("init --target g", ["gke"]),
        ("init --blueprint eks", ["eks-jark"]),
        ("signals --framework ve", ["verl"]),
    ],
)
def test_tab_completes_choice_values(tmp_path: Path, words: str, expected: list[str]) -> None:
    """The installed script answers bash's completion protocol (what `rlobs --install-completion` wires up)."""
    line = f"rlobs {words}"
    env = {**os.environ, "_RLOBS_COMPLETE": "complete_bash", "COMP_WORDS": line}
    env["COMP_CWORD"] = str(len(line.split()) - (0 if line.endswith(" ") else 1))
    script = Path(sys.executable).parent / "rlobs"
    proc = subprocess.run([str(script)], capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == expected
