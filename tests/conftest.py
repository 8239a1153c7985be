from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from rlobs.profile.kube_versions import TODAY_ENV

# The testing helpers load the rendering stack (~0.5 s): imported where a fixture needs them, as pytest-xdist's
# controller, which runs no test, loads this file too before it starts the workers.
if TYPE_CHECKING:
    from testing.otlp import Receiver

FIXED_TODAY = "2026-06-15"


@pytest.fixture(autouse=True, scope="session")
def _user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """rlobs's user cache (what this machine wrote: rlobs.bundle.cache) in a folder of the test run's own, for the
    tests and every rlobs they start, never the real one."""
    with pytest.MonkeyPatch.context() as m:
        m.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
        yield


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in its own empty directory, so none can lean on the repository's files by accident, and on
    one fixed day (every test profile's Kubernetes version in standard support), so no result changes with the
    calendar; tests about support windows set their own day."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv(TODAY_ENV, FIXED_TODAY)


@pytest.fixture(scope="session")
def rendered_eks_jark(_user_cache: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """blueprints/eks-jark.yaml rendered by the real CLI (the venv's console script) once per session, into a folder
    of its own: tests that start from that render take a copy with testing.trees.copy_bundle, which carries the user
    cache's record, so the copy is as if the render had written it there (a bundle is a pure function of the
    profile's bytes outside a git work tree: rlobs.renderkey)."""
    from testing.helpers import REPO

    out = tmp_path_factory.mktemp("eks-jark") / "out"
    env = {**os.environ, TODAY_ENV: FIXED_TODAY}  # the day _in_tmp_path sets, not set yet at session scope
    rlobs = Path(sys.executable).with_name("rlobs")
    cmd = [str(rlobs), "render", str(REPO / "blueprints" / "eks-jark.yaml"), "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A real OTLP/gRPC receiver on loopback."""
    from testing.otlp import serve_otlp

    with serve_otlp() as got:
        yield got
