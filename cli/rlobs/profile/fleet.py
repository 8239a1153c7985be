"""A fleet file: profile defaults shared by many clusters, each cluster expanded into its effective profile."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path as FsPath
from typing import Any, NamedTuple

from rlobs.errors import Problem, ProfileError
from rlobs.profile.fleetspec import Fleet as Fleet  # where they were defined before
from rlobs.profile.fleetspec import FleetCluster, FleetGitOps, FleetModel, FleetSpec, FleetTarget, Layer, fleet_model
from rlobs.profile.fleetspec import Member as Member
from rlobs.profile.load import (
    dotted,
    duplicates,
    located_problem,
    parse_located,
    read_input,
    validate_located,
    validate_model,
    validated,
)
from rlobs.profile.model import API_VERSION, Metadata, ProfileBase
from rlobs.profile.worktree import placed
from rlobs.profile.yamlsource import Located, Path, plain, value_at


class Targets(NamedTuple):
    fleet: Mapping[str, FleetTarget]
    profiles: Mapping[str, type[ProfileBase]]


def load_fleet(path: FsPath, targets: Targets, out: FsPath | None = None) -> Fleet:
    return parse_fleet(read_input(path, "fleet file")[1], targets, str(path), out)


def parse_fleet(text: str, targets: Targets, display: str = "<fleet>", out: FsPath | None = None) -> Fleet:
    """With `out`, the GitOps path follows `out` (profile.worktree) first: the clusters' bundle paths derive from it."""
    located = parse_located(text, display)
    if not isinstance(located.data, dict):
        raise ProfileError([Problem(display, 1, 1, "", "expected a mapping with kind: Fleet")])
    problems = duplicates(located, display)
    model = fleet_model(targets.fleet)
    try:
        spec = validate_model(model.spec, located, display)
        if out is not None and spec.gitops is not None:
            spec = placed(spec, ("gitops", "path"), out, text, display)
        entries = list(enumerate(spec.clusters))
    except ProfileError as exc:
        # Still expand every cluster whose own entry is valid, so that one run reports every problem.
        problems += exc.problems
        spec, entries = _lenient(located.data, model, targets.fleet)
    fixed = {**_FIXED, **{key: setter for part in targets.fleet.values() for key, setter in part.FIXED.items()}}
    problems += _fixed_key_problems(spec, entries, located, display, fixed)
    members = []
    for i, cluster in entries:
        try:
            members.append(_member(spec, i, cluster, located, display, targets, fixed))
        except ProfileError as exc:
            problems += exc.problems
    for part in targets.fleet.values():
        problems += part.fleet_problems(spec, members, located, display)
    if problems:
        raise ProfileError(_unique(problems))
    return Fleet(spec, tuple(members))


# Keys the fleet sets from each cluster's entry (a default or override of them would be ignored); targets add FIXED.
_FIXED: dict[Path, str] = {
    ("apiVersion",): "the fleet's apiVersion",
    ("kind",): "kind: Profile",
    ("target",): "the cluster's target",
    ("metadata",): "the cluster's name",
}


def _lenient(
    data: dict[str, Any], model: FleetModel, parts: Mapping[str, FleetTarget]
) -> tuple[FleetSpec, list[tuple[int, FleetCluster]]]:
    """The parts of a fleet that are valid on their own (its metadata, gitops and each cluster's entry)."""
    # An invalid metadata's problems are reported already.
    metadata = validated(Metadata, data.get("metadata"))[0] or Metadata.model_construct(name="fleet", description="")
    gitops = validated(FleetGitOps, data.get("gitops"))[0]
    entries = []
    raw_clusters = data.get("clusters")
    for i, raw in enumerate(raw_clusters if isinstance(raw_clusters, list) else []):
        cluster = validated(model.cluster, raw)[0]
        if cluster is not None and (not parts[cluster.target].NEEDS_GITOPS or gitops is not None):
            entries.append((i, cluster))
    raw_defaults = data.get("defaults")
    defaults: dict[str, Any] = raw_defaults if isinstance(raw_defaults, dict) else {}
    spec = model.spec.model_construct(
        api_version="rlobs/v1alpha1",
        kind="Fleet",
        metadata=metadata,
        gitops=gitops,
        defaults=defaults,
        clusters=tuple(c for _, c in entries),
    )
    return spec, entries


def _fixed_key_problems(
    spec: FleetSpec, entries: list[tuple[int, FleetCluster]], located: Located, display: str, fixed: dict[Path, str]
) -> list[Problem]:
    bodies: list[tuple[Path, dict[str, Any]]] = [(("defaults",), spec.defaults)]
    bodies += [(("clusters", i, "overrides"), c.overrides) for i, c in entries]
    problems = []
    for base, body in bodies:
        for key, setter in fixed.items():
            if value_at(body, key)[0]:
                message = f"expected no {dotted(key)} here: the fleet sets it from {setter}"
                problems.append(located_problem(located, display, (*base, *key), message))
    return problems


