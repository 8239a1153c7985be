"""rlobs's models are built without pydantic plugins: an installed plugin changes nothing, and the plugin lookup
(importlib.metadata, an entry-point scan) is not paid on a render."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testing.helpers import REPO

pytestmark = pytest.mark.slow  # a fresh interpreter


def test_an_installed_pydantic_plugin_is_not_loaded_and_metadata_not_imported(tmp_path: Path) -> None:
    dist = tmp_path / "spy_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: spy-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pydantic]\nspy = spy_plugin:plugin\n")
    (tmp_path / "spy_plugin.py").write_text("import sys\nsys.modules['__main__'].LOADED = True\nplugin = object()\n")
    code = (
        "import sys\n"
        "LOADED = False\n"
        "from rlobs.profile.load import load_profile\n"
        f"load_profile({str(REPO / 'blueprints' / 'eks-jark.yaml')!r})\n"
        "assert not LOADED, 'plugin loaded'\n"
        "assert 'importlib.metadata' not in sys.modules, 'importlib.metadata imported'\n"
        "import importlib.metadata\n"
        "assert [e.name for e in importlib.metadata.entry_points(group='pydantic')] == ['spy']\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, env={"PYTHONPATH": str(tmp_path)}
    )
    assert done.returncode == 0, done.stderr[-2000:]
