"""What each command does, with typed arguments and results; main.py only parses flags and prints."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlobs.bundle.request import Mode, RenderRequest
from rlobs.bundle.write import Changes
from rlobs.errors import Problem, RlobsError
from rlobs.files import write_file

SCHEMA_FILE = "rlobs.schema.json"

# Each list of a plan and what the render does to its files (a file kept is only forgotten by the manifest).
_ACTIONS = (
    ("created", "create"),
    ("updated", "update"),
    ("deleted", "delete"),
    ("leftovers", "clean-up"),
    ("recovered", "clean-up"),
    ("kept", "keep"),
    ("unchanged", "none"),
    ("replayed", "finish"),  # last: a file an interrupted write's journal changes is reported as that
)


@dataclass(frozen=True, slots=True)
class RenderResult:
    profile: Path
    name: str
    out_dir: Path
    changes: Changes
    warnings: tuple[Problem, ...] = ()  # the profile's (profile.warnings): printed, never a refusal

    def status(self, mode: Mode) -> str:
        if self.changes.refused:
            return "would_refuse"
        return ("drift" if Mode.CHECK in mode else "changed") if self.changes.changed else "unchanged"

    def files(self, mode: Mode) -> list[dict[str, str]]:
        c = self.changes
        refused = {r.path: r.reason for r in c.refused if r.path}
        actions = {p: action for field, action in _ACTIONS for p in getattr(c, field)}
        actions.update({p: "none" for p in refused if p not in actions})  # an edited file rlobs would delete
        changed, entries = "drift" if Mode.CHECK in mode else "changed", []
        for path, action in sorted(actions.items()):
            status = "would_refuse" if path in refused else "unchanged" if action in ("none", "keep") else changed
            entry = {"path": path, "action": action, "status": status}
            if path in refused:
                entry["reason"] = refused[path]
            entries.append(entry)
        return entries

    def as_dict(self, mode: Mode = Mode.WRITE) -> dict[str, object]:
        c = self.changes
        return {
            "profile": str(self.profile),
            "name": self.name,
            "output": str(self.out_dir),
            "owner": c.owner.as_dict() if c.owner is not None else None,
            "status": self.status(mode),
            **({"drift": bool(c.changed or c.refused)} if Mode.CHECK in mode else {}),
            "created": list(c.created),
            "updated": list(c.updated),
            "deleted": list(c.deleted),
            "unchanged": len(c.unchanged),
            "warnings": [w.as_dict() for w in self.warnings],
            "refusals": [{"reason": r.reason, "path": r.path, "message": r.line(self.out_dir)} for r in c.refused],
            "files": self.files(mode),
        }


def init(blueprint: str | None, target: str | None, out: Path, *, force: bool, text: str | None = None) -> list[Path]:
    from rlobs.blueprints import default_blueprint, load_blueprints

    found = load_blueprints()
    if blueprint is None:
        blueprint = default_blueprint(found, target)
    if blueprint not in found:
        raise RlobsError(f"unknown blueprint {blueprint!r}: expected one of {', '.join(found)}")
    bp = found[blueprint]
    if target is not None and bp.target != target:
        raise RlobsError(f"blueprint {blueprint} is for target {bp.target}, not {target}")
    return _write_starter(out, bp.text if text is None else text, SCHEMA_FILE, schema_text, force=force)


def render_folder(profile: Path) -> str:
    """The `render -o` folder, from here, putting the starter's bundle at its Git repository path (or Quick start's)."""
    from rlobs.profile.worktree import DEFAULT_FOLDER, from_here
    from rlobs.profile.yamlsource import get_at, load_yaml
    from rlobs.targets import TARGETS

    data = load_yaml(profile.read_text(encoding="utf-8"))
    key = ("gitops", "path") if data.get("kind") == "Fleet" else TARGETS[data["target"]].REPO_PATH
    value = get_at(data, key) if key is not None else None
    return from_here(value) if isinstance(value, str) else DEFAULT_FOLDER


def init_fleet(out: Path, *, force: bool) -> list[Path]:
    from rlobs.fleet import commands as fleets
    from rlobs.resources import package_dir

    text = package_dir("blueprints").joinpath("fleet", fleets.EXAMPLE).read_text(encoding="utf-8")
    return _write_starter(out, text, fleets.SCHEMA_FILE, fleets.schema_text, force=force)


def _write_starter(out: Path, text: str, schema: str, schema_text: Callable[[], str], *, force: bool) -> list[Path]:
    """The starter file pointing editors at its schema, and the schema beside it unless one is there (or `force`)."""
    write_file(out, f"# yaml-language-server: $schema=./{schema}\n{text}", force=force)
    if os.path.lexists(out.parent / schema) and not force:
        return [out]
    write_file(out.parent / schema, schema_text(), force=force)
    return [out, out.parent / schema]


def schema_text() -> str:
    from pydantic import TypeAdapter

    from rlobs.profile.fields import ProfileJsonSchema
    from rlobs.profile.schema import add_cross_field_rules, document
    from rlobs.targets import profile_union, schema_rules

    union = TypeAdapter(profile_union()).json_schema(by_alias=True, schema_generator=ProfileJsonSchema)
    return document(add_cross_field_rules(union, schema_rules()), "profile")


def fleet_file(paths: list[Path]) -> Path | None:
    from rlobs.profile.kind import is_fleet

    fleets = [p for p in paths if is_fleet(_text(p))]
    if fleets and len(paths) > 1:
        raise RlobsError(f"{fleets[0]} is a fleet: expected it as the only file (it renders every cluster it lists)")
    return fleets[0] if fleets else None


def _text(path: Path) -> str:
    """The file's text as the loader reads it, for the sniff; "" when that fails (the loader then says why)."""
    from rlobs.profile.source import read_source

    try:
        return read_source(path).decode("utf-8")
    except (OSError, ValueError):
        return ""


