"""Build cli/rlobs/data/ai_on_eks_variables.json: every variable awslabs/ai-on-eks infra/base/terraform/variables.tf
declares, with its type, sensitivity and default, and the commit it was read at.

The pinned source is ../shared/upstream/ai-on-eks/base-terraform-variables.json, the variables of that file as
data (name, type, default, sensitive, description); descriptions are not kept. To refresh, replace that extract with
one of a newer commit and name the commit here.
Usage: python tools/ai_on_eks_variables.py [SHARED]   (SHARED defaults to ../shared; rewrites the packaged table)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "cli/rlobs/data/ai_on_eks_variables.json"
EXTRACT = "upstream/ai-on-eks/base-terraform-variables.json"
# Where the extract in ../shared was read: a fork of awslabs/ai-on-eks that carried upstream main at that commit.
SOURCE = {
    "repository": "awslabs/ai-on-eks",
    "path": "infra/base/terraform/variables.tf",
    "commit": "c835f47a",
    "date": "2026-04-15",
    "readVia": "erezzarum/ai-on-eks, as ../shared/" + EXTRACT,
}


def build(shared: Path) -> dict[str, Any]:
    upstream = json.loads((shared / EXTRACT).read_text(encoding="utf-8"))["variables"]
    return {
        "source": SOURCE,
        "variables": {
            name: {"type": var["type"], "sensitive": bool(var["sensitive"]), "default": var["default"]}
            for name, var in sorted(upstream.items())
        },
    }


def main() -> int:
    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared"
    OUT.write_text(json.dumps(build(shared), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
