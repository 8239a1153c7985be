"""A real Prometheus server for end-to-end tests: free ports, its HTTP API, polling with a deadline."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def query(base: str, expr: str) -> list[Any]:
    data = get(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    assert data["status"] == "success", (expr, data)
    return list(data["data"]["result"])


def wait(what: str, check: Any, deadline: float) -> None:
    """Poll `check` until it returns True (OSError counts as not yet), or fail with its last answer."""
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last is True:
                return
        except OSError as exc:
            last = exc
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}: {last}")


def start(prometheus: str, root: Path, config: dict[str, Any], port: int) -> subprocess.Popen[str]:
    """A Prometheus server on 127.0.0.1:`port` with `config`, its data under `root`; the caller stops it."""
    (root / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return subprocess.Popen(
        [
            prometheus,
            f"--config.file={root / 'prometheus.yml'}",
            f"--storage.tsdb.path={root / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
