"""Every file rendered from every shipped blueprint (and test variant) equals its golden copy."""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

import pytest

from testing.bundles import build
from testing.helpers import TESTS, all_profiles, profile

GOLDEN = TESTS / "golden"
UPDATE = os.environ.get("RLOBS_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("name", sorted(all_profiles()))
def test_bundle_matches_golden(name: str) -> None:
    rendered = {r.path: r.text for r in build(profile(name))}
    root = GOLDEN / name
    if UPDATE:
        shutil.rmtree(root, ignore_errors=True)
        for rel, text in rendered.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
    on_disk = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in _files(root)}
    problems = []
    for rel in sorted(set(rendered) | set(on_disk)):
        if rel not in on_disk:
            problems.append(f"new file not in golden: {rel}")
        elif rel not in rendered:
            problems.append(f"golden file no longer rendered: {rel}")
        elif rendered[rel] != on_disk[rel]:
            problems.append(
                "".join(
                    difflib.unified_diff(
                        on_disk[rel].splitlines(keepends=True),
                        rendered[rel].splitlines(keepends=True),
                        f"golden/{name}/{rel}",
                        f"rendered/{rel}",
                    )
                )
            )
    assert not problems, "run `make golden` if the change is intended:\n" + "\n".join(problems)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.mark.parametrize("name", sorted(all_profiles()))
def test_render_is_deterministic(name: str) -> None:
    first = build(profile(name))
    second = build(profile(name))
    assert first == second
