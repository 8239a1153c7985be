"""The render key: one digest of everything a bundle's bytes depend on, so an up-to-date bundle is recognised
without importing the rendering stack (pydantic, Jinja, python-hcl2).

A bundle is a pure function of the profile's bytes, of where its folder sits in a git work tree (that path is the
bundle's path in the Git repository: rlobs.profile.worktree) and of what renders it, and the key covers them: the
profile's bytes as read; the output folder's path in its work tree; rlobs's version and every file of the installed
package (bytecode caches excluded); the Python version and the distributions of the libraries that serialise or check
the output. Rendering reads nothing else (no environment variable, clock or other file), so equal keys mean equal
bundles. Hashing the package takes ~2 ms.
"""

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


def render_keys(profiles: list[bytes], package: Path | None = None, *, where: str | None = None) -> list[str]:
    """The key of the bundle each profile renders into an output folder at `where` in its git work tree (None: in
    none) with the rlobs installed at `package` (default: this one); the installation is hashed once for all."""
    h = hashlib.sha256(_SCHEME)
    for part in (__version__, sys.version, *_libraries(), f"in work tree: {where}"):
        h.update(part.encode() + b"\0")
    h.update(package_digest(package or Path(__file__).parent).encode() + b"\0")
    keys = []
    for profile in profiles:
        one = h.copy()
        one.update(profile)
        keys.append(one.hexdigest())
    return keys


def package_digest(root: Path) -> str:
    """Every file below `root` (names and bytes, in sorted order), without bytecode caches."""
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
        if spec is None or spec.origin is None:
            found.append(f"{dist}: absent")
            continue
        site = str(Path(spec.origin).parent.parent)
        if site not in listings:
            listings[site] = sorted(os.listdir(site))
        prefix = dist + "-"
        found += [f"{module}: {n}" for n in listings[site] if n.lower().startswith(prefix) and n.endswith(".dist-info")]
        found.append(f"{module}: {spec.origin}")
    return found
