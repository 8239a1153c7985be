"""A fleet's clusters built in parallel give exactly the files of a serial build."""

from __future__ import annotations

import pytest

from rlobs.bundle.check import Checker
from rlobs.fleet.plan import build_fleet
from testing.fleet import example

pytestmark = pytest.mark.slow  # forks a pool


def test_the_parallel_fleet_build_is_the_serial_one() -> None:
    serial = build_fleet(example())
    checker = Checker()
    parallel = build_fleet(example(), checker)
    checker.check(parallel.files)  # the clusters' files were checked in the workers and are remembered
    assert [(r.path, r.text, r.fmt, r.executable) for r in parallel.files] == [
        (r.path, r.text, r.fmt, r.executable) for r in serial.files
    ]
