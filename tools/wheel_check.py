"""Assert that a built wheel is self-contained: templates, blueprints and data ship inside `rlobs/`."""

from __future__ import annotations

import sys
import zipfile

REQUIRED_PREFIXES = ("rlobs/templates/", "rlobs/blueprints/", "rlobs/data/")
FORBIDDEN_TOP = {"cli", "templates", "blueprints", "tests"}


def main(path: str) -> int:
    names = zipfile.ZipFile(path).namelist()
    missing = [p for p in REQUIRED_PREFIXES if not any(n.startswith(p) for n in names)]
    tops = {n.split("/", 1)[0] for n in names}
    stray = sorted(tops & FORBIDDEN_TOP)
    for p in missing:
        print(f"{path}: missing {p}")
    for t in stray:
        print(f"{path}: must not ship a top-level '{t}' package")
    if not missing and not stray:
        print(f"{path}: ok ({len(names)} files)")
    return 1 if missing or stray else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
