"""The render key: an up-to-date bundle is answered from this machine's record of it (the user cache, never the
bundle's own manifest) without the rendering stack, and every input that can change the output, and every change to
the bundle, sends the render down the full path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import rlobs
from rlobs import commands, renderkey
from rlobs.bundle import cache
from rlobs.bundle.manifest import JOURNAL, MANIFEST, STAGING
from rlobs.bundle.request import Mode, RenderRequest
from testing.helpers import REPO

# Runs the installed rlobs in subprocesses; still run by make test and CI.
pytestmark = pytest.mark.slow

BLUEPRINT = REPO / "blueprints" / "eks-jark.yaml"
EXECUTABLE = "workload/kustomization.yaml"  # any generated file: only its mode matters in that test


def _render(profiles: list[Path], out: Path, *, write: bool = True) -> list[commands.RenderResult]:
    return commands.render(profiles, RenderRequest(out, Mode.WRITE if write else Mode.DRY_RUN))


@pytest.fixture
def bundle(tmp_path: Path) -> tuple[Path, Path]:
    profile = tmp_path / "rlobs.yaml"
    shutil.copy(BLUEPRINT, profile)
    out = tmp_path / "out"
    _render([profile], out)
    assert commands.up_to_date([profile], out) is not None
    return profile, out


def test_the_user_cache_records_the_key_of_the_render(bundle: tuple[Path, Path]) -> None:
    profile, out = bundle
    found = cache.recalled(out)
    assert found is not None and found["key"] == renderkey.render_keys([profile.read_bytes()])[0]
    assert found["name"] == "rl-eks"
    assert "render" not in json.loads((out / MANIFEST).read_text())  # nothing in the bundle vouches for itself


def test_an_up_to_date_bundle_is_answered_without_the_rendering_stack(bundle: tuple[Path, Path]) -> None:
    profile, out = bundle
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from rlobs import commands\n"
        "from rlobs.bundle.request import Mode, RenderRequest\n"
        "for mode in (Mode.WRITE, Mode.DRY_RUN):\n"
        f"    [r] = commands.render([Path({str(profile)!r})], RenderRequest(Path({str(out)!r}), mode))\n"
        "    assert not r.changes.changed and len(r.changes.unchanged) > 30, r.changes\n"
        "heavy = ('jinja2', 'hcl2', 'lark', 'pydantic', 'rlobs.profile.model', 'rlobs.bundle.check',"
        " 'rlobs.bundle.render', 'rlobs.pipeline', 'rlobs.targets')\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy)\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_a_no_op_leaves_every_file_and_mtime_alone(bundle: tuple[Path, Path]) -> None:
    profile, out = bundle
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    [r] = _render([profile], out)
    assert not r.changes.changed
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def _edit_profile(profile: Path, out: Path) -> None:
    profile.write_bytes(profile.read_bytes() + b"# one more byte\n")


def _edit_file(profile: Path, out: Path) -> None:
    path = out / "docs/runbook.md"
    path.write_bytes(path.read_bytes() + b"x")


def _delete_file(profile: Path, out: Path) -> None:
    (out / "docs/runbook.md").unlink()


def _chmod_file(profile: Path, out: Path) -> None:
    (out / EXECUTABLE).chmod(0o755)


def _link_file(profile: Path, out: Path) -> None:
    path = out / "docs/runbook.md"
    (out / "elsewhere.md").write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(out / "elsewhere.md")


def _list_added_file_in_manifest(profile: Path, out: Path) -> None:
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"]["docs/extra.md"] = manifest["files"]["docs/runbook.md"]
    shutil.copy(out / "docs/runbook.md", out / "docs/extra.md")
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def _forge_manifest(profile: Path, out: Path) -> None:  # a hand edit, and its digest put in the manifest
    import hashlib

    _edit_file(profile, out)
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"]["docs/runbook.md"] = hashlib.sha256((out / "docs/runbook.md").read_bytes()).hexdigest()
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def _leave_staging(profile: Path, out: Path) -> None:
    (out / STAGING).mkdir()


def _leave_journal(profile: Path, out: Path) -> None:
    (out / JOURNAL).write_text('{"replace": [], "delete": []}\n')


def _fresh_checkout(profile: Path, out: Path) -> None:  # the same bundle, on a machine that did not write it
    shutil.rmtree(cache.root() / "bundles")


CHANGES: dict[str, Callable[[Path, Path], None]] = {
    "a profile byte": _edit_profile,
    "an edited generated file": _edit_file,
    "a deleted generated file": _delete_file,
    "a changed executable bit": _chmod_file,
    "a generated file replaced by a link": _link_file,
    "an added file listed in the manifest": _list_added_file_in_manifest,
    "a hand edit with its digest forged in the manifest": _forge_manifest,
    "a staging folder left over": _leave_staging,
    "a journal left over": _leave_journal,
    "a fresh checkout": _fresh_checkout,
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_every_change_to_the_inputs_or_the_bundle_runs_the_full_render(
    bundle: tuple[Path, Path], change: Callable[[Path, Path], None]
) -> None:
    profile, out = bundle
    change(profile, out)
    assert commands.up_to_date([profile], out) is None


@pytest.mark.parametrize("change", [_edit_file, _delete_file, _chmod_file, _leave_staging, _forge_manifest])
def test_check_still_reports_what_differs(bundle: tuple[Path, Path], change: Callable[[Path, Path], None]) -> None:
    profile, out = bundle
    change(profile, out)
    [r] = _render([profile], out, write=False)
    assert r.changes.changed


def test_a_changed_profile_byte_rewrites_the_key(bundle: tuple[Path, Path]) -> None:
    profile, out = bundle
    _edit_profile(profile, out)
    [r] = _render([profile], out)
    assert not r.changes.changed  # a comment: the same files, but the user cache now records the new key
    assert commands.up_to_date([profile], out) is not None


def test_a_file_added_beside_the_bundle_is_left_alone_as_before(bundle: tuple[Path, Path]) -> None:
    profile, out = bundle
    (out / "docs/mine.md").write_text("mine\n")
    fast = commands.up_to_date([profile], out)
    assert fast is not None and "docs/mine.md" not in fast[0].changes.unchanged
    assert (out / "docs/mine.md").read_text() == "mine\n"


@pytest.mark.parametrize("part", ["version", "libraries", "python"])
def test_the_key_changes_with_rlobs_version_libraries_and_python(
    bundle: tuple[Path, Path], part: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile, out = bundle
    if part == "version":
        monkeypatch.setattr(renderkey, "__version__", rlobs.__version__ + ".post1")
    elif part == "libraries":
        monkeypatch.setattr(renderkey, "_libraries", lambda: ["jinja2: jinja2-9.9.9.dist-info"])
    else:
        monkeypatch.setattr(renderkey.sys, "version", sys.version + " (another build)")
    assert commands.up_to_date([profile], out) is None


def test_the_key_changes_with_every_packaged_file(tmp_path: Path) -> None:
    package = tmp_path / "rlobs"
    shutil.copytree(Path(rlobs.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    template = next(package.joinpath("templates").rglob("*.j2"))
    data = sorted(package.joinpath("data").iterdir())[0]
    edits: list[Callable[[], object]] = [
        lambda: template.write_bytes(template.read_bytes() + b" "),
        lambda: data.write_bytes(data.read_bytes() + b"\n"),
        lambda: (package / "targets" / "eks" / "new.py").write_text("X = 1\n"),
        lambda: (package / "blueprints" / "eks-jark.yaml").unlink(),
    ]
    keys = [renderkey.render_keys([b"p"], package)[0]]
    for edit in edits:
        edit()
        keys.append(renderkey.render_keys([b"p"], package)[0])
    assert len(set(keys)) == len(keys)
    (package / "targets" / "__pycache__").mkdir()  # bytecode is derived from the code: not an input
    (package / "targets" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert renderkey.render_keys([b"p"], package)[0] == keys[-1]


def test_the_installed_package_is_what_the_key_hashes(
    bundle: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    profile, out = bundle
    real = renderkey.package_digest
    monkeypatch.setattr(renderkey, "package_digest", lambda root: real(root) + "changed")
    assert commands.up_to_date([profile], out) is None


def test_several_profiles_are_found_by_their_keys(tmp_path: Path) -> None:
    text = BLUEPRINT.read_text()
    profiles = []
    for name in ("a", "b"):
        profiles.append(tmp_path / f"{name}.yaml")
        profiles[-1].write_text(text.replace("  name: rl-eks\n", f"  name: rl-{name}\n", 1))
    out = tmp_path / "out"
    _render(profiles, out)
    fast = commands.up_to_date(profiles, out)
    assert fast is not None and [r.out_dir for r in fast] == [out / "rl-a", out / "rl-b"]
    assert commands.up_to_date([profiles[0], profiles[0]], out) is None  # the full load reports the shared name
    os.rename(out / "rl-b", out / "moved")
    assert commands.up_to_date(profiles, out) is None


def test_the_keys_of_many_profiles_are_each_ones_key() -> None:
    profiles = [b"a", b"b", BLUEPRINT.read_bytes()]
    assert renderkey.render_keys(profiles) == [renderkey.render_keys([p])[0] for p in profiles]
    assert len(set(renderkey.render_keys(profiles))) == 3
