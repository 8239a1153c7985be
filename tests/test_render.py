"""render.py: templates render through one environment; its compiled-template cache is optional."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from rlobs.bundle.render import make_env
from testing.bundles import build
from testing.helpers import profile


def test_render_works_without_a_usable_template_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # jinja2 refuses a cache dir that is not a private directory; rlobs then renders without one.
    (tmp_path / f"_jinja2-cache-{os.getuid()}").write_text("not a directory")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert make_env().bytecode_cache is None
    assert build(profile("eks-jark")) == build(profile("eks-jark"))


def test_undefined_variables_fail_loudly() -> None:
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        make_env().from_string("{{ missing }}").render()
