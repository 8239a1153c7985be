"""check.py parses each format back and names every file that fails."""

from __future__ import annotations

import pytest

from rlobs.bundle.check import check
from rlobs.bundle.render import Rendered
from rlobs.errors import CheckError


def test_good_files_pass() -> None:
    check(
        [
            Rendered("a.yaml", "a: 1\n---\nb: 2\n"),
            Rendered("b.json", "{}\n"),
            Rendered("c.tfvars", 'x = "y"\n'),
            Rendered("d.py", "x = 1\n"),
            Rendered("e.sh", "#!/usr/bin/env bash\necho hi\n"),
            Rendered("f.md", "# hi\n"),
        ]
    )


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("a.yaml", "a: [1\n"),
        ("b.json", "{,}\n"),
        ("c.tfvars", "x = \n"),
        ("d.py", "def (:\n"),
        ("e.sh", "if then fi\n"),
        ("f.md", "no newline"),
        ("g.md", "two newlines\n\n"),
    ],
)
def test_each_broken_format_is_named(path: str, text: str) -> None:
    with pytest.raises(CheckError, match=path.replace(".", r"\.")):
        check([Rendered(path, text)])


def test_hcl_worker_is_reusable_and_reports_each_file() -> None:
    from rlobs.bundle.hclworker import HclWorker

    with HclWorker() as hcl:
        assert hcl.parse({"a.tfvars": 'x = "y"\n'}) == []
        (failure,) = hcl.parse({"b.tf": "x = \n", "c.tfvars": "y = 1\n"})
        assert failure.startswith("b.tf: does not parse back")
        check([Rendered("d.tfvars", "z = true\n")], hcl)
