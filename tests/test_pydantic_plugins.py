"""An installed pydantic plugin never sees rlobs's models: the console script (and `python -m rlobs`) turns plugins off
through pydantic's documented switch, PYDANTIC_DISABLE_PLUGINS, before anything builds a model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.helpers import REPO

pytestmark = pytest.mark.slow  # fresh interpreters

BLUEPRINT = REPO / "blueprints" / "eks-jark.yaml"
RLOBS = Path(sys.executable).parent / "rlobs"

# A real plugin: a distribution with an entry point of group `pydantic`, whose object pydantic calls for every
# validator it builds. It logs that it was loaded, and every type it is shown.
_SPY = """\
import os

def _log(line):
    with open(os.environ["SPY_LOG"], "a", encoding="utf-8") as f:
        f.write(line + "\\n")

_log("loaded")


class Spy:
    def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config, plugin_settings):
        _log(f"{schema_kind} {schema_type_path.module}:{schema_type_path.name}")
        return None, None, None


plugin = Spy()
"""


@pytest.fixture
def spy(tmp_path: Path) -> dict[str, str]:
    """The environment of a process that has the spy plugin installed; its log is SPY_LOG."""
    site = tmp_path / "site"
    dist = site / "spy_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: spy-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pydantic]\nspy = spy_plugin:plugin\n")
    (site / "spy_plugin.py").write_text(_SPY)
    return {**os.environ, "PYTHONPATH": str(site), "SPY_LOG": str(tmp_path / "spy.log")}


def _log(env: dict[str, str]) -> list[str]:
    log = Path(env["SPY_LOG"])
    return log.read_text().splitlines() if log.exists() else []


def test_the_spy_is_a_working_plugin(spy: dict[str, str]) -> None:
    code = "import pydantic\nclass Model(pydantic.BaseModel):\n    x: int\n"
    subprocess.run([sys.executable, "-c", code], env=spy, check=True)
    assert _log(spy) == ["loaded", "BaseModel __main__:Model"]


def _bad(tmp_path: Path) -> Path:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BLUEPRINT.read_text().replace("namespace: ", "namespace: Not_A_Name #", 1) + "extra: 1\n")
    return bad


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (["render", "{profile}", "-o", "{tmp}/out", "--dry-run"], 0),
        (["validate", "{profile}"], 0),
        (["render", "{bad}", "-o", "{tmp}/out"], 2),
        (["validate", "{bad}", "--format", "json"], 2),
        (["schema"], 0),
    ],
)
@pytest.mark.parametrize("script", [[str(RLOBS)], [sys.executable, "-m", "rlobs"]], ids=["rlobs", "python -m rlobs"])
def test_no_plugin_sees_rlobs_models(
    spy: dict[str, str], tmp_path: Path, script: list[str], command: list[str], code: int
) -> None:
    argv = [a.format(profile=BLUEPRINT, bad=_bad(tmp_path), tmp=tmp_path) for a in command]
    done = subprocess.run([*script, *argv], env=spy, capture_output=True, text=True, check=False)
    assert done.returncode == code, done.stderr
    assert _log(spy) == []  # not even loaded


def test_a_users_own_setting_does_not_turn_them_back_on(spy: dict[str, str], tmp_path: Path) -> None:
    env = {**spy, "PYDANTIC_DISABLE_PLUGINS": "some-other-plugin"}
    done = subprocess.run([str(RLOBS), "validate", str(_bad(tmp_path))], env=env, capture_output=True, check=False)
    assert done.returncode == 2
    assert _log(spy) == []
