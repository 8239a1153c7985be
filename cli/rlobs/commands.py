"""What each command does, with typed arguments and results; main.py only parses flags and prints."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlobs.bundle.write import Changes, RenderKey

if TYPE_CHECKING:
    from rlobs.bundle.spec import Rendered
    from rlobs.profile.model import Profile
from rlobs.errors import RlobsError

SCHEMA_FILE = "rlobs.schema.json"
_MODELINE = f"# yaml-language-server: $schema=./{SCHEMA_FILE}\n"


@dataclass(frozen=True, slots=True)
class RenderResult:
    profile: Path
    name: str
    out_dir: Path
    changes: Changes

    def as_dict(self) -> dict[str, object]:
        c = self.changes
        return {
            "profile": str(self.profile),
            "name": self.name,
            "output": str(self.out_dir),
            "created": list(c.created),
            "updated": list(c.updated),
            "deleted": list(c.deleted),
            "unchanged": len(c.unchanged),
        }


def init(blueprint: str | None, target: str | None, out: Path, *, force: bool) -> list[Path]:
    """Write the blueprint (or the target's default blueprint) as a new profile, and the schema beside it."""
    from rlobs.blueprints import default_blueprint, load_blueprints

    found = load_blueprints()
    if blueprint is None:
        blueprint = default_blueprint(found, target)
    if blueprint not in found:
        raise RlobsError(f"unknown blueprint {blueprint!r}: expected one of {', '.join(found)}")
    bp = found[blueprint]
    if target is not None and bp.target != target:
        raise RlobsError(f"blueprint {blueprint} is for target {bp.target}, not {target}")
    schema_path = out.parent / SCHEMA_FILE
    write_file(out, _MODELINE + bp.text, force=force)
    written = [out]
    # The schema is rlobs's own output: refresh it when absent or when --force is given.
    if not schema_path.exists() or force:
        write_file(schema_path, schema_text(), force=force)
        written.append(schema_path)
    return written


def write_file(path: Path, text: str, *, force: bool) -> None:
    """Write one file the user named: a new one, or with `force` a replacement (never a folder, never half)."""
    if path.is_dir():
        raise RlobsError(f"{path}: expected a file name, got a folder")
    if path.exists() and not force:
        raise RlobsError(f"{path} exists: expected a new file (pass --force to overwrite it)")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.rlobs-tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def schema_text() -> str:
    from pydantic import TypeAdapter

    from rlobs.profile.fields import ProfileJsonSchema
    from rlobs.profile.model import Profile

    schema = TypeAdapter(Profile).json_schema(by_alias=True, schema_generator=ProfileJsonSchema)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://rlobs.dev/schema/rlobs.v1alpha1.profile.json",
        **schema,
    }
    return json.dumps(schema, indent=2) + "\n"


def _load_all(profiles: list[Path]) -> list[tuple[bytes, Profile]]:
    """Load every profile before rendering any, so one bad profile writes nothing at all; each with its bytes."""
    from rlobs.errors import ProfileError
    from rlobs.profile.load import load_source

    loaded, problems = [], []
    for path in profiles:
        try:
            loaded.append(load_source(path))
        except ProfileError as exc:
            problems += exc.problems
    if problems:
        raise ProfileError(problems)
    names = [p.metadata.name for _, p in loaded]
    from collections import Counter

    dupes = sorted(n for n, count in Counter(names).items() if count > 1)
    if dupes:
        raise RlobsError(f"profiles share metadata.name {', '.join(dupes)}: expected one bundle name per profile")
    return loaded


def fleet_file(paths: list[Path]) -> Path | None:
    """The fleet file among the arguments (a fleet is rendered alone), or None when they are all profiles."""
    from rlobs.profile.kind import is_fleet

    fleets = [p for p in paths if p.is_file() and is_fleet(_text(p))]
    if fleets and len(paths) > 1:
        raise RlobsError(f"{fleets[0]} is a fleet: expected it as the only file (it renders every cluster it lists)")
    return fleets[0] if fleets else None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""  # the loader reports it