class _Merged:
    """The effective profile's data, merged as Helm merges values files, and each path's origin in the fleet file."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.origin: dict[Path, Path] = {(): ()}

    def set(self, path: Path, value: Any, source: Path) -> None:
        """Merge `value` at `path`: a mapping onto a mapping merges key by key, anything else replaces."""
        node: Any = self.data
        for depth, part in enumerate(path[:-1]):
            if not isinstance(node.get(part), dict):
                node[part] = {}
                self.origin.setdefault(path[: depth + 1], source[:-1] or source)
            node = node[part]
        last = path[-1]
        if isinstance(value, dict) and isinstance(node.get(last), dict):
            for key, sub in value.items():
                self.set((*path, key), sub, (*source, key))
            return
        self.origin = {p: s for p, s in self.origin.items() if p[: len(path)] != path}
        if value is None:
            node.pop(last, None)  # null removes the key, back to the profile's default (as in a Helm values file)
        else:
            node[last] = plain(value)
            self._record(path, value, source)

    def _record(self, path: Path, value: Any, source: Path) -> None:
        self.origin[path] = source
        if isinstance(value, dict):
            for key, sub in value.items():
                self._record((*path, key), sub, (*source, key))
        elif isinstance(value, list | tuple):
            for n, sub in enumerate(value):
                self._record((*path, n), sub, (*source, n))


def _member(
    spec: FleetSpec, i: int, c: FleetCluster, fleet: Located, display: str, targets: Targets, fixed: dict[Path, str]
) -> Member:
    merged = _Merged()
    at: Path = ("clusters", i)
    layer: Layer = [
        (("apiVersion",), API_VERSION, ("apiVersion",)),
        (("kind",), "Profile", ("kind",)),
        (("metadata", "name"), c.name, (*at, "name")),
        (("metadata", "description"), f"{spec.metadata.name}: {c.environment} cluster {c.name}", (*at, "name")),
        (("target",), c.target, (*at, "target")),
    ]
    for path, value, source in layer + targets.fleet[c.target].layer(spec, i, c, fleet.data["clusters"]):
        merged.set(path, value, source)
    others = set(targets.fleet) - {c.target}
    fixed_top = {p[0] for p in fixed if len(p) == 1}
    for base, body in ((("defaults",), spec.defaults), (("clusters", i, "overrides"), c.overrides)):
        for key, value in body.items():
            if key in fixed_top or (key in others and base == ("defaults",)):
                continue  # fixed keys are reported once by _fixed_key_problems; defaults hold every section
            if not _fixed_inside(key, value, fixed):
                merged.set((key,), value, (*base, key))
    located = Located(
        merged.data,
        values={p: fleet.pos(s) for p, s in merged.origin.items()},
        keys={p: fleet.pos(s, key=True) for p, s in merged.origin.items()},
    )
    try:
        profile = validate_located(located, display, targets.profiles)
    except ProfileError as exc:
        paths = {dotted(p): s for p, s in merged.origin.items()}
        raise ProfileError([_in_fleet(p, paths, i, c.name) for p in exc.problems]) from None
    return Member(i, c, profile, merged.data)


def _fixed_inside(key: str, value: Any, fixed: dict[Path, str]) -> bool:
    """A section that sets a fixed nested key: reported by _fixed_key_problems, left out of the merge."""
    return any(p[0] == key and len(p) > 1 and value_at({key: value}, p)[0] for p in fixed)


def _in_fleet(problem: Problem, paths: dict[str, Path], index: int, name: str) -> Problem:
    source = paths.get(problem.path)
    where = dotted(source) if source else f"clusters[{index}]({name}).{problem.path}"
    which = f" (in cluster {name})" if source and source[0] == "defaults" else ""
    return Problem(problem.file, problem.line, problem.column, where, problem.message + which)


def _unique(problems: list[Problem]) -> list[Problem]:
    """Each problem once (a bad default is bad for every cluster); sorted by position in the fleet file."""
    by_key: dict[tuple[int, int, str, str], list[Problem]] = {}
    for p in problems:
        base = p.message.split(" (in cluster ")[0]
        by_key.setdefault((p.line, p.column, p.path, base), []).append(p)
    out = []
    for (line, column, path, base), group in sorted(by_key.items()):
        clusters = [p.message.split(" (in cluster ")[1].rstrip(")") for p in group if " (in cluster " in p.message]
        message = f"{base} (in clusters {', '.join(clusters)})" if len(clusters) > 1 else group[0].message
        out.append(Problem(group[0].file, line, column, path, message))
    return out
