"""Test helpers: inline file trees, the shipped profiles, and real tools that skip (or fail in CI) when absent."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from rlobs.blueprints import load_blueprints
from rlobs.profile.model import ProfileBase as Profile
from rlobs.targets import parse_profile
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.gke.profile import GkeProfile

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
# Where the upstream reference data lies: ../shared beside the project unless RLOBS_SHARED names another place.
SHARED = Path(os.environ.get("RLOBS_SHARED") or REPO.parent / "shared")
# A small valid gke profile that tests vary with str.replace.
GOOD = """
apiVersion: rlobs/v1alpha1
kind: Profile
metadata:
  name: demo
target: gke
workload:
  name: trainer
  namespace: rl
  container: trainer
  run: {system: verl, algorithm: grpo, environment: gsm8k, model: qwen}
gke:
  project: my-project
  location: us-central1
  cluster: rl-cluster
"""

REQUIRE_TOOLS = os.environ.get("RLOBS_REQUIRE_TOOLS") == "1"


def write_tree(root: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def extra_profiles() -> dict[str, str]:
    """Profiles under tests/profiles/ (variants the blueprints do not cover), by file stem."""
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted((TESTS / "profiles").glob("*.yaml"))}


def all_profiles() -> dict[str, str]:
    """Every shipped blueprint plus the test variants: name -> profile text."""
    found = {name: bp.text for name, bp in load_blueprints().items()}
    found.update(extra_profiles())
    return found


def profile(name: str) -> Profile:
    return parse_profile(all_profiles()[name], f"{name}.yaml")


def eks_profile(name: str) -> EksProfile:
    found = profile(name)
    assert isinstance(found, EksProfile), f"{name} is not an eks profile"
    return found


def gke_profile(name: str) -> GkeProfile:
    found = profile(name)
    assert isinstance(found, GkeProfile), f"{name} is not a gke profile"
    return found


def tool(name: str, why: str) -> str:
    """Path of a real tool (on PATH or beside this Python); skip when absent, fail when CI requires it."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found:
        return found
    if REQUIRE_TOOLS:
        pytest.fail(f"{name} is required by RLOBS_REQUIRE_TOOLS=1 but not installed ({why})")
    pytest.skip(f"{name} is not installed ({why}); .ci/run installs it")


def preinstalled_tool(name: str, why: str) -> str:
    """A tool no package registry here provides (gcloud ships only with the machine image): skip when absent,
    even in CI, since .ci/run cannot install it."""
    found = shutil.which(name)
    if found:
        return found
    pytest.skip(f"{name} is not installed and no package registry here provides it ({why})")


def module(name: str, why: str, install: str = "make test") -> None:
    try:
        __import__(name)
    except ImportError:
        if REQUIRE_TOOLS:
            pytest.fail(f"Python module {name} is required by RLOBS_REQUIRE_TOOLS=1 ({why})")
        pytest.skip(f"Python module {name} is not installed ({why}); `{install}` installs it")


def shared(rel: str) -> Path:
    """A file under ../shared (reference data); skip with the reason where it is absent, fail in CI."""
    path = SHARED / rel
    if path.exists():
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{path} is missing: CI must have ../shared beside the project (or RLOBS_SHARED set)")
    pytest.skip(f"{path} is not available (set RLOBS_SHARED, or put shared/ beside the project as on CI)")
