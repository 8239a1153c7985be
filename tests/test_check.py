"""check.py parses each format back and names every file that fails."""

from __future__ import annotations

import json

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