def render(
    profiles: list[Path], out: Path, *, write: bool, force: bool, with_diff: bool, progress: Progress | None = None
) -> list[RenderResult]:
    answered = up_to_date(profiles, out)
    if answered is not None:
        return answered
    return render_full(profiles, out, write=write, force=force, with_diff=with_diff, progress=progress)


# Shows the progress of a render of many bundles: called with their number, it gives a function to call with each
# bundle's name as it is done (rlobs.progress.bundles; the commands themselves print nothing).
Progress = Callable[[int], AbstractContextManager[Callable[[str], None]]]


@contextmanager
def _no_progress(_total: int) -> Iterator[Callable[[str], None]]:
    yield lambda _name: None


def render_full(
    profiles: list[Path],
    out: Path,
    *,
    write: bool,
    force: bool,
    with_diff: bool = False,
    progress: Progress | None = None,
) -> list[RenderResult]:
    """The render itself, when up_to_date() found that some bundle may differ."""
    fleet = fleet_file(profiles)
    if fleet is not None:
        from rlobs.fleet import commands as fleets

        name, changes = fleets.render(fleet, out, write=write, force=force, with_diff=with_diff)
        return [RenderResult(fleet, name, out, changes)]
    from rlobs.renderkey import render_key, render_keys

    if len(profiles) > 1:
        from rlobs import batch

        loaded = _load_all(profiles)
        keys = render_keys([data for data, _ in loaded])
        jobs = [
            batch.Job(path, p, RenderKey(key, p.metadata.name), out / p.metadata.name)
            for path, (_, p), key in zip(profiles, loaded, keys, strict=True)
        ]
        with (progress or _no_progress)(len(jobs)) as advance:
            done = batch.render_many(jobs, write=write, force=force, diff=with_diff, advance=advance)
        return [RenderResult(j.path, j.key.name, j.out_dir, c) for j, c in zip(jobs, done, strict=True)]
    from rlobs.bundle.check import Checker
    from rlobs.bundle.write import recorded_digests

    # When re-rendering a bundle, HCL text the manifest records was checked before (rlobs writes only checked
    # files) and is not parsed again.
    with Checker(recorded_digests(out)) as checker:
        from rlobs.pipeline import build

        ((data, profile),) = _load_all(profiles)
        built = build(profile, checker)
    key = RenderKey(render_key(data), profile.metadata.name)
    return _apply([(profiles[0], key, built, out)], write=write, force=force, diff=with_diff)


def up_to_date(profiles: list[Path], out: Path) -> list[RenderResult] | None:
    """The results when every bundle is already exactly what its profile renders (rlobs.renderkey), found from
    the render keys in the manifests without importing the rendering stack; None when anything may differ."""
    from rlobs.bundle.write import fresh, recorded_key
    from rlobs.profile.source import read_source
    from rlobs.renderkey import render_keys

    try:
        keys = render_keys([read_source(p) for p in profiles])
        if len(set(keys)) != len(keys):
            return None  # the same profile twice: the full load reports the shared name
        if len(profiles) == 1:
            dirs = {keys[0]: out}
        else:  # out/<metadata.name>: found by the key its manifest records, then checked in full by fresh()
            subdirs = sorted(out.iterdir()) if out.is_dir() else []
            dirs = {k: d for d in subdirs if (k := recorded_key(d)) is not None}
    except (OSError, ValueError):
        return None
    results = []
    for path, key in zip(profiles, keys, strict=True):
        out_dir = dirs.get(key)
        found = fresh(out_dir, key) if out_dir is not None else None
        if out_dir is None or found is None or (len(profiles) > 1 and found[0] != out_dir.name):
            return None
        results.append(RenderResult(path, found[0], out_dir, Changes(unchanged=found[1])))
    return results


