"""Plan a fleet's bundle: each cluster's own bundle, what each target adds, every cluster's profile and the README."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rlobs.bundle import appsets, pool
from rlobs.bundle.appsets import Rule, SecretMetadata
from rlobs.bundle.check import Checker
from rlobs.bundle.fleetpart import FleetPart
from rlobs.bundle.render import make_env, render
from rlobs.bundle.spec import DataFile, FileSpec, Plan, Rendered, TemplateFile
from rlobs.errors import RlobsError
from rlobs.profile.fleet import Fleet, Member
from rlobs.profile.kind import CLUSTERS_DIR
from rlobs.rl.catalog import for_profile, load_catalog
from rlobs.targets import TARGETS

README = "README.md"
PROFILES_DIR = "profiles"


@dataclass(frozen=True, slots=True)
class FleetBuild:
    """A fleet's files, and what the checks and the preview need to see besides them."""

    files: tuple[Rendered, ...]
    appsets: dict[str, dict[str, Any]]  # bundle path -> ApplicationSet
    selected: dict[str, list[str]]  # bundle path of an ApplicationSet -> the clusters it selects
    contracts: dict[str, SecretMetadata]  # cluster -> what its Argo CD cluster Secret carries
    rules: dict[str, Rule]  # what a valid value of each contract key is
    singles: dict[str, tuple[Rendered, ...]]  # cluster -> its single-cluster bundle


def _singles(members: tuple[Member, ...], checker: Checker | None) -> dict[str, tuple[Rendered, ...]]:
    catalog = load_catalog()
    env = make_env()

    def single(index: int) -> tuple[Rendered, ...]:
        profile = members[index].profile
        files = render(TARGETS[profile.target].plan(profile, for_profile(catalog, profile)), env)
        if checker is not None:
            pool.checker().check(files)
        return files

    if checker is None:
        return {m.name: single(i) for i, m in enumerate(members)}
    built: dict[int, tuple[Rendered, ...]] = {}
    with pool.run(single, len(members)) as results:
        for index, files in results:
            checker.remember(files)
            built[index] = files
    return {m.name: built[i] for i, m in enumerate(members)}


def build_fleet(fleet: Fleet, checker: Checker | None = None) -> FleetBuild:
    """Raises when the referential check fails. With a `checker`, the clusters' files are built and checked in
    parallel (rlobs.bundle.pool) and remembered by it; the fleet's own files are left to it."""
    # Every registered target's part (one with no cluster in the fleet still gives its README notes).
    parts = [t.fleet_part(fleet, load_catalog()) for t in TARGETS.values()]
    replaced = {name: prefixes for part in parts for name, prefixes in part.replaced.items()}
    singles = _singles(fleet.members, checker)
    sets = {path: s for part in parts for path, s in part.appsets.items()}
    selected = {path: names for part in parts for path, names in part.selected.items()}
    contracts = {name: c for part in parts for name, c in part.contracts.items()}
    rules = {**appsets.RULES, **{key: rule for part in parts for key, rule in part.rules.items()}}
    problems = appsets.referential_problems(sets, selected, contracts, rules)
    if problems:
        raise RlobsError("the cluster Secrets do not hold what the ApplicationSets read:\n  " + "\n  ".join(problems))
    specs: list[FileSpec] = [f for part in parts for f in part.files]
    specs += [
        DataFile(
            f"{PROFILES_DIR}/{m.name}.yaml",
            "yaml",
            m.data,
            "Each cluster's effective profile: `rlobs render` of it is that cluster's single-cluster bundle.",
            header=f"The effective profile of cluster {m.name} (fleet {fleet.name}); generated, edit the fleet file.",
        )
        for m in fleet.members
    ]
    specs.append(_readme(fleet, parts, specs))
    files = list(render(Plan(fleet.name, tuple(specs))))
    for m in fleet.members:  # each cluster's bundle in its folder, less what the fleet's own files replace
        gone = replaced.get(m.name, ())
        files += [
            replace(r, path=f"{CLUSTERS_DIR}/{m.name}/{r.path}") for r in singles[m.name] if not r.path.startswith(gone)
        ]
    return FleetBuild(tuple(sorted(files, key=lambda r: r.path)), sets, selected, contracts, rules, singles)


def _readme(fleet: Fleet, parts: list[FleetPart], specs: list[FileSpec]) -> TemplateFile:
    folders = {path: folder for part in parts for path, folder in part.folders.items()}
    tables = sorted({(folders.get(f.path) or f.path.partition("/")[0] + "/", f.description) for f in specs})
    return TemplateFile(
        README,
        "md",
        "fleet/README.md.j2",
        "This file.",
        {
            "fleet": fleet,
            "members": fleet.members,
            "details": {name: d for part in parts for name, d in part.details.items()},
            "folders": tables,
            "gitops_notes": [part.gitops_note for part in parts if part.gitops_note],
            "folder_notes": [part.folder_note for part in parts if part.folder_note],
            "sections": [part.readme for part in parts if part.readme is not None],
        },
    )
