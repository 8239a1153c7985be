"""The GKE scripts without --dry-run, against stand-in gcloud and kubectl that log calls and answer look-ups.

They prove the branches a dry run cannot show: a second run changes nothing, existing dashboards and policies are
updated rather than duplicated, stale ones of the bundle are deleted and others' left alone, too-old gcloud or GKE
versions stop the script, the project number is filled in.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from rlobs.targets.gke import project
from testing.bundles import build
from testing.gke import commands, gcloud_run, gcloud_usage_error, run_script, scripts_profile, write_bundle
from testing.helpers import preinstalled_tool, profile

# Runs every script end to end in bash against a stand-in gcloud: many processes per test.
pytestmark = pytest.mark.slow

# Answers to the scripts' read-only look-ups come from FAKE_* variables; every call is logged.
FAKE = r"""#!/usr/bin/env bash
printf '%s %s\n' "$(basename "$0")" "$*" >> "$FAKE_LOG"
if [[ $(basename "$0") == curl ]]; then echo "${FAKE_QUERY_ANSWER:-}"; exit 0; fi
case "$*" in
  *"monitoring "*) exec "$FAKE_PYTHON" "$(dirname "$0")/fake_monitoring.py" "$@" ;;
  "version "*) echo "${FAKE_GCLOUD_VERSION:-580.0.0}" ;;
  "auth print-access-token"*) echo fake-token ;;
  *"service-accounts describe"*) [[ -n ${FAKE_GSA_EXISTS:-} ]] || exit 1; echo found ;;
  # A fresh cluster: the collector has no pods for the first FAKE_EMPTY_POLLS looks, and `kubectl wait --all`
  # fails while there are none, as the real one does.
  "get pods --namespace=gke-managed-otel --output=name")
    n=$(($(cat "$FAKE_POLLS" 2>/dev/null || echo 0) + 1)); echo "$n" > "$FAKE_POLLS"
    if ((n > ${FAKE_EMPTY_POLLS:-0})); then echo pod/otel-collector-0; fi ;;
  "wait pods --all"*)
    n=$(cat "$FAKE_POLLS" 2>/dev/null || echo 0)
    if ((n <= ${FAKE_EMPTY_POLLS:-0})); then echo "error: no matching resources found" >&2; exit 1; fi ;;
  *"clusters describe"*currentMasterVersion*) [[ -n ${FAKE_MASTER:-} ]] || exit 1; echo "$FAKE_MASTER" ;;
  *"clusters describe"*managedOpentelemetryConfig*) echo "${FAKE_SCOPE:-}" ;;
  *"clusters describe"*workloadPool*) echo "${FAKE_POOL-p.svc.id.goog}" ;;
  *"projects describe"*) echo 123456789012 ;;
  *"get namespace"* | *"get serviceaccount"*) [[ -n ${FAKE_K8S_EXISTS:-} ]] || exit 1; echo found ;;
esac
"""

# Cloud Monitoring as a JSON file of dashboards and policies: list (with the --filter forms the script uses:
# `key>="v" AND key<="v"`, exact string comparison as in gcloud), create, update, delete.
FAKE_MONITORING = r"""
import json, os, re, sys

args = sys.argv[1:]
kind = "dashboards" if "dashboards" in args else "policies"
verb = args[args.index(kind) + 1]
flags = dict(a[2:].split("=", 1) for a in args if a.startswith("--") and "=" in a)
store_path = os.environ["FAKE_MONITORING"]
store = json.load(open(store_path))
items = store[kind]


def value(item, key):
    for part in key.split("."):
        item = item.get(part) if isinstance(item, dict) else None
    return item


def matches(item, expr):
    for term in expr.split(" AND "):
        key, op, want = re.fullmatch(r'([\w.]+)(>=|<=)"(.*)"', term).groups()
        got = value(item, key)
        if not isinstance(got, str) or not (got >= want if op == ">=" else got <= want):
            return False
    return True


if verb == "list":
    for item in items:
        if matches(item, flags["filter"]):
            print(item["name"])
elif verb in ("create", "update"):
    body = json.load(open(flags.get("config-from-file") or flags["policy-from-file"]))
    if verb == "create":
        store["serial"] += 1
        body["name"] = "projects/1/%s/%d" % (kind, store["serial"])
        items.append(body)
    else:
        (i,) = [i for i, item in enumerate(items) if item["name"] == args[args.index(verb) + 1]]
        items[i] = {**body, "name": items[i]["name"]}
