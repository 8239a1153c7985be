"""What a bundle consists of: a plan is data (paths, formats, structures or template names), no text yet."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# How each output is serialised and parsed back by check.py.
Format = Literal["yaml", "yaml-stream", "json", "hcl", "sh", "py", "md", "text"]


@dataclass(frozen=True, slots=True)
class FileSpec:
    """One output file: either `data` serialised per `fmt`, or a Jinja `template` rendered with `context`."""

    path: str  # POSIX, relative to the bundle root
    fmt: Format
    data: Any = None
    template: str | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    executable: bool = False
    header: str | None = None  # a comment line for YAML/HCL data outputs, e.g. where the file goes


@dataclass(frozen=True, slots=True)
class Plan:
    name: str  # the profile's metadata.name
    files: tuple[FileSpec, ...]
