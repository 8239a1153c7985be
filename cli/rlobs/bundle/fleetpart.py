"""What one target adds to a fleet bundle beside its clusters' own bundles (rlobs.fleet.plan merges them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rlobs.bundle.appsets import Rule, SecretMetadata
from rlobs.bundle.spec import FileSpec


@dataclass(frozen=True, slots=True)
class ReadmeSection:
    """A section of the fleet README: a template (relative to templates/) and what it reads, as `section.context`."""

    template: str
    context: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FleetPart:
    files: tuple[FileSpec, ...] = ()
    # ApplicationSets delivering its clusters, by their bundle path; the clusters each selects; what each cluster's
    # Argo CD cluster Secret carries for them, and what a valid value of each of its keys is (rlobs.bundle.appsets).
    appsets: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    selected: Mapping[str, list[str]] = field(default_factory=dict)
    contracts: Mapping[str, SecretMetadata] = field(default_factory=dict)
    rules: Mapping[str, Rule] = field(default_factory=dict)
    # cluster -> the path prefixes of its single-cluster bundle the fleet's own files replace (left out of its folder)
    replaced: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The fleet README's words for it: per cluster, its `project / revision` column; where its files lie; who reads
    # the fleet's repository (after "Commit this folder to ..."); what its clusters' folders leave out; its section.
    details: Mapping[str, str] = field(default_factory=dict)
    # its file -> its row of the Files table (default: top folder)
    folders: Mapping[str, str] = field(default_factory=dict)
    gitops_note: str = ""
    folder_note: str = ""
    readme: ReadmeSection | None = None
