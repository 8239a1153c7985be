"""Print a constraints file that pins every runtime dependency of pyproject.toml at its lower bound.

.ci/run installs rlobs with it into a venv of its own and runs the fast test set there, so each `>=` in
[project.dependencies] is a version the code is tested with. Every runtime dependency must have a lower bound.
Usage: python tools/lowest_deps.py > constraints.txt
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# `name[extras] >=1.2, <3 ; marker`: the name and the version after `>=`.
_LOWER = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?:[^;]*,\s*)?>=\s*([^,;\s]+)")


def constraints(dependencies: list[str]) -> list[str]:
    pins = []
    for requirement in dependencies:
        found = _LOWER.match(requirement)
        if found is None:
            raise SystemExit(f"pyproject.toml: {requirement!r} has no lower bound (>=), the lowest version tested")
        pins.append(f"{found[1]}=={found[2]}")
    return pins


def main() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    sys.stdout.write("".join(f"{pin}\n" for pin in constraints(project["dependencies"])))


if __name__ == "__main__":
    main()
