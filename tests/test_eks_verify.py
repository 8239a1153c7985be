"""The EKS bundle's scripts/verify.sh: shellcheck-clean, --dry-run prints its commands, and against a real Prometheus
holding the bundle's rules and a run's series (a fake kubectl answers Argo CD and makes the port-forward a no-op) it
passes, and fails with one line per missing piece."""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.rl import naming
from rlobs.rl.catalog import load_catalog
from rlobs.rl.facts import workload_job
from testing.eks import EKS_PROFILES, bundle, objects
from testing.gke import bare_path, commands, run_script, write_bundle
from testing.helpers import profile, tool
from testing.prom import free_port, get, query, start, wait

SCRIPT = "scripts/verify.sh"
PROFILE = "eks-prometheus-exporter"  # the app serves /metrics, so a static page stands in for the run
CATALOG = load_catalog()


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bundles")
    return {name: write_bundle(name, root) for name in EKS_PROFILES}


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_dry_run_prints_the_read_only_commands(bundles: dict[str, Path], name: str) -> None:
    proc = run_script(bundles[name] / SCRIPT, "--dry-run", env={"PATH": bare_path(bundles[name].parent)})
    assert proc.returncode == 0, proc.stderr
    assert "kubectl is not installed; a real run needs it" in proc.stdout
    cmds = commands(proc.stdout)
    bundle = profile(name).metadata.name
    assert cmds[0] == [
        *("kubectl", "get", "applications.argoproj.io", "--namespace=argocd"),
        *(f"--selector=rlobs.io/bundle={bundle}", "--output=json"),
    ]
    assert cmds[1][:4] == [
        "kubectl",
        "port-forward",
        "--namespace=monitoring",
        "service/kube-prometheus-stack-prometheus",
    ]
    assert [c[5].rsplit("/", 1)[-1] for c in cmds[2:]] == ["targets", "rules", "query"]
    # The series query is the runs' run-state gauge, selected by the workload's job label.
    assert f'job="{workload_job(profile(name))}"' in cmds[-1][-1]