def _apply(
    jobs: list[tuple[Path, RenderKey, tuple[Rendered, ...], Path]], *, write: bool, force: bool, diff: bool
) -> list[RenderResult]:
    """Lock every bundle directory (in path order, so two renders cannot deadlock), plan all, then write all:
    one refused bundle writes nothing, and no other render can change a directory between its plan and write."""
    from rlobs.bundle.write import open_bundle
    from rlobs.targets import producible

    with ExitStack() as stack:
        dirs = sorted({j[3] for j in jobs})
        bundles = {d: stack.enter_context(open_bundle(d, producible, write=write)) for d in dirs}
        results = []
        for path, key, files, out_dir in jobs:
            # --check, --diff and --dry-run report foreign or edited files as differences; only a write refuses them.
            changes = bundles[out_dir].plan(files, force=force or not write, with_diff=diff, key=key)
            results.append(RenderResult(path, key.name, out_dir, changes))
        if write:
            for (_, key, files, out_dir), result in zip(jobs, results, strict=True):
                bundles[out_dir].write(files, result.changes, key=key)
    return results


def validate(profiles: list[Path], cluster_secrets: Path | None = None) -> list[str]:
    fleet = fleet_file(profiles)
    if fleet is not None:
        from rlobs.fleet import commands as fleets

        return [fleets.validate(fleet, cluster_secrets)]
    if cluster_secrets is not None:
        raise RlobsError("--cluster-secrets checks a fleet's cluster Secrets: expected a fleet file (kind: Fleet)")
    from rlobs.bundle.check import Checker

    with Checker() as checker:
        from rlobs.pipeline import build

        loaded = _load_all(profiles)
        for _, profile in loaded:
            build(profile, checker)
    return [p.metadata.name for _, p in loaded]


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
    """The signal catalog as tables (metrics, attributes, spans, series per pipeline) and as data."""
    from rlobs.bundle.filters import number
    from rlobs.rl import naming
    from rlobs.rl.catalog import Metric, load_catalog

    catalog = load_catalog()
    # Series names on every pipeline: what a user greps their backend for.
    pipelines = naming.PIPELINES

    def series(m: Metric, p: naming.Pipeline) -> str:
        return naming.series(m, p, "bucket" if m.kind == "histogram" else "")

    data = {
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
                "series": {p: series(m, p) for p in pipelines},
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
    tables = (
        Table(
            ("metric", "kind", "unit", "signal", "description"),
            tuple((m.name, m.kind, m.unit, m.signal, m.description) for m in catalog.metrics),
        ),
        Table(
            ("attribute", "scope", "description"), tuple((a.name, a.scope, a.description) for a in catalog.attributes)
        ),
        Table(
            ("span", "records", "attributes"),
            tuple(
                (s.name, catalog.metric(s.metric).name, ", ".join(catalog.attribute(k).name for k in s.attributes))
                for s in catalog.spans
            ),
        ),
        Table(
            ("metric", *pipelines),
            tuple((m.name, *(series(m, p) for p in pipelines)) for m in catalog.metrics),
            code_columns=tuple(range(len(pipelines) + 1)),
        ),
    )
    buckets = sorted({b for m in catalog.metrics for b in m.buckets})
    notes = (
        "Every metric point carries the identity attributes; span-scope attributes are on spans only.",
        "Histogram buckets (ms): " + ", ".join(number(b) for b in buckets),
    )
    return SignalsReport(tables, notes, data)


def framework_signals(name: str) -> SignalsReport:
    """How one RL framework's logged keys map to the catalog: a row per catalog metric, and the keys left out."""
    from rlobs.rl.adapters import ONE_LINE, mapping_rows
    from rlobs.rl.catalog import load_catalog

    catalog = load_catalog()
    framework = catalog.framework(name)
    if framework is None:
        known = ", ".join(f.name for f in catalog.frameworks)
        raise RlobsError(f"unknown framework {name!r}: expected one of {known}")
    rows = mapping_rows(framework, catalog)
    columns = ("metric", "coverage", "source", "how", "phase", "note")
    tables = (
        Table(
            ("metric", "coverage", f"{framework.name} key", "value, conversion", "phase", "note"),
            tuple(tuple(r[c] for c in columns) for r in rows),
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
