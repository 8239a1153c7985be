"""The package layout shows the architecture, and its import rules hold (and the check can fail)."""

from __future__ import annotations

from pathlib import Path

import pytest

import rlobs
from testing.layers import MAX_LINES, imports, sources, violations

PACKAGE = Path(rlobs.__file__).parent


def _packages(modules: dict[str, str]) -> set[str]:
    return {m for m in modules if (PACKAGE.parent / m.replace(".", "/") / "__init__.py").exists()}


def test_import_rules_hold() -> None:
    modules = sources(PACKAGE)
    assert violations(modules, _packages(modules)) == []


# Modules still over the limit, each being split by its own change: the list may only shrink.
def test_no_module_is_over_450_lines() -> None:
    long = {m for m, text in sources(PACKAGE).items() if text.count("\n") > MAX_LINES}
    assert not long, sorted(long)


def test_no_test_module_imports_another() -> None:
    """Tests share helpers through tests/testing/, never by importing another test module."""
    tests = Path(__file__).parent
    found = [
        f"{path.name} imports {name}"
        for path in sorted(tests.glob("test_*.py"))
        for name in imports(path.read_text(encoding="utf-8"), path.stem, is_package=False)
        if name.split(".")[0].startswith("test_") or name.startswith(("tests.test_", "conftest"))
    ]
    assert found == []


def test_every_stage_package_exists() -> None:
    for package in ("profile", "rl", "rl/alerts", "targets", "targets/eks", "targets/gke", "bundle", "fleet"):
        assert (PACKAGE / package / "__init__.py").is_file(), package


def test_a_broken_rule_is_reported() -> None:
    modules = sources(PACKAGE)
    planted = {
        **modules,
        "rlobs.profile.model": modules["rlobs.profile.model"] + "\nfrom rlobs.rl import naming\n",
        "rlobs.rl.naming": modules["rlobs.rl.naming"]
        + "\ndef _f() -> None:\n    from rlobs.targets.eks import stack\n",
        "rlobs.targets.gke.plan": modules["rlobs.targets.gke.plan"] + "\nfrom rlobs.targets.eks import versions\n",
        "rlobs.bundle.render": modules["rlobs.bundle.render"] + "\nfrom rlobs.rl import catalog\n",
        "rlobs.commands": modules["rlobs.commands"] + "\nimport typer\n",
        "rlobs.fleet.plan": modules["rlobs.fleet.plan"] + "\nfrom rlobs.targets.eks import values\n",
        "rlobs.bundle.spec": modules["rlobs.bundle.spec"] + "\nfrom rlobs import targets\n",
    }
    found = violations(planted, _packages(modules))
    assert "rlobs.profile.model imports rlobs.rl.naming" in found
    assert "rlobs.rl.naming imports rlobs.targets.eks.stack" in found
    assert "rlobs.targets.gke.plan imports rlobs.targets.eks.versions" in found
    assert "rlobs.bundle.render imports rlobs.rl.catalog" in found
    assert "rlobs.commands imports typer (only rlobs.main may)" in found
    assert "rlobs.fleet.plan imports rlobs.targets.eks.values" in found
    assert "rlobs.bundle.spec imports rlobs.targets" in found
    assert any(line.startswith("import cycle: ") and "rlobs.profile.model" in line for line in found)


def test_the_target_registry_the_profile_union_and_the_blueprints_agree() -> None:
    from typing import get_args

    from rlobs.blueprints import load_blueprints
    from rlobs.targets import PROFILES, TARGETS, profile_union

    union = get_args(get_args(profile_union())[0])
    tags = [get_args(cls.model_fields["target"].annotation)[0] for cls in union]
    assert list(TARGETS) == tags == list(PROFILES)
    assert set(TARGETS) == {bp.target for bp in load_blueprints().values()}
    assert all(name == t.NAME for name, t in TARGETS.items())
    assert all(get_args(PROFILES[name].model_fields["target"].annotation) == (name,) for name in TARGETS)


def test_every_target_has_every_member_of_the_target_shape() -> None:
    """What mypy cannot check through the registry's deferred functions: each is there, with the Target's
    parameters."""
    import inspect

    from rlobs.targets import TARGETS, Target

    members = {name: value for name, value in vars(Target).items() if not name.startswith("_")}
    for target in TARGETS.values():
        for name in [*members, *Target.__annotations__]:
            assert hasattr(target, name), name
        for name, method in members.items():
            expected = list(inspect.signature(method).parameters)[1:]
            assert len(inspect.signature(getattr(target, name)).parameters) == len(expected), name


@pytest.mark.slow  # a subprocess render
def test_a_render_imports_only_its_own_target() -> None:
    """Planned, checked and written (the writer asks every target's PATHS, never its planner); no fleet model, and no
    other target's profile model."""
    import subprocess
    import sys

    from testing.helpers import REPO

    for target, other in (("eks", "gke"), ("gke", "eks")):
        blueprint = next(p for p in sorted((REPO / "blueprints").glob("*.yaml")) if p.name.startswith(target))
        code = (
            "import sys, tempfile\n"
            "from pathlib import Path\n"
            "from rlobs import commands\n"
            "from rlobs.bundle.request import RenderRequest\n"
            "with tempfile.TemporaryDirectory() as out:\n"
            f"    commands.render([Path({str(blueprint)!r})], RenderRequest(Path(out)))\n"
            f"paths = {{'rlobs.targets.{other}', 'rlobs.targets.{other}.target'}}  # its PATHS, for the writer\n"
            f"assert not [m for m in sys.modules if m.startswith('rlobs.targets.{other}') and m not in paths]\n"
            f"assert not {{'rlobs.profile.{other}', 'rlobs.profile.{other}profile'}} & set(sys.modules)\n"
            f"assert 'rlobs.targets.{target}.plan' in sys.modules\n"
            "assert 'rlobs.profile.fleet' not in sys.modules\n"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
