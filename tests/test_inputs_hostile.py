"""Hostile inputs and hostile files in the output folder: huge or special files (a sparse 3 GiB file, a FIFO), links
planted where rlobs writes a file the user named, fleet bodies of every shape, and a long value in every string field
of the profile. Each is one located line and exit 2, fast, never a traceback, a hang or a write outside."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from rlobs.errors import ProfileError
from rlobs.profile.load import MAX_TEXT
from rlobs.targets import PROFILES, parse_profile
from testing.helpers import REPO
from testing.trees import copy_bundle

RLOBS = str(Path(sys.executable).with_name("rlobs"))
EKS = (REPO / "blueprints" / "eks-jark.yaml").read_text(encoding="utf-8")
GKE = (REPO / "blueprints" / "gke-managed-otel.yaml").read_text(encoding="utf-8")
FLEET = (REPO / "blueprints" / "fleet" / "rl-fleet.yaml").read_text(encoding="utf-8")
GiB = 1 << 30


def _rlobs(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess: a hang fails the test (TimeoutExpired) instead of wedging the suite."""
    return subprocess.run([RLOBS, *args], capture_output=True, text=True, timeout=timeout, check=False)


def _one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


# ---- files the user names: never written through a link -----------------------------------------------------------


def _planted(tmp_path: Path, name: str) -> Path:
    """`name` in tmp_path/work as a link to a file outside it; the outside file."""
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / name).symlink_to(outside)
    return outside


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["init", "--blueprint", "eks-jark", "-o", "work/p.yaml"], "p.yaml"),
        (["init", "--blueprint", "eks-jark", "-o", "work/p.yaml"], "rlobs.schema.json"),
        (["init", "--fleet", "-o", "work/f.yaml"], "f.yaml"),
        (["init", "--fleet", "-o", "work/f.yaml"], "rlobs-fleet.schema.json"),
        (["schema", "-o", "work/s.json"], "s.json"),
    ],
)
def test_a_link_at_a_named_target_is_refused_and_never_followed(tmp_path: Path, args: list[str], name: str) -> None:
    outside = _planted(tmp_path, name)
    proc = _rlobs(*args)
    if name in args[-1]:  # the file named itself: it exists (as a link), so refused without --force
        assert "exists: expected a new file (pass --force" in _one_error(proc)
        assert outside.read_text(encoding="utf-8") == "keep me\n"
        proc = _rlobs(*args, "--force")
        assert proc.returncode == 0, proc.stderr
    else:  # the schema beside it: an existing name is kept
        assert proc.returncode == 0, proc.stderr
    assert outside.read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.parametrize(
    "args", [["init", "--blueprint", "eks-jark", "-o", "work/p.yaml"], ["schema", "-o", "work/p.yaml"]]
)
def test_a_link_at_the_old_fixed_temporary_name_is_never_followed(tmp_path: Path, args: list[str]) -> None:
    outside = _planted(tmp_path, ".p.yaml.rlobs-tmp")
    proc = _rlobs(*args)
    assert proc.returncode == 0, proc.stderr
    assert outside.read_text(encoding="utf-8") == "keep me\n"
    assert (tmp_path / "work" / "p.yaml").is_file() and not (tmp_path / "work" / "p.yaml").is_symlink()
    assert sorted(p.name for p in (tmp_path / "work").iterdir() if "rlobs-tmp" in p.name) == [".p.yaml.rlobs-tmp"]


def test_a_dangling_link_at_the_target_counts_as_there(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "s.json").symlink_to(tmp_path / "nowhere.json")
    assert "exists: expected a new file" in _one_error(_rlobs("schema", "-o", "work/s.json"))
    assert not (tmp_path / "nowhere.json").exists()


# ---- huge and special input files ---------------------------------------------------------------------------------


def _sparse(path: Path, size: int = 3 * GiB) -> Path:
    with path.open("wb") as fh:
        fh.truncate(size)
    return path


@pytest.mark.parametrize("command", [["validate"], ["render", "-o", "out"], ["render", "--check", "-o", "out"]])
def test_a_3_gib_profile_is_one_line_and_fast(tmp_path: Path, command: list[str]) -> None:
    big = _sparse(tmp_path / "big.yaml")
    start = time.monotonic()
    proc = _rlobs(command[0], str(big), *command[1:])
    assert time.monotonic() - start < 30
    if command[0] == "validate":
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
        assert "big.yaml:1:1: expected a readable UTF-8 file, got a file of 3 GiB, over the 1 MiB" in proc.stderr
    else:
        assert "over the 1 MiB" in _one_error(proc)


