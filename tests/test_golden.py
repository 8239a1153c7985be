"""Every rendered bundle equals its golden copy: whole trees for each target's blueprint, and each test variant as
a patch against its target's blueprint (so a shared file like the telemetry module is stored once)."""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

import pytest

from rlobs.blueprints import default_blueprint, load_blueprints
from rlobs.pipeline import build as build_uncached
from testing.bundles import build, checker
from testing.helpers import TESTS, all_profiles, extra_profiles, profile

GOLDEN = TESTS / "golden"
UPDATE = os.environ.get("RLOBS_UPDATE_GOLDEN") == "1"
BLUEPRINTS = sorted(load_blueprints())
VARIANTS = sorted(extra_profiles())


def _rendered(name: str) -> dict[str, str]:
    return {r.path: r.text for r in build(profile(name))}


def _tree(root: Path) -> dict[str, str]:
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in files}


def _base(name: str) -> str:
    """The blueprint a variant is compared with: its target's default blueprint."""
    return default_blueprint(load_blueprints(), profile(name).target)


def patch(base: str, old: dict[str, str], name: str, new: dict[str, str]) -> str:
    """A unified diff from one bundle to another; files only on one side diff against /dev/null."""
    parts = []
    for rel in sorted(set(old) | set(new)):
        parts += difflib.unified_diff(
            old.get(rel, "").splitlines(keepends=True),
            new.get(rel, "").splitlines(keepends=True),
            f"{base}/{rel}" if rel in old else "/dev/null",
            f"{name}/{rel}" if rel in new else "/dev/null",
        )
    return "".join(parts)


@pytest.mark.parametrize("name", BLUEPRINTS)
def test_blueprint_bundle_matches_its_golden_tree(name: str) -> None:
    rendered, root = _rendered(name), GOLDEN / name
    if UPDATE:
        shutil.rmtree(root, ignore_errors=True)
        for rel, text in rendered.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
    problems = patch(f"golden/{name}", _tree(root), "rendered", rendered)
    assert not problems, "run `make golden` if the change is intended:\n" + problems


@pytest.mark.parametrize("name", VARIANTS)
def test_variant_differs_from_its_blueprint_as_recorded(name: str) -> None:
    base = _base(name)
    expected = patch(base, _tree(GOLDEN / base), name, _rendered(name))
    path = GOLDEN / f"{name}.patch"
    if UPDATE:
        path.write_text(expected, encoding="utf-8")
    recorded = path.read_text(encoding="utf-8") if path.exists() else ""
    diff = "".join(
        difflib.unified_diff(
            recorded.splitlines(keepends=True), expected.splitlines(keepends=True), str(path.name), "rendered"
        )
    )
    assert not diff, "run `make golden` if the change is intended:\n" + diff


FLEET = "fleet-rl-fleet"


def test_fleet_bundle_matches_its_golden_tree() -> None:
    """The fleet's own files (ApplicationSets, contract, values layers, effective profiles, README); each
    cluster's folder is its single-cluster bundle, which test_fleet_preview compares with a single render."""
    from testing.fleet import example_build

    rendered = {r.path: r.text for r in example_build().files if not r.path.startswith("clusters/")}
    root = GOLDEN / FLEET
    if UPDATE:
        shutil.rmtree(root, ignore_errors=True)
        for rel, text in rendered.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
    problems = patch(f"golden/{FLEET}", _tree(root), "rendered", rendered)
    assert not problems, "run `make golden` if the change is intended:\n" + problems


# Two gke.manage: terraform clusters in one project (one Terraform root), one dashboard per project: a patch of the
# fleet's own files against the example fleet's.
FLEET_VARIANT = "fleet-gke-terraform"


def test_fleet_variant_differs_from_the_example_fleet_as_recorded() -> None:
    from rlobs.fleet.plan import build_fleet
    from testing.fleet_gke import terraform_fleet

    built = build_fleet(terraform_fleet(dashboards="per-project"))
    rendered = {r.path: r.text for r in built.files if not r.path.startswith("clusters/")}
    expected = patch(FLEET, _tree(GOLDEN / FLEET), FLEET_VARIANT, rendered)
    path = GOLDEN / f"{FLEET_VARIANT}.patch"
    if UPDATE:
        path.write_text(expected, encoding="utf-8")
    recorded = path.read_text(encoding="utf-8") if path.exists() else ""
    assert recorded == expected, "run `make golden` if the change is intended"


def test_golden_holds_nothing_else() -> None:
    expected = set(BLUEPRINTS) | {f"{v}.patch" for v in VARIANTS} | {FLEET, f"{FLEET_VARIANT}.patch"}
    assert {p.name for p in GOLDEN.iterdir()} == expected


def test_patch_round_trip() -> None:
    """The patch format says what differs: only changed files, and files present on one side only."""
    text = patch("a", {"x": "1\n", "y": "2\n"}, "b", {"x": "1\n", "z": "3\n"})
    assert "a/x" not in text
    assert "--- a/y\n+++ /dev/null\n" in text and "--- /dev/null\n+++ b/z\n" in text


@pytest.mark.parametrize("name", sorted(all_profiles()))
def test_render_is_deterministic(name: str) -> None:
    first = build_uncached(profile(name), checker())
    second = build_uncached(profile(name), checker())
    assert first == second
