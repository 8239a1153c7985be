"""check.py parses each format back and names every file that fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from rlobs.bundle.check import Checker, check
from rlobs.bundle.spec import Format, Rendered
from rlobs.errors import CheckError


def test_good_files_pass() -> None:
    check(
        [
            Rendered("a.yaml", "a: 1\n---\nb: 2\n", "yaml"),
            Rendered("b.json", "{}\n", "json"),
            Rendered("c.tfvars", 'x = "y"\n', "hcl"),
            Rendered("d.py", "x = 1\n", "py"),
            Rendered("e.sh", "#!/usr/bin/env bash\necho hi\n", "sh"),
            Rendered("f.md", "# hi\n", "md"),
        ]
    )


@pytest.mark.parametrize(
    ("path", "fmt", "text"),
    [
        ("a.yaml", "yaml", "a: [1\n"),
        ("b.json", "json", "{,}\n"),
        ("c.tfvars", "hcl", "x = \n"),
        ("d.py", "py", "def (:\n"),
        ("e.sh", "sh", "if then fi\n"),
        ("f.md", "md", "no newline"),
        ("g.md", "md", "two newlines\n\n"),
        # The format decides the parser, not the file name.
        ("h.txt", "yaml", "a: [1\n"),
    ],
)
def test_each_broken_format_is_named(path: str, fmt: Format, text: str) -> None:
    with pytest.raises(CheckError, match=path.replace(".", r"\.")):
        check([Rendered(path, text, fmt)])


def test_hcl_worker_is_reusable_and_reports_each_file() -> None:
    from rlobs.bundle.hclworker import HclWorker

    with HclWorker() as hcl:
        assert hcl.parse({"a.tfvars": 'x = "y"\n'}) == []
        (failure,) = hcl.parse({"b.tf": "x = \n", "c.tfvars": "y = 1\n"})
        assert failure.startswith("b.tf: does not parse back")


def test_one_checker_checks_many_bundles() -> None:
    with Checker() as checker:
        checker.check([Rendered("d.tfvars", "z = true\n", "hcl")])
        with pytest.raises(CheckError, match=r"e\.tf"):
            checker.check([Rendered("e.tf", "z = \n", "hcl")])
        checker.check([Rendered("f.tf", "z = 1\n", "hcl")])


@pytest.mark.parametrize("value", ["${x", "%{x", "a${b}c", "$${", "%{ if }", "$$${{", "}${", "%%{"])
def test_tfvars_escapes_pass_the_check_and_read_back_as_the_value(value: str) -> None:
    """No false "bug in rlobs" for an unclosed `${` or `%{`, and the parser sees exactly the value written."""
    import hcl2

    from rlobs.bundle.check import hcl_for_parser
    from rlobs.bundle.filters import hcl_attributes

    text = hcl_attributes({"a": value})
    check([Rendered("t.tfvars", text, "hcl")])
    # python-hcl2 returns the quoted literal; its escapes are JSON's, and Terraform reads `$${` as `${`.
    assert json.loads(hcl2.loads(hcl_for_parser(text))["a"]) == value


class _CountingWorker:
    made: ClassVar[int] = 0
    parsed: ClassVar[list[str]] = []

    def __init__(self) -> None:
        _CountingWorker.made += 1

    def parse(self, files: dict[str, str]) -> list[str]:
        _CountingWorker.parsed += list(files)
        return []

    def close(self) -> None:
        pass


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> type[_CountingWorker]:
    monkeypatch.setattr("rlobs.bundle.check.HclWorker", _CountingWorker)
    _CountingWorker.made, _CountingWorker.parsed = 0, []
    return _CountingWorker


_BLOCK = 'locals {\n  x = "y"\n}\n'  # HCL the attribute-file reader leaves to python-hcl2


def test_known_hcl_text_is_not_parsed_again_and_starts_no_worker(counting: type[_CountingWorker]) -> None:
    import hashlib

    known = {"c.tf": {hashlib.sha256(_BLOCK.encode()).hexdigest()}}
    with Checker(known) as checker:
        checker.check([Rendered("c.tf", _BLOCK, "hcl")])
        assert counting.made == 0
        checker.check([Rendered("c.tf", _BLOCK.replace("y", "z"), "hcl"), Rendered("d.tf", _BLOCK, "hcl")])
    assert counting.made == 1 and counting.parsed == ["c.tf", "d.tf"]  # new text, or known text elsewhere


def test_the_worker_starts_only_for_hcl_the_reader_leaves_to_it(counting: type[_CountingWorker]) -> None:
    with Checker() as checker:
        checker.check([Rendered("a.tfvars", 'x = "y"\nz = {\n  "k" = [1, true]\n}\n', "hcl")])
        assert counting.made == 0
        checker.check([Rendered("b.tf", _BLOCK, "hcl"), Rendered("c.tf", _BLOCK.replace("y", "z"), "hcl")])
        checker.check([Rendered("d.tfvars", 'x = "${y}"\n', "hcl")])  # an interpolation: not rlobs's shape
    assert counting.made == 1 and counting.parsed == ["b.tf", "c.tf", "d.tfvars"]


def test_a_cold_eks_render_starts_no_worker(tmp_path: Path, counting: type[_CountingWorker]) -> None:
    from rlobs import commands
    from testing.helpers import REPO

    commands.render([REPO / "blueprints" / "eks-jark.yaml"], tmp_path, write=True, force=False, with_diff=False)
    assert counting.made == 0


def test_a_re_render_parses_only_new_hcl_text(tmp_path: Path, counting: type[_CountingWorker]) -> None:
    import shutil

    from rlobs import commands
    from testing.helpers import REPO

    profile = tmp_path / "rlobs.yaml"
    shutil.copy(REPO / "tests" / "profiles" / "gke-autopilot-jobset.yaml", profile)
    out = tmp_path / "out"
    commands.render([profile], out, write=True, force=False, with_diff=False)
    templates = ["terraform/main.tf", "terraform/variables.tf"]
    assert sorted(counting.parsed) == templates  # terraform.tfvars is read without the worker
    profile.write_text(profile.read_text() + "# a comment: the same bundle, a new render key\n")
    commands.render([profile], out, write=True, force=False, with_diff=False)
    assert sorted(counting.parsed) == templates


def test_text_that_passed_is_not_checked_again_by_the_same_checker(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlobs.bundle import check as module

    seen: list[str] = []
    monkeypatch.setitem(module._PARSERS, "json", lambda r: seen.append(r.path))
    with Checker() as checker:
        checker.check([Rendered("a.json", "{}\n", "json"), Rendered("b.json", "[]\n", "json")])
        checker.check([Rendered("x.json", "[2]\n", "json"), Rendered("y.json", "[2]\n", "json")])  # once
        checker.check([Rendered("c.json", "{}\n", "json"), Rendered("d.json", "[1]\n", "json")])
        # The same text in another format is checked in that format.
        with pytest.raises(CheckError, match=r"e\.yaml"):
            checker.check([Rendered("e.yaml", "{}\n", "json"), Rendered("e.yaml", "a: [\n", "yaml")])
    assert seen == ["a.json", "b.json", "x.json", "d.json"]


def test_a_failed_check_remembers_nothing() -> None:
    with Checker() as checker:
        with pytest.raises(CheckError):
            checker.check([Rendered("a.json", "{}\n", "json"), Rendered("b.json", "{\n", "json")])
        with pytest.raises(CheckError, match=r"b\.json"):
            checker.check([Rendered("b.json", "{\n", "json")])


def test_serialised_yaml_is_parsed_and_template_yaml_is_also_constructed() -> None:
    # A date the resolver reads as a timestamp but no calendar has: only constructing it fails. A template could
    # write it plain; the serialiser quotes any string the resolver would not read back as a string.
    bad_date = "a: 2024-13-45\n"
    with pytest.raises(CheckError, match=r"t\.yaml: does not parse back: ValueError"):
        check([Rendered("t.yaml", bad_date, "yaml")])
    check([Rendered("d.yaml", bad_date, "yaml", serialised=True)])
    with pytest.raises(CheckError, match=r"s\.yaml: does not parse back"):
        check([Rendered("s.yaml", "a: [1\n", "yaml", serialised=True)])  # the syntax is still checked
    with Checker() as checker:  # text that passed as data is still checked in full from a template
        checker.check([Rendered("d.yaml", bad_date, "yaml", serialised=True)])
        with pytest.raises(CheckError, match=r"t\.yaml"):
            checker.check([Rendered("t.yaml", bad_date, "yaml")])


def test_the_renderer_marks_what_the_serialiser_wrote() -> None:
    import jinja2

    from rlobs.bundle.render import render
    from rlobs.bundle.spec import DataFile, Plan, TemplateFile

    plan = Plan("x", (DataFile("a.yaml", "yaml", {"a": 1}, "data"), TemplateFile("b.yaml", "yaml", "t.j2", "text")))
    env = jinja2.Environment(loader=jinja2.DictLoader({"t.j2": "b: 1\n"}))
    assert {r.path: r.serialised for r in render(plan, env)} == {"a.yaml": True, "b.yaml": False}
