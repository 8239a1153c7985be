"""The one place that finds files shipped inside the package (templates, blueprints, data)."""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

from rlobs.errors import RlobsError


def package_dir(name: str) -> Traversable:
    folder = files("rlobs").joinpath(name)
    if not folder.is_dir():
        # Editable installs cannot map the top-level templates/ and blueprints/ into the package.
        raise RlobsError(
            f"rlobs is missing its packaged '{name}' folder: it was installed in editable mode or the wheel "
            "is broken; reinstall with `make install` (or `pip install .`)"
        )
    return folder


def read_text(folder: str, name: str) -> str:
    return package_dir(folder).joinpath(name).read_text(encoding="utf-8")
