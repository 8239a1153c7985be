"""What each command does, with typed arguments and results; main.py only parses flags and prints."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlobs.bundle.write import Changes

if TYPE_CHECKING:
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
    if out.exists() and not force:
        raise RlobsError(f"{out} exists: expected a new file (pass --force to overwrite it)")
    schema_path = out.parent / SCHEMA_FILE
    schema = schema_text()
    written = []
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(_MODELINE + bp.text, encoding="utf-8")
    written.append(out)
    # The schema is rlobs's own output: refresh it when absent or when --force is given.
    if not schema_path.exists() or force:
        schema_path.write_text(schema, encoding="utf-8")
        written.append(schema_path)
    return written


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


def _load_all(profiles: list[Path]) -> list[Profile]:
    """Load every profile before rendering any, so one bad profile writes nothing at all."""
    from rlobs.errors import ProfileError
    from rlobs.profile.load import load_profile

    loaded, problems = [], []
    for path in profiles:
        try:
            loaded.append(load_profile(path))
        except ProfileError as exc:
            problems += exc.problems
    if problems:
        raise ProfileError(problems)
    names = [p.metadata.name for p in loaded]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RlobsError(f"profiles share metadata.name {', '.join(dupes)}: expected one bundle name per profile")
    return loaded


def render(profiles: list[Path], out: Path, *, write: bool, force: bool, with_diff: bool) -> list[RenderResult]:
    from rlobs.bundle.check import Checker

    # Made before the heavy imports below, so its parser process warms up on the other core meanwhile.
    with Checker() as checker:
        from rlobs.bundle.write import plan_changes, write_tree
        from rlobs.pipeline import build

        loaded = _load_all(profiles)
        built = [build(p, checker) for p in loaded]
    results = []
    for path, profile, files in zip(profiles, loaded, built, strict=True):
        out_dir = out if len(loaded) == 1 else out / profile.metadata.name
        if out_dir.exists() and not out_dir.is_dir():
            raise RlobsError(f"{out_dir}: expected a directory, got a file")
        # --check, --diff and --dry-run report foreign or edited files as differences; only a write refuses them.
        changes = plan_changes(files, out_dir, force=force or not write, with_diff=with_diff)
        results.append(RenderResult(path, profile.metadata.name, out_dir, changes))
    if write:
        for result, files in zip(results, built, strict=True):
            result.out_dir.mkdir(parents=True, exist_ok=True)
            write_tree(files, result.out_dir, result.changes)
    return results


def validate(profiles: list[Path]) -> list[str]:
    from rlobs.bundle.check import Checker

    with Checker() as checker:
        from rlobs.pipeline import build

        loaded = _load_all(profiles)
        for profile in loaded:
            build(profile, checker)
    return [p.metadata.name for p in loaded]


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