def warnings(profiles: list[Path]) -> list[tuple[Problem, ...]]:
    from rlobs.targets import load_warnings

    return [tuple(load_warnings(p)) for p in profiles]


def plan(path: Path) -> tuple[dict[str, Any], str, bool]:
    """`rlobs plan`: the profile's or fleet's plan as data and as text, and whether it is above a budget or quota."""
    from rlobs import sizing

    if fleet_file([path]) is not None:
        from rlobs.fleet import commands as fleets

        fleet = fleets.load_fleet(path)
        f = sizing.plan_fleet(fleet.name, fleet.spec.plan.budget, [m.profile for m in fleet.members])
        return sizing.fleet_data(f), sizing.fleet_text(f), bool(f.over) or any(v.over for v in f.clusters)
    from rlobs.rl.volume import as_data
    from rlobs.targets import load_profile

    v = sizing.plan_profile(load_profile(path))
    return as_data(v), sizing.text(v), bool(v.over) or any(c.quota for c in v.costs)


def render(profiles: list[Path], request: RenderRequest) -> list[RenderResult]:
    """Up-to-date bundles are answered from their render keys, without warnings (given when they were rendered)."""
    answered = up_to_date(profiles, request.out)
    if answered is not None:
        return answered
    fleet = fleet_file(profiles)
    if fleet is not None:
        from rlobs.fleet import commands as fleets

        name, changes = fleets.render(fleet, request)
        return [RenderResult(fleet, name, request.out, changes)]
    from rlobs import batch

    jobs = batch.load(profiles, request.out)
    if len(jobs) == 1:
        done, dirs = [batch.render_one(jobs[0], request)], [request.out]
    else:
        done, dirs = batch.render_many(jobs, request), [request.out / j.key.name for j in jobs]
    found = warnings([j.path for j in jobs])
    return [RenderResult(j.path, j.key.name, d, c, w) for j, d, c, w in zip(jobs, dirs, done, found, strict=True)]


def up_to_date(profiles: list[Path], out: Path) -> list[RenderResult] | None:
    """The results when the render keys this machine recorded show every bundle is current; None when any may differ."""
    from rlobs.bundle.cache import recalled
    from rlobs.bundle.manifest import fresh, holds_bundle
    from rlobs.profile.source import read_source
    from rlobs.profile.worktree import where
    from rlobs.renderkey import render_keys

    try:
        keys = render_keys([read_source(p) for p in profiles], where=where(out))
        if len(set(keys)) != len(keys):
            return None  # the same profile twice: the full load reports the shared name
        if len(profiles) == 1:
            dirs = {keys[0]: out}
        elif holds_bundle(out):
            return None  # several profiles never render into a bundle: the full render refuses it
        else:  # out/<metadata.name>: found by the key this machine recorded there, then checked in full by fresh()
            subdirs = sorted(out.iterdir()) if out.is_dir() else []
            dirs = {k: d for d in subdirs if isinstance(k := (recalled(d) or {}).get("key"), str)}
    except (OSError, ValueError):
        return None
    results = []
    for path, key in zip(profiles, keys, strict=True):
        out_dir = dirs.get(key)
        found = fresh(out_dir, key) if out_dir is not None else None
        if out_dir is None or found is None or (len(profiles) > 1 and found[0] != out_dir.name):
            return None
        results.append(RenderResult(path, found[0], out_dir, Changes(unchanged=found[1], owner=found[2])))
    return results


@dataclass(frozen=True, slots=True)
class Validated:
    profile: Path
    name: str | None
    error: RlobsError | None = None


