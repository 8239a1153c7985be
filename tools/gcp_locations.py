"""Build cli/rlobs/data/gcp_locations.json: every GCP region and its zones, from two lists kept in tests/upstream/gcp.

Google publishes no machine-readable list of regions with their zones, so this is the union of what two pinned files
really list (a zone only where a file names it):
- GoogleCloudPlatform/gcping tools/terraform/regions.json at GCPING (the regions Google's latency probe runs in):
  regions only;
- skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv at SKYPILOT (built from the Compute Engine API), its
  e2-standard-8 rows (the whole file is 2.2 MB; E2 is offered in every zone): regions and zones.
Zones that are no region plus one letter (AI zones such as us-south1-ai1b) are left out: gke.location takes a region
or a region plus one letter.
Usage: python tools/gcp_locations.py   (rewrites the packaged list from tests/upstream/gcp)
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
UPSTREAM = REPO / "tests/upstream/gcp"
OUT = REPO / "cli/rlobs/data/gcp_locations.json"
GCPING = "85ed7a90af8a8f6fce96eccdfb497f529b7841c7"
SKYPILOT = "006059e0f18acb1341e22a27751e9f80df6ba92f"
DATE = "2026-12-03"


def build(gcping: dict[str, str], vms_csv: str) -> dict[str, object]:
    regions: dict[str, set[str]] = {name: set() for name in gcping}
    for row in csv.DictReader(vms_csv.splitlines()):
        zone, region = row["AvailabilityZone"], row["Region"]
        zones = regions.setdefault(region, set())
        if re.fullmatch(re.escape(region) + "-[a-z]", zone):
            zones.add(zone)
    source = {
        "distribution": f"gcping {GCPING[:7]} + skypilot-catalog {SKYPILOT[:7]}",
        "files": [
            f"GoogleCloudPlatform/gcping@{GCPING}:tools/terraform/regions.json",
            f"skypilot-org/skypilot-catalog@{SKYPILOT}:catalogs/v8/gcp/vms.csv (e2-standard-8 rows)",
        ],
        "date": DATE,
    }
    return {"source": source, "regions": {name: sorted(regions[name]) for name in sorted(regions)}}


def main() -> None:
    gcping = json.loads((UPSTREAM / "gcping-regions.json").read_text(encoding="utf-8"))
    table = build(gcping, (UPSTREAM / "skypilot-vms-e2-standard-8.csv").read_text(encoding="utf-8"))
    OUT.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}: {len(table['regions'])} regions")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
