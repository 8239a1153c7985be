"""What each command does, with typed arguments and results; main.py only parses flags and prints."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlobs.bundle.write import Changes
from rlobs.errors import RlobsError

SCHEMA_FILE = "rlobs.schema.json"
_MODELINE = f"# yaml-language-server: $schema=./{SCHEMA_FILE}\n"


@dataclass(frozen=True, slots=True)
class RenderResult:
    profile: Path
    name: str
    out_dir: Path
    changes: Changes

    def as_dict(self) -> dict[str, Any]:
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


def init(blueprint: str, target: str | None, out: Path, *, force: bool) -> list[Path]:
    from rlobs.blueprints import load_blueprints

    found = load_blueprints()
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

    from rlobs.profile.model import Profile

    schema = TypeAdapter(Profile).json_schema(by_alias=True)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://rlobs.dev/schema/rlobs.v1alpha1.profile.json",
        **schema,
    }
    return json.dumps(schema, indent=2) + "\n"


def _load_all(profiles: list[Path]) -> list[Any]:
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


def signals(fmt: str) -> None:
    from rlobs import output
    from rlobs.rl import naming
    from rlobs.rl.catalog import load_catalog

    catalog = load_catalog()
    # Series names on every pipeline: what a user greps their backend for.
    pipelines = naming.PIPELINES

    def series(m: Any, p: naming.Pipeline) -> str:
        return naming.series(m, p, "bucket" if m.kind == "histogram" else "")

    if fmt == "json":
        output.as_json(
            {
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
                    {"key": a.key, "name": a.name, "scope": a.scope, "description": a.description}
                    for a in catalog.attributes
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
        )
        return
    metric_rows = [[m.name, m.kind, m.unit, m.signal, m.description] for m in catalog.metrics]
    attr_rows = [[a.name, a.scope, a.description] for a in catalog.attributes]
    span_rows = [
        [s.name, catalog.metric(s.metric).name, ", ".join(catalog.attribute(k).name for k in s.attributes)]
        for s in catalog.spans
    ]
    series_rows = [[m.name, *(series(m, p) for p in pipelines)] for m in catalog.metrics]
    buckets = sorted({b for m in catalog.metrics for b in m.buckets})
    notes = [
        "Every metric point carries the identity attributes; span-scope attributes are on spans only.",
        "Histogram buckets (ms): " + ", ".join(f"{b:.0f}" if b == int(b) else str(b) for b in buckets),
    ]
    if fmt == "markdown":
        tables = [
            (["metric", "kind", "unit", "signal", "description"], metric_rows),
            (["attribute", "scope", "description"], attr_rows),
            (["span", "records", "attributes"], span_rows),
            (["metric", *pipelines], series_rows),
        ]
        for i, (headers, rows) in enumerate(tables):
            print(("\n" if i else "") + "| " + " | ".join(headers) + " |\n" + "|---" * len(headers) + "|")
            for row in rows:
                print("| " + " | ".join(f"`{c}`" if j == 0 or i == 3 else c for j, c in enumerate(row)) + " |")
        print("\n" + "\n".join(notes))
        return
    output.table(metric_rows, ["METRIC", "KIND", "UNIT", "SIGNAL", "DESCRIPTION"])
    print()
    output.table(attr_rows, ["ATTRIBUTE", "SCOPE", "DESCRIPTION"])
    print()
    output.table(span_rows, ["SPAN", "RECORDS", "ATTRIBUTES"])
    print()
    output.table(series_rows, ["METRIC", *(p.upper() for p in pipelines)])
    print()
    for note in notes:
        print(note)