def test_help_and_unknown_arguments(bundles: dict[str, Path]) -> None:
    path = bundles[PROFILE] / SCRIPT
    proc = run_script(path, "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("Usage: verify.sh [--dry-run]\n"), proc.stderr
    assert not commands(proc.stdout)
    bad = run_script(path, "--bogus")
    assert bad.returncode == 2 and "unknown argument --bogus" in bad.stderr


@pytest.mark.slow
def test_verify_is_shellcheck_clean(bundles: dict[str, Path]) -> None:
    shellcheck = tool("shellcheck", "lints the rendered verify script")
    paths = [str(bundles[name] / SCRIPT) for name in EKS_PROFILES]
    proc = subprocess.run([shellcheck, "--format=gcc", *paths], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --- against a real Prometheus ---------------------------------------------------------------------------------

_FAKE_KUBECTL = """#!/usr/bin/env bash
# Argo CD's answer from a file; port-forward stays up like the real one, the test's Prometheus being on the port.
case "$1" in
  get) cat "$FAKE_APPLICATIONS" ;;
  port-forward) exec sleep 120 ;;
  *) echo "fake kubectl: unexpected $*" >&2; exit 1 ;;
esac
"""


def _series(run_id: str) -> str:
    """One run's state gauge, as the app's exporter serves it for every framework (TRL sends no loop durations)."""
    state = naming.series(CATALOG.metric("run_state"), "python-prometheus")
    run = naming.label(CATALOG.attribute("run_id").name, "python-prometheus")
    return f'{state}{{{run}="{run_id}"}} 1\n'


class _Page(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


def _app_pool(bundle: Path) -> str:
    monitor = yaml.safe_load((bundle / "rl-layer/rl-app-podmonitor.yaml").read_text())
    return f"podMonitor/{monitor['metadata']['namespace']}/{monitor['metadata']['name']}/0"


def _applications(bundle: Path, state: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """The bundle's Applications as `kubectl get -o json` lists them, Synced and Healthy unless `state` says not."""
    items = []
    for path in [bundle / "argocd/root-app.yaml", *sorted((bundle / "argocd/apps").glob("*.yaml"))]:
        app = yaml.safe_load(path.read_text())
        sync, health = state.get(app["metadata"]["name"], ("Synced", "Healthy"))
        if sync:
            items.append({**app, "status": {"sync": {"status": sync}, "health": {"status": health}}})
    return {"apiVersion": "v1", "kind": "List", "items": items}


@pytest.fixture(scope="module")
def setups(tmp_path_factory: pytest.TempPathFactory, bundles: dict[str, Path]) -> Iterator[dict[str, int]]:
    """A real Prometheus per set-up, each on its own port: everything, no rules, the app down, no series."""
    prometheus = tool("prometheus", "answers the verify script's queries")
    bundle = bundles[PROFILE]
    rule = yaml.safe_load((bundle / "rl-layer/rl-prometheusrule.yaml").read_text())
    job = workload_job(profile(PROFILE))
    pages = {}
    for name, body in {"run": _series("run-1"), "other": "process_start_time_seconds 1\n"}.items():
        handler = type(f"Page_{name}", (_Page,), {"body": body.encode()})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        pages[name] = server
    closed = free_port()
    variants = {
        "full": (True, pages["run"].server_address[1]),
        "no-rules": (False, pages["run"].server_address[1]),
        "app-down": (True, closed),
        "no-series": (True, pages["other"].server_address[1]),
    }
    ports, servers = {}, []
    try:
        for variant, (rules, target) in variants.items():
            root = tmp_path_factory.mktemp(variant)
            (root / "rules.yaml").write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
            config = {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [str(root / "rules.yaml")] if rules else [],
                # The scrape pool the Prometheus Operator makes of the bundle's PodMonitor, with its job relabeling.
                "scrape_configs": [
                    {
                        "job_name": _app_pool(bundle),
                        "static_configs": [{"targets": [f"127.0.0.1:{target}"]}],
                        "relabel_configs": [{"target_label": "job", "replacement": job}],
                    }
                ],
            }
            ports[variant] = free_port()
            servers.append(start(prometheus, root, config, ports[variant]))
        deadline = time.monotonic() + 30
        for variant, port in ports.items():
            base = f"http://127.0.0.1:{port}"
            wait(f"{variant}: a scrape", lambda base=base: bool(query(base, f'up{{job="{job}"}}')), deadline)
            if variants[variant][0]:
                wait(f"{variant}: the rules", lambda base=base: _evaluated(base), deadline)
        yield ports
    finally:
        for proc in servers:
            proc.terminate()
            proc.wait(timeout=10)
        for server in pages.values():
            server.shutdown()


def _evaluated(base: str) -> bool:
    rules = [r for g in get(f"{base}/api/v1/rules")["data"]["groups"] for r in g["rules"]]
    return bool(rules) and all(r.get("lastEvaluation", "").startswith("20") for r in rules)


def _verify(
    tmp_path: Path, bundle: Path, port: int, state: dict[str, tuple[str, str]] | None = None
) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "kubectl").write_text(_FAKE_KUBECTL)
    (bin_dir / "kubectl").chmod(0o755)
    apps = tmp_path / "applications.json"
    apps.write_text(json.dumps(_applications(bundle, state or {})))
    tool("jq", "the verify script reads the API answers with it")
    tool("curl", "the verify script asks Prometheus's HTTP API with it")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FAKE_APPLICATIONS": str(apps), "RLOBS_LOCAL_PORT": str(port)}
    return run_script(bundle / SCRIPT, env=env)


def _errors(proc: subprocess.CompletedProcess[str]) -> list[str]:
    lines = proc.stderr.splitlines()
    assert all(line.startswith("error: ") for line in lines), proc.stderr
    return [line.removeprefix("error: ") for line in lines]


@pytest.mark.slow
def test_passes_on_the_full_set_up(tmp_path: Path, bundles: dict[str, Path], setups: dict[str, int]) -> None:
    proc = _verify(tmp_path, bundles[PROFILE], setups["full"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not proc.stderr
    out = proc.stdout
    assert "# Application rlobs-rl-eks-prom is Synced and Healthy" in out
    assert f"# 1 of 1 targets of {_app_pool(bundles[PROFILE])} are up" in out
    assert "# rule group rlobs-rl-eks-prom.rl-alerts has its" in out
    assert "# Prometheus has 1 run-state series of the runs of workload grpo-trainer" in out
    # The Ray pods' monitors have no target here: said, not failed.
    assert "# no scrape target in serviceMonitor/monitoring/ray-head/0" in out
    assert out.endswith("# every check passed\n")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("no-rules", "rule group rlobs-rl-eks-prom.rl-alerts is not loaded: is Application rlobs-rl-eks-prom-rl-layer"),
        ("no-series", "no series of the runs of workload grpo-trainer in Prometheus"),
    ],
)
def test_one_line_for_what_is_missing(
    tmp_path: Path, bundles: dict[str, Path], setups: dict[str, int], variant: str, expected: str
) -> None:
    proc = _verify(tmp_path, bundles[PROFILE], setups[variant])
    assert proc.returncode == 1
    (error,) = _errors(proc)
    assert error.startswith(expected), error


@pytest.mark.slow
def test_a_down_target_is_one_line(tmp_path: Path, bundles: dict[str, Path], setups: dict[str, int]) -> None:
    proc = _verify(tmp_path, bundles[PROFILE], setups["app-down"])
    assert proc.returncode == 1
    # With the app down its series go stale too: the target's line comes first, the series' line after it.
    target, series = _errors(proc)
    assert target.startswith(
        f"1 of 1 targets of {_app_pool(bundles[PROFILE])} (PodMonitor: the RL app's own /metrics; port rl-metrics)"
    )
    assert "connection refused" in target
    assert series.startswith("no series of")


@pytest.mark.slow
def test_argo_cd_states(tmp_path: Path, bundles: dict[str, Path], setups: dict[str, int]) -> None:
    state = {"rlobs-rl-eks-prom-rl-layer": ("OutOfSync", "Degraded"), "otel-collector": ("", "")}
    proc = _verify(tmp_path, bundles[PROFILE], setups["full"], state)
    assert proc.returncode == 1
    assert _errors(proc) == [
        "Application otel-collector is not in namespace argocd: commit this folder, then kubectl apply -f "
        "argocd/root-app.yaml",
        "Application rlobs-rl-eks-prom-rl-layer is OutOfSync and Degraded (kubectl -n argocd describe application "
        "rlobs-rl-eks-prom-rl-layer says why)",
    ]


def test_every_application_and_the_rule_group_are_checked() -> None:
    """The script's lists come from the bundle's own objects: a new Application or rule is checked without edits."""
    for name in EKS_PROFILES:
        script = bundle(name)[SCRIPT]
        apps_line = next(line for line in script.splitlines() if line.startswith("APPS=("))
        apps = [o["metadata"]["name"] for o in objects(name, "argocd/").values()]
        assert sorted(apps_line.removeprefix("APPS=(").removesuffix(")").split()) == sorted(apps), name
        groups = objects(name, "rl-layer/rl-prometheusrule.yaml")["rl-layer/rl-prometheusrule.yaml"]["spec"]["groups"]
        assert f"RULE_GROUP={groups[0]['name']}\nRULE_COUNT={len(groups[0]['rules'])}\n" in script, name
