"""The GKE scripts without --dry-run, against stand-in gcloud and kubectl that log calls and answer look-ups.

They prove the branches a dry run cannot show: a second run changes nothing, existing dashboards and policies are
updated rather than duplicated, too-old gcloud or GKE versions stop the script, the project number is filled in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gke_helpers import run_script, write_bundle
from rlobs import gke_project

# Answers to the scripts' read-only look-ups come from FAKE_* variables; every call is logged.
FAKE = r"""#!/usr/bin/env bash
printf '%s %s\n' "$(basename "$0")" "$*" >> "$FAKE_LOG"
case "$*" in
  "version --format="*) echo "${FAKE_GCLOUD_VERSION:-580.0.0}" ;;
  *"clusters describe"*currentMasterVersion*) [[ -n ${FAKE_MASTER:-} ]] || exit 1; echo "$FAKE_MASTER" ;;
  *"clusters describe"*managedOpentelemetryConfig*) echo "${FAKE_SCOPE:-}" ;;
  *"clusters describe"*workloadPool*) echo "${FAKE_POOL-p.svc.id.goog}" ;;
  *"dashboards list"*) echo "${FAKE_DASHBOARD:-}" ;;
  *"policies list"*) echo "${FAKE_POLICY:-}" ;;
  *"projects describe"*) echo 123456789012 ;;
  *"get namespace"* | *"get serviceaccount"*) [[ -n ${FAKE_K8S_EXISTS:-} ]] || exit 1; echo found ;;
esac
"""


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bundles")
    return {n: write_bundle(n, root) for n in ("gke-managed-otel", "gke-autopilot-jobset", "gke-standard-rayjob")}


def _run(tmp_path: Path, bundle: Path, script: str, **fake: str) -> tuple[int, list[str], str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("gcloud", "kubectl"):
        (bin_dir / name).write_text(FAKE)
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "calls.log"
    log.write_text("")
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "FAKE_LOG": str(log),
        **{f"FAKE_{k.upper()}": v for k, v in fake.items()},
    }
    proc = run_script(bundle / "scripts" / script, env=env)
    return proc.returncode, log.read_text().splitlines(), proc.stdout + proc.stderr


SCOPE = gke_project.OTEL_SCOPE


def _changes(calls: list[str]) -> list[str]:
    return [c for c in calls if not any(w in c for w in (" describe ", " list ", "version --format", " get "))]


def test_existing_cluster_enabled_once(tmp_path: Path, bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-managed-otel"]
    rc, calls, out = _run(tmp_path, bundle, "02-enable-managed-otel.sh", master="1.35.1-gke.1000")
    assert rc == 0, out
    assert _changes(calls) == [
        f"gcloud container clusters update rl-cluster --location=us-central1 --project=my-rl-project "
        f"--managed-otel-scope={SCOPE}"
    ]
    # A second run finds the scope already set and changes nothing.
    rc, calls, out = _run(tmp_path, bundle, "02-enable-managed-otel.sh", master="1.35.1-gke.1000", scope=SCOPE)
    assert rc == 0 and _changes(calls) == [] and "already enabled" in out


def test_existing_cluster_too_old_or_missing(tmp_path: Path, bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-managed-otel"]
    rc, calls, out = _run(tmp_path, bundle, "02-enable-managed-otel.sh", master="1.34.1-gke.1999999")
    assert rc == 1 and "needs 1.34.1-gke.2178000 or later" in out and _changes(calls) == []
    rc, calls, out = _run(tmp_path, bundle, "02-enable-managed-otel.sh")
    assert rc == 1 and "cluster rl-cluster not found" in out and _changes(calls) == []
    rc, calls, out = _run(
        tmp_path, bundle, "02-enable-managed-otel.sh", master="1.35.1-gke.1", gcloud_version="528.0.0"
    )
    assert rc == 1 and "older than 576.0.0" in out and not [c for c in calls if "clusters" in c]


def test_workload_identity_off_is_reported(tmp_path: Path, bundles: dict[str, Path]) -> None:
    rc, _, out = _run(
        tmp_path, bundles["gke-managed-otel"], "02-enable-managed-otel.sh", master="1.35.1-gke.1", pool=""
    )
    assert rc == 0 and "Workload Identity is off" in out and "--workload-pool=my-rl-project.svc.id.goog" in out


def test_cluster_created_only_when_missing(tmp_path: Path, bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-autopilot-jobset"]
    rc, calls, out = _run(tmp_path, bundle, "02-enable-managed-otel.sh")
    assert rc == 0, out
    assert _changes(calls) == [
        f"gcloud container clusters create-auto rl-autopilot --location=europe-west4 --project=rl-obs-dev "
        f"--managed-otel-scope={SCOPE}"
    ]
    rc, calls, out = _run(tmp_path, bundle, "02-enable-managed-otel.sh", master="1.35.1-gke.1", scope=SCOPE)
    assert rc == 0 and _changes(calls) == []


def test_iam_fills_in_the_project_number(tmp_path: Path, bundles: dict[str, Path]) -> None:
    rc, calls, out = _run(tmp_path, bundles["gke-standard-rayjob"], "03-grant-iam.sh")
    assert rc == 0, out
    bindings = [c for c in calls if "add-iam-policy-binding" in c]
    assert len(bindings) == len(gke_project.BASE_ROLES)
    member = (
        "--member=principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/"
        "rl-obs-dev.svc.id.goog/namespace/ray"
    )
    assert all(member in c for c in bindings)


def test_iam_creates_the_service_account_only_when_missing(tmp_path: Path, bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-autopilot-jobset"]
    _, calls, _ = _run(tmp_path, bundle, "03-grant-iam.sh")
    creates = [c for c in calls if c.startswith("kubectl create")]
    assert creates == [
        "kubectl create namespace rl-train",
        "kubectl create serviceaccount rl-trainer --namespace=rl-train",
    ]
    rc, calls, out = _run(tmp_path, bundle, "03-grant-iam.sh", k8s_exists="1")
    assert rc == 0, out
    assert not [c for c in calls if c.startswith("kubectl create")]
    assert [c for c in calls if c.startswith("kubectl annotate")]  # --overwrite: harmless again


def test_monitoring_updates_what_exists(tmp_path: Path, bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-managed-otel"]
    rc, calls, out = _run(tmp_path, bundle, "04-deploy-monitoring.sh")
    assert rc == 0, out
    created = [c for c in calls if " create " in c]
    assert created and not [c for c in calls if " update " in c]
    rc, calls, out = _run(
        tmp_path,
        bundle,
        "04-deploy-monitoring.sh",
        dashboard="projects/1/dashboards/abc",
        policy="projects/1/alertPolicies/9",
    )
    assert rc == 0, out
    assert not [c for c in calls if " create " in c]
    updates = [c for c in calls if " update " in c]
    assert len(updates) == len(created)
    assert any(c.startswith("gcloud monitoring dashboards update projects/1/dashboards/abc ") for c in updates)
    assert any(c.startswith("gcloud alpha monitoring policies update projects/1/alertPolicies/9 ") for c in updates)
