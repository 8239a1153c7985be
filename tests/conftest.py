from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rlobs.profile.kube_versions import TODAY_ENV
from testing.helpers import FIXED_TODAY
from testing.otlp import Receiver, serve_otlp


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


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A real OTLP/gRPC receiver on loopback."""
    with serve_otlp() as got:
        yield got