def validate(profiles: list[Path], cluster_secrets: Path | None = None) -> list[Validated]:
    fleet = fleet_file(profiles)
    if fleet is not None:
        from rlobs.fleet import commands as fleets

        try:
            return [Validated(fleet, fleets.validate(fleet, cluster_secrets))]
        except RlobsError as exc:
            return [Validated(fleet, None, exc)]
    if cluster_secrets is not None:
        raise RlobsError("--cluster-secrets checks a fleet's cluster Secrets: expected a fleet file (kind: Fleet)")
    from rlobs.bundle.check import Checker
    from rlobs.pipeline import build_named
    from rlobs.targets import load_source

    found, checker = [], Checker()
    for path in profiles:
        try:
            _, profile = load_source(path)
            build_named(path, profile, checker)
            found.append(Validated(path, profile.metadata.name))
        except RlobsError as exc:
            found.append(Validated(path, None, exc))
    names = [v.name for v in found if v.name is not None]
    shared = "is another profile's too: expected one bundle name per profile"
    return [
        Validated(v.profile, None, RlobsError(f"{v.profile}: metadata.name {v.name} {shared}"))
        if v.name is not None and names.count(v.name) > 1
        else v
        for v in found
    ]


@dataclass(frozen=True, slots=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    code_columns: tuple[int, ...] = (0,)  # columns shown as `code` in Markdown


@dataclass(frozen=True, slots=True)
class SignalsReport:
    tables: tuple[Table, ...]
    notes: tuple[str, ...]
    data: dict[str, Any]  # the same, for --format json


def signals() -> SignalsReport:
    from rlobs.bundle.filters import number
    from rlobs.rl import naming
    from rlobs.rl.catalog import load_catalog

    catalog = load_catalog()
    # Series names on every pipeline: what a user greps their backend for.
    pipelines = naming.PIPELINES
    data: dict[str, list[dict[str, Any]]] = {
        "metrics": [
            {
                "key": m.key,
                "name": m.name,
                "kind": m.kind,
                "unit": m.unit,
                "signal": m.signal,
                "description": m.description,
                "buckets": list(m.buckets),
                "attributes": list(m.attributes),
                "series": {p: naming.series(m, p, "bucket" if m.kind == "histogram" else "") for p in pipelines},
            }
            for m in catalog.metrics
        ],
        "attributes": [
            {"key": a.key, "name": a.name, "scope": a.scope, "description": a.description} for a in catalog.attributes
        ],
        "spans": [
            {
                "name": s.name,
                "description": s.description,
                "records": catalog.metric(s.metric).name,
                "attributes": [catalog.attribute(k).name for k in s.attributes],
            }
            for s in catalog.spans
        ],
    }
    metrics, attributes, spans = data["metrics"], data["attributes"], data["spans"]
    tables = (
        Table(("metric", "kind", "unit", "signal", "description"), _rows(metrics, "name", "kind", "unit", "signal")),
        Table(("attribute", "scope", "description"), _rows(attributes, "name", "scope")),
        Table(
            ("span", "records", "attributes"),
            tuple((s["name"], s["records"], ", ".join(s["attributes"])) for s in spans),
        ),
        Table(
            ("metric", *pipelines),
            tuple((m["name"], *m["series"].values()) for m in metrics),
            code_columns=tuple(range(len(pipelines) + 1)),
        ),
    )
    buckets = sorted({b for m in catalog.metrics for b in m.buckets})
    notes = (
        "Every metric point carries the identity attributes; span-scope attributes are on spans only.",
        "Histogram buckets (ms): " + ", ".join(number(b) for b in buckets),
    )
    return SignalsReport(tables, notes, data)


def _rows(items: list[dict[str, Any]], *keys: str) -> tuple[tuple[str, ...], ...]:
    return tuple((*(item[k] for k in keys), item["description"]) for item in items)


def framework_signals(name: str) -> SignalsReport:
    from rlobs.rl.adapters import MAPPING_COLUMNS, ONE_LINE, mapping_rows
    from rlobs.rl.catalog import load_catalog

    catalog = load_catalog()
    framework = catalog.framework(name)
    if framework is None:
        known = ", ".join(f.name for f in catalog.frameworks)
        raise RlobsError(f"unknown framework {name!r}: expected one of {known}")
    rows = mapping_rows(framework, catalog)
    tables = (
        Table(
            ("metric", "coverage", f"{framework.name} key", "value, conversion", "phase", "note"),
            tuple(tuple(r[c] for c in MAPPING_COLUMNS) for r in rows),
            code_columns=(0, 2),
        ),
        Table(("not mapped", "why"), framework.unmapped),
    )
    notes = (
        f"Keys read at {framework.pinned}: {framework.sources}",
        f"Hook: {framework.hook}",
        f"In the bundle (workload.run.system: {framework.name}): app/rlobs_adapter.py; {ONE_LINE[framework.name]}.",
    )
    data = {
        "framework": framework.name,
        "systems": list(framework.systems),
        "pinned": framework.pinned,
        "sources": framework.sources,
        "hook": framework.hook,
        "metrics": rows,
        "unmapped": dict(framework.unmapped),
    }
    return SignalsReport(tables, notes, data)
