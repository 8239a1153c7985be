"""Build cli/rlobs/data/kubernetes_versions.json: when each Kubernetes minor version is released on EKS and GKE, and
when its standard and extended support end, from the providers' published calendars as endoflife.date records them.

The pinned source is endoflife-date/endoflife.date at COMMIT: products/amazon-eks.md (the Amazon EKS Kubernetes
release calendar: releaseDate, eol = end of standard support, eoes = end of extended support) and
products/google-kubernetes-engine.md (the GKE release schedule: releaseDate = available in the Regular channel, eol
= end of standard support; it records no end of extended support). SOURCE is a directory holding that products/
folder (a checkout at COMMIT; by default tests/upstream/endoflife.date, those two pages at COMMIT).
Usage: python tools/kube_versions.py [SOURCE]   (rewrites the packaged table)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "cli/rlobs/data/kubernetes_versions.json"
COMMIT = "a70eca337600e7d721dc48112c271f98661d208b"
DATE = "2026-08-22"
# provider -> (products file, the calendar it copies)
PRODUCTS = {
    "eks": ("amazon-eks.md", "https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html"),
    "gke": ("google-kubernetes-engine.md", "https://cloud.google.com/kubernetes-engine/docs/release-schedule"),
}
# What a missing end of extended support means, per provider.
NO_EXTENDED = {
    "eks": "the version had no extended support: support ended with standard support",
    "gke": "not published in the source: the Extended channel keeps a minor version up to 24 months after its "
    "Regular release (https://cloud.google.com/kubernetes-engine/versioning)",
}


def windows(text: str) -> dict[str, dict[str, str | None]]:
    """minor version -> its dates (ISO), from one products file's YAML front matter."""
    front = yaml.safe_load(text.split("\n---", 1)[0].removeprefix("---\n"))
    return {
        str(r["releaseCycle"]): {
            "released": str(r["releaseDate"]),
            "endOfStandardSupport": str(r["eol"]),
            "endOfExtendedSupport": str(r["eoes"]) if r.get("eoes") not in (None, False) else None,
        }
        for r in front["releases"]
    }


def build(source: Path) -> dict[str, Any]:
    table: dict[str, Any] = {
        "source": {"repository": "endoflife-date/endoflife.date", "commit": COMMIT, "date": DATE},
    }
    for provider, (name, calendar) in PRODUCTS.items():
        text = (source / "products" / name).read_text(encoding="utf-8")
        table[provider] = {
            "calendar": calendar,
            "path": f"products/{name}",
            "noEndOfExtendedSupport": NO_EXTENDED[provider],
            "versions": windows(text),
        }
    return table


def main() -> int:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "tests/upstream/endoflife.date"
    OUT.write_text(json.dumps(build(source), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
