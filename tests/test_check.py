"""check.py parses each template's output back, names every file that fails, and refuses credential shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlobs.bundle.check import Checker
from rlobs.bundle.spec import Format, Rendered
from rlobs.errors import CheckError, RlobsError


def test_good_files_pass() -> None:
    Checker().check(
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
        Checker().check([Rendered(path, text, fmt)])


def test_one_checker_checks_many_bundles() -> None:
    checker = Checker()
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
    Checker().check([Rendered("t.tfvars", text, "hcl")])
    # python-hcl2 returns the quoted literal; its escapes are JSON's, and Terraform reads `$${` as `${`.
    assert json.loads(hcl2.loads(hcl_for_parser(text))["a"]) == value


_BROKEN = "locals {\n  x = \n}\n"


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def test_known_hcl_text_is_not_parsed_again() -> None:
    """HCL the manifest records at that path passed before; the same text elsewhere, or other text, is parsed."""
    checker = Checker({"c.tf": {_digest(_BROKEN)}})
    checker.check([Rendered("c.tf", _BROKEN, "hcl")])
    with pytest.raises(CheckError, match=r"d\.tf"):
        checker.check([Rendered("d.tf", _BROKEN, "hcl")])
    with pytest.raises(CheckError, match=r"c\.tf"):
        checker.check([Rendered("c.tf", _BROKEN.replace("x", "y"), "hcl")])


def _imports_hcl2(script: str) -> bool:
    """Whether python-hcl2 is loaded after `script` ran in a fresh interpreter."""
    import subprocess
    import sys

    code = f"{script}\nimport sys\nprint('hcl2' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.split()[-1] == "True"


def _render(profile: Path, out: Path) -> str:
    return (
        "from pathlib import Path\nfrom rlobs import commands\nfrom rlobs.bundle.request import RenderRequest\n"
        f"commands.render([Path({str(profile)!r})], RenderRequest(Path({str(out)!r})))"
    )


def test_a_cold_eks_render_does_not_load_python_hcl2(tmp_path: Path) -> None:
    from testing.helpers import REPO

    assert not _imports_hcl2(_render(REPO / "blueprints" / "eks-jark.yaml", tmp_path / "out"))


def test_a_re_render_loads_python_hcl2_only_for_new_hcl_text(tmp_path: Path) -> None:
    import shutil

    from testing.helpers import REPO

    profile = tmp_path / "rlobs.yaml"
    shutil.copy(REPO / "tests" / "profiles" / "gke-autopilot-jobset.yaml", profile)
    out = tmp_path / "out"
    assert _imports_hcl2(_render(profile, out))  # main.tf and variables.tf come from templates
    profile.write_text(profile.read_text() + "# a comment: the same bundle, a new render key\n")
    assert not _imports_hcl2(_render(profile, out))
    profile.write_text(profile.read_text().replace("deletionProtection: true", "deletionProtection: false"))
    assert _imports_hcl2(_render(profile, out))


def test_remembered_text_is_not_checked_until_the_next_check_is_over() -> None:
    """What another checker passed (remember) is not checked again; each check() then forgets what came before
    it, so a checker serving many bundles holds one bundle's worth."""
    broken = Rendered("a.py", "a: [\n", "py")
    checker = Checker()
    checker.remember([broken])
    checker.check([broken, Rendered("b.py", "x = 1\n", "py")])
    checker.check([Rendered("b.py", "x = 1\n", "py")])
    with pytest.raises(CheckError, match=r"a\.py"):
        checker.check([broken])
    checker = Checker()  # the same text in another format is checked in that format
    checker.remember([broken])
    with pytest.raises(CheckError, match=r"a\.yaml"):
        checker.check([Rendered("a.yaml", "a: [\n", "yaml")])


def test_a_failed_check_remembers_nothing() -> None:
    checker = Checker()
    with pytest.raises(CheckError):
        checker.check([Rendered("a.json", "{}\n", "json"), Rendered("b.json", "{\n", "json")])
    with pytest.raises(CheckError, match=r"b\.json"):
        checker.check([Rendered("b.json", "{\n", "json")])


def test_serialised_text_is_scanned_and_template_text_is_parsed_too() -> None:
    """A serialiser's output is proven by the test suite's parsers (test_escaping_fuzz, test_filters), not parsed
    at run time; it is still scanned for credentials and its final newline. A template's YAML is constructed as
    well as parsed: a value such as a date no calendar has fails only there."""
    bad_date = "a: 2024-13-45\n"
    with pytest.raises(CheckError, match=r"t\.yaml: does not parse back: ValueError"):
        Checker().check([Rendered("t.yaml", bad_date, "yaml")])
    Checker().check([Rendered(f"d.{fmt}", "a: [1\n", fmt, serialised=True) for fmt in ("yaml", "json", "hcl")])
    with pytest.raises(CheckError, match=r"n\.yaml: expected exactly one trailing newline"):
        Checker().check([Rendered("n.yaml", "a: 1", "yaml", serialised=True)])
    with pytest.raises(RlobsError, match=r"k\.yaml: a GitHub token"):
        Checker().check([Rendered("k.yaml", f"a: ghp_{'x' * 36}\n", "yaml", serialised=True)])
    checker = Checker()  # text that passed as data is still parsed in full from a template
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
