"""What a bundle consists of: a plan is data (paths, formats, structures or templates, descriptions), no text yet."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# How each output is serialised (DataFile) or checked (TemplateFile, check.py).
DataFormat = Literal["yaml", "json", "hcl"]
Format = Literal["yaml", "json", "hcl", "sh", "py", "md", "text"]


@dataclass(frozen=True, slots=True)
class DataFile:
    """A structured output: `data` built in Python and serialised per `fmt` (never hand-written YAML or JSON)."""

    path: str  # POSIX, relative to the bundle root
    fmt: DataFormat
    data: Any  # JSON-like: dicts, lists, strings, numbers, booleans, None
    description: str  # one line for the bundle README's file table
    header: str | None = None  # a comment above YAML or HCL data, e.g. where the file goes
    # HCL only: a comment above each top-level attribute (filters.hcl_attributes), by attribute name.
    comments: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if self.header is not None and self.fmt == "json":
            raise ValueError(f"{self.path}: JSON outputs cannot carry a header comment")
        if self.comments is not None and self.fmt != "hcl":
            raise ValueError(f"{self.path}: only HCL outputs carry comments on their attributes")


@dataclass(frozen=True, slots=True)
class TemplateFile:
    path: str
    fmt: Format
    template: str  # relative to templates/
    description: str
    context: Mapping[str, Any] = field(default_factory=dict)
    executable: bool = False


FileSpec = DataFile | TemplateFile


@dataclass(frozen=True, slots=True)
class Plan:
    name: str  # the profile's metadata.name
    files: tuple[FileSpec, ...]


@dataclass(frozen=True, slots=True)
class Rendered:
    """One file's final text; `serialised`: written by a serialiser from a DataFile's data, not by a template."""

    path: str
    text: str
    fmt: Format
    executable: bool = False
    serialised: bool = False


def file_table(files: Iterable[FileSpec]) -> list[tuple[str, str]]:
    return [(f.path, f.description) for f in sorted(files, key=lambda f: f.path)]
