"""Build cli/rlobs/data/helm_keys.json: the value keys of each pinned chart the EKS bundle deploys.

The index is what `eks.helmValues.<chart>` is checked against. It comes from the chart itself: its values.yaml (and
its values.schema.json where it ships one, which is then authoritative), plus the values of each subchart whose
values are available (bundled under charts/, or ../shared/upstream/charts/<name>-<version>.values.yaml).

A node is a mapping of child keys (a closed map), "*" (an open map: any keys below, e.g. nodeSelector, annotations,
the collector's `config`, or a subchart whose values are not available) or "" (a value: scalar or list, which an
override replaces as Helm does).
Usage: python tools/helm_keys.py [SHARED]   (SHARED defaults to ../shared; rewrites the packaged index)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "cli/rlobs/data/helm_keys.json"
# The charts of rlobs.targets.eks.versions.CHARTS at their pinned versions (a test checks the two agree).
CHARTS = {
    "kube-prometheus-stack": "76.3.0",
    "opensearch-operator": "2.7.0",
    "fluent-operator": "3.2.0",
    "opentelemetry-collector": "0.170.0",
}
# Maps that charts pass through to Kubernetes or to the program as they are: their keys are the user's own.
OPEN_SUFFIXES = (
    "annotations",
    "labels",
    "selector",
    "securitycontext",
    "resources",
    "affinity",
    "config",
    "env",
    "extraargs",
    "grafana.ini",
)

Node = dict[str, Any] | str


def from_values(data: Any, name: str = "") -> Node:
    """The index node of one values.yaml value."""
    if not isinstance(data, dict):
        # A null default is where a chart expects a mapping or a value the user supplies.
        return "*" if data is None else ""
    if not data or name.lower().endswith(OPEN_SUFFIXES):
        return "*"
    return {str(k): from_values(v, str(k)) for k, v in sorted(data.items(), key=lambda kv: str(kv[0]))}


_KEY = re.compile(r"^( *)([A-Za-z_][\w.-]*|\"[^\"]+\"):(\s|$)")
_COMMENTED = re.compile(r"^( *)#( +)([A-Za-z_][\w-]*):(\s|$)")


def commented_keys(text: str) -> list[tuple[str, ...]]:
    """Keys a values.yaml documents only in a comment (`#  annotations: {}` under serviceAccount): charts read
    them (grafana's serviceAccount.annotations is where IRSA goes) though the default leaves them unset. A block's
    least-indented commented keys count; deeper ones are the example's own content."""
    stack: list[tuple[int, str]] = []
    found: list[tuple[str, ...]] = []
    block: list[tuple[int, int, str]] = []

    def flush() -> None:
        if block:
            least = min(spaces for _, spaces, _ in block)
            for column, spaces, key in block:
                parents = [k for indent, k in stack if indent < column]
                # At column 0 a commented key is almost always an example's content, not a top-level value.
                if spaces == least and parents:
                    found.append((*parents, key))
            block.clear()

    for line in text.splitlines():
        commented = _COMMENTED.match(line)
        if commented:
            block.append((len(commented[1]), len(commented[2]), commented[3]))
            continue
        flush()  # a blank line, a `##` note or a real key ends a commented example
        if line.lstrip().startswith("#") or not line.strip():
            continue
        real = _KEY.match(line)
        if real:
            indent = len(real[1])
            stack = [(i, k) for i, k in stack if i < indent] + [(indent, real[2].strip('"'))]
    flush()
    return found


def add_commented(node: Node, text: str) -> Node:
    for path in commented_keys(text):
        here = node
        for key in path[:-1]:
            here = here.get(key, "*") if isinstance(here, dict) else "*"
        if isinstance(here, dict) and path[-1] not in here:
            here[path[-1]] = "*"
    return node


def from_schema(schema: dict[str, Any]) -> Node:
    """The index node of a JSON Schema: closed only where the schema itself forbids other properties."""
    props = schema.get("properties")
    if props and schema.get("additionalProperties") is False:
        return {k: from_schema(v) for k, v in sorted(props.items())}
    types = schema.get("type")
    is_object = types == "object" or (isinstance(types, list) and "object" in types) or props is not None
    return "*" if is_object else ""


def merge(a: Node, b: Node) -> Node:
    """Union of two nodes: open wins, then maps merge key by key."""
    if a == "*" or b == "*":
        return "*"
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: merge(a[k], b[k]) if k in a and k in b else a.get(k, b.get(k)) for k in sorted({*a, *b})}
    return a if isinstance(a, dict) else b


def chart_node(chart_dir: Path, values_dir: Path) -> Node:
    meta = yaml.safe_load((chart_dir / "Chart.yaml").read_text(encoding="utf-8"))
    schema = chart_dir / "values.schema.json"
    if schema.exists():
        return from_schema(json.loads(schema.read_text(encoding="utf-8")))
    text = (chart_dir / "values.yaml").read_text(encoding="utf-8")
    node = add_commented(from_values(yaml.safe_load(text) or {}), text)
    if not isinstance(node, dict):
        return node
    for dep in meta.get("dependencies", []):
        name, version = dep["name"], str(dep.get("version", ""))
        bundled = chart_dir / "charts" / name
        loose = values_dir / f"{name}-{version}.values.yaml"
        if bundled.is_dir():
            sub = chart_node(bundled, values_dir)
        elif loose.exists():
            text = loose.read_text(encoding="utf-8")
            sub = add_commented(from_values(yaml.safe_load(text) or {}), text)
        else:
            sub = "*"  # the subchart's values are not available: its keys cannot be checked
        if isinstance(sub, dict):
            sub = {**sub, "enabled": "", "global": "*"}
        node[name] = merge(node.get(name, {}), sub) if name in node else sub
    return node


def build(shared: Path) -> dict[str, Any]:
    upstream = shared / "upstream"
    return {
        chart: {
            "version": version,
            "keys": chart_node(upstream / "helm-charts" / f"{chart}-{version}", upstream / "charts"),
        }
        for chart, version in CHARTS.items()
    }


def main() -> int:
    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared"
    OUT.write_text(
        json.dumps(build(shared), indent=None, separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8"
    )
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
