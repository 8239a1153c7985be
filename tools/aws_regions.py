"""Build cli/rlobs/data/aws_regions.json: every AWS region code, from the region list the AWS SDKs ship.

The pinned source is botocore's botocore/data/partitions.json (AWS's SDK for Python, the same list the AWS CLI uses) at
VERSION: each partition's `regions`, without the `*-global` endpoint names, which are no regions.
Usage: python tools/aws_regions.py [PARTITIONS_JSON]   (default: the installed botocore's; rewrites the packaged list)
"""

from __future__ import annotations

import json
import sys
from importlib.util import find_spec
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "cli/rlobs/data/aws_regions.json"
VERSION = "1.43.11"
DATE = "2026-12-03"


def build(partitions: dict[str, object]) -> dict[str, object]:
    regions = sorted(
        name
        for p in partitions["partitions"]  # type: ignore[attr-defined]
        for name in p["regions"]
        if not name.endswith("-global")
    )
    source = {"distribution": f"botocore {VERSION}", "file": "botocore/data/partitions.json", "date": DATE}
    return {"source": source, "regions": regions}


def main() -> None:
    if len(sys.argv) > 1:
        path = Path(sys.argv[1])
    else:
        spec = find_spec("botocore")
        if spec is None or spec.origin is None:
            sys.exit(f"botocore is not installed: pip install botocore=={VERSION}, or pass its partitions.json")
        path = Path(spec.origin).parent / "data" / "partitions.json"
    table = build(json.loads(path.read_text(encoding="utf-8")))
    OUT.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}: {len(table['regions'])} regions")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
