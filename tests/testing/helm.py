"""`helm template` of the real pinned upstream charts in ../shared/upstream/helm-charts, offline."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from testing.helpers import shared, tool

# Subchart values the parent chart's own templates read; the shared copy of kube-prometheus-stack holds only its
# crds subchart, so the others are dropped from Chart.yaml and these keys stand in for their defaults.
_STAND_INS = {
    "kube-prometheus-stack": {
        "prometheus-node-exporter": {"kubeRBACProxy": {"enabled": False}},
        "kube-state-metrics": {"kubeRBACProxy": {"enabled": False}},
    }
}


def render(chart: str, release: str, values: dict[str, Any], tmp: Path, namespace: str = "monitoring") -> list[Any]:
    """Every document the chart renders with `values` (the parent chart's templates; missing subcharts dropped)."""
    helm = tool("helm", "renders the real pinned charts (tools/install_helm.py installs it)")
    source = shared(f"upstream/helm-charts/{chart}")
    copy = tmp / "chart"
    shutil.copytree(source, copy)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    meta_path = copy / "Chart.yaml"
    meta = yaml.safe_load(meta_path.read_text(encoding="utf-8"))
    present = {p.name for p in (copy / "charts").iterdir()} if (copy / "charts").is_dir() else set()
    meta["dependencies"] = [d for d in meta.get("dependencies", []) if d["name"] in present]
    meta_path.write_text(yaml.safe_dump(meta), encoding="utf-8")
    files = []
    for i, data in enumerate((_STAND_INS.get(chart.rsplit("-", 1)[0], {}), values)):
        path = tmp / f"values-{i}.yaml"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        files += ["-f", str(path)]
    env = {"HELM_CACHE_HOME": str(tmp / "c"), "HELM_CONFIG_HOME": str(tmp / "g"), "HELM_DATA_HOME": str(tmp / "d")}
    cmd = [helm, "template", release, str(copy), "-n", namespace, *files, "--kube-version", "1.34"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]
