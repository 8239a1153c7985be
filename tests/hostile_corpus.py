"""The hostile-profile corpus: every string value of every shipped profile replaced, one at a time, by each hostile
value below, plus whole-file attacks. `python tests/hostile_corpus.py DIR` writes it out; the tests use `corpus()`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

HOSTILE = (
    "x{{ .ExternalURL }}",
    "#rl-alerts{{",
    "a``b``c",
    "line\nbreak",
    "esc\x1b[31mred",
    "nul\x00byte",
    "\u202eevil",
    "A" * 5000,
    "AKIA" + "ABCDEFGHIJKLMNOP",
    "https://hooks.slack.com/services/" + "T000/B000/XXXX",
    "https://user:pass@github.com/acme/gitops.git",
    "../../etc",
    "${var.x}%{ if true }",
    "null",
)
WHOLE_FILES = {
    "aliases": "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
    "deep": "a: " + "[" * 2000 + "]" * 2000 + "\n",
    "bigint": "apiVersion: rlobs/v1alpha1\nx: " + "9" * 5000 + "\n",
    "many-keys": "".join(f"k{i}: {i}\n" for i in range(30_000)),
    "two-documents": "a: 1\n---\nb: 2\n",
    "not-a-mapping": "- 1\n- 2\n",
    "binary": "\x00\x01\x02",
}
_SCALAR = re.compile(r"^(\s*(?:- )?[A-Za-z][A-Za-z0-9]*: )(\"[^\"\n]*\"|[^\s#{\[\"'][^#\n]*?)(\s*(?:#.*)?)$", re.M)


def corpus(profiles: dict[str, str]) -> Iterator[tuple[str, str]]:
    """(name, text) of every hostile profile made from `profiles` (name -> profile text)."""
    yield from WHOLE_FILES.items()
    for name, text in profiles.items():
        for index, match in enumerate(_SCALAR.finditer(text)):
            for h, value in enumerate(HOSTILE):
                quoted = '"' + value.encode("unicode_escape").decode().replace('"', '\\"') + '"'
                yield f"{name}-{index}-{h}", text[: match.start(2)] + quoted + text[match.end(2) :]


def main() -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from testing.helpers import all_profiles

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for name, text in corpus(all_profiles()):
        (out / f"{name}.yaml").write_bytes(text.encode("utf-8", "surrogateescape"))
        count += 1
    print(f"{count} hostile profiles in {out}")


if __name__ == "__main__":
    main()