def test_a_3_gib_fleet_among_profiles_is_not_read_whole(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(EKS, encoding="utf-8")
    big = _sparse(tmp_path / "fleet.yaml")
    proc = _rlobs("render", str(big), str(tmp_path / "p.yaml"), "-o", "out")
    assert "over the 1 MiB" in _one_error(proc)


@pytest.mark.parametrize("command", [["validate"], ["render", "-o", "out"], ["render", "--dry-run", "-o", "out"]])
def test_a_fifo_profile_never_blocks(tmp_path: Path, command: list[str]) -> None:
    os.mkfifo(tmp_path / "p.yaml")
    proc = _rlobs(command[0], str(tmp_path / "p.yaml"), *command[1:], timeout=30)
    assert proc.returncode == 2 and "a device, pipe or socket, not a regular file" in proc.stderr, proc.stderr


def test_fifo_cluster_secrets_never_block(tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(FLEET, encoding="utf-8")
    os.mkfifo(tmp_path / "secrets.yaml")
    proc = _rlobs("validate", str(tmp_path / "f.yaml"), "--cluster-secrets", str(tmp_path / "secrets.yaml"))
    assert "not a regular file" in _one_error(proc)


# ---- huge and special files in the output folder -----------------------------------------------------------------


@pytest.fixture
def bundle(tmp_path: Path, rendered_eks_jark: Path) -> Path:
    """tmp_path as `rlobs render p.yaml -o out` leaves it (conftest.rendered_eks_jark: a copy of the session's render
    of the same profile, as if written there)."""
    (tmp_path / "p.yaml").write_text(EKS, encoding="utf-8")
    copy_bundle(rendered_eks_jark, tmp_path / "out")
    return tmp_path / "out"


MODES = [[], ["--check"], ["--dry-run"], ["--diff"]]


@pytest.mark.parametrize("mode", MODES)
def test_a_3_gib_manifest_or_generated_file_is_one_line(bundle: Path, mode: list[str]) -> None:
    manifest = bundle / ".rlobs-manifest.json"
    manifest.unlink()
    _sparse(manifest)
    line = _one_error(_rlobs("render", str(bundle.parent / "p.yaml"), "-o", str(bundle), *mode))
    assert ".rlobs-manifest.json: expected a file rlobs generated, got a file of 3 GiB, over the 8 MiB" in line


@pytest.mark.parametrize("mode", MODES)
def test_a_3_gib_generated_file_is_one_line(bundle: Path, mode: list[str]) -> None:
    target = bundle / "argocd" / "root-app.yaml"
    target.unlink()
    _sparse(target)
    line = _one_error(_rlobs("render", str(bundle.parent / "p.yaml"), "-o", str(bundle), *mode))
    assert "root-app.yaml: expected a file rlobs generated, got a file of 3 GiB, over the 16 MiB" in line


@pytest.mark.parametrize("mode", MODES)
def test_a_fifo_in_the_bundle_never_blocks(bundle: Path, mode: list[str]) -> None:
    for name in (".rlobs-manifest.json", "argocd/root-app.yaml"):
        (bundle / name).rename(bundle / f"{name}.bak")
        os.mkfifo(bundle / name)
        proc = _rlobs("render", str(bundle.parent / "p.yaml"), "-o", str(bundle), *mode, timeout=30)
        assert "got a special file" in _one_error(proc)
        (bundle / name).unlink()
        (bundle / f"{name}.bak").rename(bundle / name)


def _plant_journal(bundle: Path, path: str) -> None:
    (bundle / ".rlobs-staging").mkdir()
    os.mkfifo(bundle / ".rlobs-staging" / "0")
    journal = {"generator": "rlobs", "replace": [{"staged": "0", "path": path}], "delete": []}
    (bundle / ".rlobs-journal.json").write_text(json.dumps(journal), encoding="utf-8")


@pytest.mark.parametrize("mode", [["--check"], ["--dry-run"], ["--diff"]])
def test_a_fifo_named_by_a_journal_never_blocks(bundle: Path, mode: list[str]) -> None:
    _plant_journal(bundle, "argocd/root-app.yaml")
    proc = _rlobs("render", str(bundle.parent / "p.yaml"), "-o", str(bundle), *mode, timeout=30)
    # One line, no hang: a journal this machine did not stage is refused before anything it names is opened.
    assert "remove .rlobs-journal.json and .rlobs-staging/" in _one_error(proc)


def test_a_3_gib_journal_is_one_line(bundle: Path) -> None:
    _sparse(bundle / ".rlobs-journal.json")
    line = _one_error(_rlobs("render", str(bundle.parent / "p.yaml"), "-o", str(bundle), "--check"))
    assert "over the 8 MiB" in line


# ---- fleet bodies of every shape ------------------------------------------------------------------------------------

SHAPES = [
    "[1]",
    "3",
    '"x"',
    "null",
    "true",
    "[]",
    "{1: 2}",
    "{eks: [1]}",
    "{eks: 3}",
    "{gke: [1]}",
    "{workload: 3}",
    "{workload: [1]}",
    "{alerts: [1]}",
    "{a: [1]}",
    "{eks: {prometheus: [1]}}",
    "{eks: {prometheus: 7}}",
    "{metadata: [1]}",
    "{target: [1]}",
    "{[1]: 2}",
    "{null: 1}",
    "{eks: {gitops: [1]}}",
]


def _fleet_with(defaults: str | None = None, overrides: str | None = None) -> str:
    text = FLEET
    if defaults is not None:
        start, end = text.index("\ndefaults:"), text.index("\nclusters:")
        text = f"{text[:start]}\ndefaults: {defaults}{text[end:]}"
    if overrides is not None:
        text = text.replace(
            "    revision: v1.4.0        # prod syncs a release tag\n    overrides:\n",
            f"    revision: v1.4.0\n    overrides: {overrides}\n    was:\n",
            1,
        )
    return text


@pytest.mark.parametrize("where", ["defaults", "overrides"])
def test_every_shape_of_fleet_defaults_and_overrides_is_located(where: str) -> None:
    from rlobs.fleet.commands import parse_fleet

    for shape in SHAPES:
        text = _fleet_with(**{where: shape})
        try:
            parse_fleet(text, "f.yaml")
        except ProfileError as exc:
            assert exc.problems and all(line.startswith("f.yaml:") for line in exc.lines()), (shape, exc.lines())
            if where == "defaults" and not shape.startswith("{"):
                assert any(":11:" in line and "defaults: expected a mapping" in line for line in exc.lines()), shape
        else:
            assert where == "overrides" and shape in ("[]", "null"), shape  # nothing to override


# ---- a long value in every string field of the profile: refused in linear time ----------------------------------


def _string_paths(
    annotation: Any, path: tuple[Any, ...], seen: frozenset[type] = frozenset()
) -> Iterator[tuple[Any, ...]]:
    """Every path below `annotation` that holds text (a model's fields by alias; item 0 of a list; key `k` of a
    mapping)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is str or (origin is typing.Literal and any(isinstance(a, str) for a in args)):
        yield path
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in seen:
        for name, field in annotation.model_fields.items():
            yield from _string_paths(field.annotation, (*path, field.alias or name), seen | {annotation})
    elif origin is typing.Annotated:
        yield from _string_paths(args[0], path, seen)
    elif origin in (typing.Union, types.UnionType):
        for arg in args:
            yield from _string_paths(arg, path, seen)
    elif origin in (tuple, list):
        yield from _string_paths(args[0], (*path, 0), seen)
    elif origin is dict:
        yield from _string_paths(args[1], (*path, "k"), seen)


def _set(data: Any, path: tuple[Any, ...], value: str) -> Any:
    """`data` with `value` at `path`, creating the mappings and lists on the way."""
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = list(data) if isinstance(data, list) and data else [{}]
        items[0] = value if not rest else _set(items[0], rest, value)
        return items
    node = dict(data) if isinstance(data, dict) else {}
    node[head] = value if not rest else _set(node.get(head), rest, value)
    return node


# Stands for the long value in a document dumped once per field; JSON writes it as it is.
_LONG = "@@long-value@@"


def _fields() -> list[tuple[tuple[Any, ...], str]]:
    """Each string field's path, and the blueprint as JSON (which is YAML) with _LONG in that field."""
    found = []
    for target, text in (("eks", EKS), ("gke", GKE)):
        base = yaml.safe_load(text)  # _set copies what it changes: the base is shared, never mutated
        paths = dict.fromkeys(p for p in _string_paths(PROFILES[target], ()) if p != ("target",))
        found += [(p, json.dumps(_set(base, p, _LONG))) for p in paths]
    return found


def test_a_long_value_in_every_string_field_is_refused_within_a_second() -> None:
    fields = _fields()
    assert len(fields) > 100  # every string field of both targets' models
    slow = []
    for path, template in fields:
        assert template.count(_LONG) == 1, path
        for length, must_refuse in ((1_000_000, True), (MAX_TEXT, False)):
            doc = template.replace(_LONG, "a" * length)
            start = time.monotonic()
            try:
                parse_profile(doc, "p.yaml")
                refused = False
            except ProfileError:
                refused = True
            took = time.monotonic() - start
            if took > 1.0 or (must_refuse and not refused):
                slow.append((".".join(map(str, path)), length, round(took, 2), refused))
    assert not slow, slow


@pytest.mark.parametrize("mode", [[], ["--check"], ["--dry-run"], ["--diff"]])
def test_a_journal_entry_onto_a_folder_is_one_line_naming_what_to_remove(bundle: Path, mode: list[str]) -> None:
    (bundle / "argocd" / "apps" / "zz.yaml").mkdir()
    _plant_journal(bundle, "argocd/apps/zz.yaml")
    (bundle / ".rlobs-staging" / "0").unlink()
    (bundle / ".rlobs-staging" / "0").write_text("kind: x\n", encoding="utf-8")
    args = ("render", str(bundle.parent / "p.yaml"), "-o", str(bundle))
    line = _one_error(_rlobs(*args, *mode))
    assert ".rlobs-journal.json" in line and "remove .rlobs-journal.json and .rlobs-staging/" in line
    (bundle / ".rlobs-journal.json").unlink()
    (bundle / ".rlobs-staging" / "0").unlink()
    (bundle / ".rlobs-staging").rmdir()
    assert _rlobs(*args).returncode == 0