elif verb == "delete":
    assert "--quiet" in args
    store[kind] = [item for item in items if item["name"] != args[args.index(verb) + 1]]
json.dump(store, open(store_path, "w"))
"""


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bundles")
    names = ("gke-managed-otel", "gke-autopilot-jobset", "gke-standard-rayjob")
    return {n: write_bundle(n, root, scripts_profile(n)) for n in names}


def _run(
    tmp_path: Path, bundle: Path, script: str, env: dict[str, str] | None = None, **fake: str
) -> tuple[int, list[str], str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("gcloud", "kubectl", "curl"):
        (bin_dir / name).write_text(FAKE)
        (bin_dir / name).chmod(0o755)
    (bin_dir / "fake_monitoring.py").write_text(FAKE_MONITORING)
    store = tmp_path / "monitoring.json"
    if not store.exists():
        store.write_text(json.dumps({"serial": 100, "dashboards": [], "policies": []}))
    log = tmp_path / "calls.log"
    log.write_text("")
    full = {
        **(env or {}),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "FAKE_LOG": str(log),
        "FAKE_PYTHON": sys.executable,
        "FAKE_MONITORING": str(store),
        "FAKE_POLLS": str(tmp_path / "polls"),
        "RLOBS_POLL_SECONDS": "0",
        **{f"FAKE_{k.upper()}": v for k, v in fake.items()},
    }
    (tmp_path / "polls").unlink(missing_ok=True)
    proc = run_script(bundle / "scripts" / script, env=full)
    return proc.returncode, log.read_text().splitlines(), proc.stdout + proc.stderr


SCOPE = project.OTEL_SCOPE


def _changes(calls: list[str]) -> list[str]:
    read_only = (" describe ", " list ", "gcloud version ", " get ", "print-access-token", "curl ", " wait ")
    return [c for c in calls if not any(w in c for w in read_only)]


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
    assert len(bindings) == len(project.BASE_ROLES)
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


def _store(tmp_path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((tmp_path / "monitoring.json").read_text())
    return result


def _seed(tmp_path: Path, **kinds: list[dict[str, Any]]) -> None:
    store = {"serial": 100, "dashboards": [], "policies": [], **kinds}
    (tmp_path / "monitoring.json").write_text(json.dumps(store))


def _names(items: list[dict[str, Any]]) -> list[str]:
    return sorted(i["displayName"] for i in items)


def test_monitoring_updates_what_exists(tmp_path: Path, bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-managed-otel"]
    files = sorted(str(p.relative_to(bundle)) for p in (bundle / "monitoring").rglob("*.json"))
    rc, calls, out = _run(tmp_path, bundle, "04-deploy-monitoring.sh")
    assert rc == 0, out
    created = [c for c in calls if " create " in c]
    assert len(created) == len(files) and not [c for c in calls if " update " in c or " delete " in c]
    first = _store(tmp_path)
    # Every dashboard and policy carries the bundle label the next run finds stale ones by.
    assert {d["labels"]["rlobs_bundle"] for d in first["dashboards"]} == {"rl-gke"}
    assert {p["userLabels"]["rlobs_bundle"] for p in first["policies"]} == {"rl-gke"}

    rc, calls, out = _run(tmp_path, bundle, "04-deploy-monitoring.sh")
    assert rc == 0, out
    assert not [c for c in calls if " create " in c or " delete " in c]
    assert len([c for c in calls if " update " in c]) == len(files)
    # Updated in place: same resources, no duplicates.
    assert _store(tmp_path) == first


def _policy(name: str, display: str, **labels: str) -> dict[str, Any]:
    return {"name": f"projects/1/alertPolicies/{name}", "displayName": display, "userLabels": labels}


def test_monitoring_deletes_stale_and_leaves_others(tmp_path: Path, bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-managed-otel"]
    policy_file = sorted((bundle / "monitoring" / "alert-policies").glob("*.json"))[0]
    current = json.loads(policy_file.read_text())["displayName"]
    dashboard = {"name": "projects/1/dashboards/d1", "displayName": "RL golden signals (rl-gke)"}
    seeded = {
        "current": _policy("1", current, rlobs_bundle="rl-gke"),
        "stale": _policy("2", "RLRenamedAway (rl-gke)", rlobs_bundle="rl-gke"),
        # A second copy of a current policy (e.g. from a run before policies were looked up): one is enough.
        "duplicate": _policy("3", current, rlobs_bundle="rl-gke"),
        "foreign": _policy("4", "Someone else's (rl-gke)"),
        "other bundle": _policy("5", "RLLossSpike (rl-gke-2)", rlobs_bundle="rl-gke-2"),
        "word match": _policy("6", "x", rlobs_bundle="rl"),
    }
    stale_dashboard = {"name": "projects/1/dashboards/d2", "displayName": "old", "labels": {"rlobs_bundle": "rl-gke"}}
    _seed(tmp_path, dashboards=[dashboard, stale_dashboard], policies=list(seeded.values()))
    rc, calls, out = _run(tmp_path, bundle, "04-deploy-monitoring.sh")
    assert rc == 0, out
    assert [c for c in calls if " delete " in c] == [
        "gcloud monitoring dashboards delete projects/1/dashboards/d2 --project=my-rl-project --quiet",
        "gcloud monitoring policies delete projects/1/alertPolicies/2 --project=my-rl-project --quiet",
        "gcloud monitoring policies delete projects/1/alertPolicies/3 --project=my-rl-project --quiet",
    ]
    store = _store(tmp_path)
    by_name = {p["name"]: p for p in store["policies"]}
    # The current one was updated in place (now with the file's content), not created again.
    assert by_name["projects/1/alertPolicies/1"] == {
        **json.loads(policy_file.read_text()),
        "name": seeded["current"]["name"],
    }
    assert _names(store["policies"]).count(current) == 1
    for key in ("foreign", "other bundle", "word match"):
        assert by_name[seeded[key]["name"]] == seeded[key], key
    # The untouched dashboard was updated; the stale one is gone.
    assert [d["name"] for d in store["dashboards"]] == ["projects/1/dashboards/d1"]
    # A second run has nothing left to delete.
    rc, calls, out = _run(tmp_path, bundle, "04-deploy-monitoring.sh")
    assert rc == 0 and not [c for c in calls if " delete " in c or " create " in c], out


def test_monitoring_alerts_turned_off_deletes_the_policies(tmp_path: Path, bundles: dict[str, Path]) -> None:
    rc, _, out = _run(tmp_path, bundles["gke-managed-otel"], "04-deploy-monitoring.sh")
    assert rc == 0, out
    deployed = _store(tmp_path)
    assert deployed["policies"]
    base = profile("gke-managed-otel")
    quiet = base.model_copy(update={"alerts": base.alerts.model_copy(update={"enabled": False})})
    root = tmp_path / "alerts-off"
    for r in build(quiet):
        path = root / r.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(r.text, encoding="utf-8")
        if r.executable:
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
    assert not (root / "monitoring" / "alert-policies").exists()
    rc, calls, out = _run(tmp_path, root, "04-deploy-monitoring.sh")
    assert rc == 0, out
    assert len([c for c in calls if "policies delete" in c]) == len(deployed["policies"])
    after = _store(tmp_path)
    assert after["policies"] == [] and [d["name"] for d in after["dashboards"]] == [
        d["name"] for d in deployed["dashboards"]
    ]


@pytest.mark.slow
def test_delete_lines_parse_with_real_gcloud(tmp_path: Path, bundles: dict[str, Path]) -> None:
    # A dry run cannot print the deletes (they depend on look-ups), so take them from a run with stale items.
    gcloud = preinstalled_tool("gcloud", "parses each gcloud command the scripts print")
    stale = {"name": "projects/1/dashboards/d9", "displayName": "old", "labels": {"rlobs_bundle": "rl-gke"}}
    _seed(tmp_path, dashboards=[stale], policies=[_policy("9", "RLGone (rl-gke)", rlobs_bundle="rl-gke")])
    # gcloud 528, as here: the alpha policies group, the one this gcloud has.
    rc, _, out = _run(tmp_path, bundles["gke-managed-otel"], "04-deploy-monitoring.sh", gcloud_version="528.0.0")
    assert rc == 0, out
    deletes = [c for c in commands(out) if "delete" in c]
    assert [c[:4] for c in deletes] == [
        ["gcloud", "monitoring", "dashboards", "delete"],
        ["gcloud", "alpha", "monitoring", "policies"],
    ]
    config = tmp_path / "gcloud-config"
    config.mkdir()
    for cmd in deletes:
        assert gcloud_usage_error(gcloud_run(gcloud, cmd, config)) is None, cmd
    assert gcloud_usage_error(gcloud_run(gcloud, [*deletes[0], "--bogus"], config)) is not None


def test_policies_use_the_ga_group_unless_gcloud_is_older(tmp_path: Path, bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-managed-otel"]
    rc, calls, out = _run(tmp_path, bundle, "04-deploy-monitoring.sh", gcloud_version="580.0.0")
    assert rc == 0, out
    policy_calls = [c for c in calls if "policies" in c]
    assert policy_calls and all(c.startswith("gcloud monitoring policies ") for c in policy_calls)
    rc, calls, out = _run(tmp_path, bundle, "04-deploy-monitoring.sh", gcloud_version="528.0.0")
    assert rc == 0 and "using gcloud alpha monitoring policies" in out, out
    policy_calls = [c for c in calls if "policies" in c]
    assert policy_calls and all(c.startswith("gcloud alpha monitoring policies ") for c in policy_calls)


def test_iam_creates_the_google_service_account_only_when_missing(tmp_path: Path, bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-autopilot-jobset"]
    rc, calls, out = _run(tmp_path, bundle, "03-grant-iam.sh", k8s_exists="1")
    assert rc == 0, out
    creates = [c for c in calls if "service-accounts create" in c]
    assert creates == [
        "gcloud iam service-accounts create rl-trainer --project=rl-obs-dev "
        "--display-name=RL workload grpo-jobset (rlobs bundle rl-autopilot)"
    ]
    assert calls.index(creates[0]) < min(i for i, c in enumerate(calls) if "add-iam-policy-binding" in c)
    rc, calls, out = _run(tmp_path, bundle, "03-grant-iam.sh", k8s_exists="1", gsa_exists="1")
    assert rc == 0 and not [c for c in calls if "service-accounts create" in c], out


_NO_DATA = '{"status":"success","data":{"resultType":"vector","result":[]}}'


@pytest.mark.parametrize("name", ["gke-managed-otel", "gke-standard-rayjob"])
def test_setup_on_a_fresh_cluster_ends_with_exit_0(tmp_path: Path, bundles: dict[str, Path], name: str) -> None:
    # Nothing set up yet: the collector has no pods for the first three looks, the run has sent no metrics.
    fake = {"empty_polls": "3", "query_answer": _NO_DATA}
    if name == "gke-managed-otel":
        fake["master"] = "1.35.1-gke.1000"  # the existing cluster, managed OTel not enabled yet
    rc, calls, out = _run(tmp_path, bundles[name], "setup.sh", **fake)
    assert rc == 0, out
    assert out.count("waiting for the managed collector's pods") == 3
    waits = [c for c in calls if c.startswith("kubectl wait pods --all")]
    assert len(waits) == 1 and calls.index(waits[0]) > max(i for i, c in enumerate(calls) if "--output=name" in c)
    assert "no metrics of " in out
    # The data check asks for the run's own pushed run-state gauge (every framework sets it), not `up`.
    (query,) = [c for c in calls if c.startswith("curl ") and "/services" not in c]
    # The SLO's service and SLO (slos: in gke-standard-rayjob) go to the Monitoring API with the token too.
    objects = [c for c in calls if c.startswith("curl ") and "monitoring.googleapis.com/v3/" in c]
    assert all("Bearer fake-token" in c for c in objects) and len(objects) == (4 if profile(name).slos else 0)
    assert "up{" not in query and "query=count(" in query and "rl.run.state" in query
    assert "Bearer fake-token" in query and "fake-token" not in out  # the token is used, never printed


def test_verify_waits_for_the_collector_only_so_long(tmp_path: Path, bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-managed-otel"]
    rc, calls, out = _run(tmp_path, bundle, "05-verify.sh", env={"RLOBS_WAIT_SECONDS": "0"}, empty_polls="1000000")
    assert rc == 1 and "no managed collector pods in namespace gke-managed-otel after 0s" in out
    assert not [c for c in calls if c.startswith("kubectl wait")]


def test_verify_reports_the_runs_series(tmp_path: Path, bundles: dict[str, Path]) -> None:
    answer = '{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"2"]}]}}'
    rc, _, out = _run(tmp_path, bundles["gke-managed-otel"], "05-verify.sh", query_answer=answer)
    assert rc == 0 and "Cloud Monitoring has 2 run-state series of the runs of workload " in out, out
