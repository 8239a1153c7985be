"""The render key: a digest of all a bundle's bytes depend on, computed without importing pydantic, Jinja or hcl2."""

from __future__ import annotations

import hashlib
import os
import sys
from importlib.util import find_spec
from pathlib import Path

from rlobs import __version__

_SCHEME = b"rlobs render key 1\0"
# Top-level module -> the distribution name as its .dist-info folder spells it (lowercased).
_LIBRARIES = {
    "jinja2": "jinja2",
    "markupsafe": "markupsafe",
    "yaml": "pyyaml",
    "pydantic": "pydantic",
    "pydantic_core": "pydantic_core",
    "hcl2": "python_hcl2",
    "lark": "lark",
}


def render_keys(profiles: list[bytes], package: Path = Path(__file__).parent, *, where: str | None = None) -> list[str]:
    """`where`: the output folder's path in its git work tree (rlobs.profile.worktree), None outside one."""
    # Rendering reads only the profile, the folder's place in its work tree, rlobs and these libraries (no environment
    # variable, clock or other file), so equal keys mean equal bundles. Hashing the package takes ~2 ms.
    h = hashlib.sha256(_SCHEME)
    for part in (__version__, sys.version, *_libraries(), f"in work tree: {where}"):
        h.update(part.encode() + b"\0")
    h.update(package_digest(package).encode() + b"\0")
    keys = []
    for profile in profiles:
        one = h.copy()
        one.update(profile)
        keys.append(one.hexdigest())
    return keys


def package_digest(root: Path) -> str:
    h = hashlib.sha256()

    def walk(folder: str, rel: str) -> None:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            if e.name == "__pycache__":
                continue
            name = rel + e.name
            if e.is_dir(follow_symlinks=False):
                h.update(f"d\0{name}\0".encode())
                walk(e.path, name + "/")
            else:
                with open(e.path, "rb") as fh:
                    data = fh.read()
                h.update(f"f\0{name}\0{len(data)}\0".encode())
                h.update(data)

    walk(str(root), "")
    return h.hexdigest()


def _libraries() -> list[str]:
    """`name-version.dist-info` of each output library, found beside the library (no import of it)."""
    found = []
    listings: dict[str, list[str]] = {}
    for module, dist in _LIBRARIES.items():
        spec = find_spec(module)
        assert spec is not None and spec.origin is not None  # a dependency rlobs declares, and a regular package
        site = str(Path(spec.origin).parent.parent)
        if site not in listings:
            listings[site] = sorted(os.listdir(site))
        prefix = dist + "-"
        found += [f"{module}: {n}" for n in listings[site] if n.lower().startswith(prefix) and n.endswith(".dist-info")]
        found.append(f"{module}: {spec.origin}")
    return found
