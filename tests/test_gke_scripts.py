"""GKE set-up scripts: shellcheck-clean, --help, --dry-run prints the right commands, real gcloud parses them."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rlobs.targets.gke import project
from rlobs.targets.gke.plan import STEPS, equals
from testing.gke import (
    GKE_PROFILES,
    SCOPE_FLAG,
    bare_path,
    commands,
    gcloud_run,
    gcloud_usage_error,
    run_script,
    scripts_profile,
    write_bundle,
)
from testing.helpers import preinstalled_tool, profile, tool

ALL_SCRIPTS = (*STEPS, "setup.sh")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bundles")
    # Every script path: each GKE profile with the scripts owning the set-up (test_gke_plan covers which scripts a
    # Terraform-owned bundle keeps).
    return {name: write_bundle(name, root, scripts_profile(name)) for name in GKE_PROFILES}


@functools.cache
def _dry_run(bundle: Path, script: str) -> list[list[str]]:
    # Without gcloud and kubectl on PATH: a dry run runs nothing, so it must not need them.
    proc = run_script(bundle / "scripts" / script, "--dry-run", env={"PATH": bare_path(bundle.parent)})
    assert proc.returncode == 0, proc.stderr
    assert "is not installed; a real run needs it" in proc.stdout
    return commands(proc.stdout)


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_scripts_are_executable_strict_bash(bundles: dict[str, Path], name: str) -> None:
    for script in ALL_SCRIPTS:
        path = bundles[name] / "scripts" / script
        text = path.read_text()
        assert text.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in text, script
        assert path.stat().st_mode & 0o100, f"{script} is not executable"
        proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", GKE_PROFILES)
def test_scripts_are_shellcheck_clean(bundles: dict[str, Path], name: str) -> None:
    shellcheck = tool("shellcheck", "lints the rendered set-up scripts")
    paths = [str(bundles[name] / "scripts" / s) for s in ALL_SCRIPTS]
    proc = subprocess.run([shellcheck, "--format=gcc", *paths], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_shellcheck_rejects_a_broken_script(tmp_path: Path) -> None:
    shellcheck = tool("shellcheck", "lints the rendered set-up scripts")
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/usr/bin/env bash\nPROJECT=$1\ngcloud services enable x --project=$PROJECT\n")
    proc = subprocess.run([shellcheck, "--format=gcc", str(bad)], capture_output=True, text=True, check=False)
    assert proc.returncode != 0 and "SC2086" in proc.stdout


@pytest.mark.parametrize("script", ALL_SCRIPTS)
def test_help_and_unknown_arguments(bundles: dict[str, Path], script: str) -> None:
    path = bundles["gke-managed-otel"] / "scripts" / script
    proc = run_script(path, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"Usage: {script} [--dry-run]\n")
    assert "-n, --dry-run" in proc.stdout and not commands(proc.stdout)
    bad = run_script(path, "--bogus")
    assert bad.returncode == 2 and "unknown argument --bogus" in bad.stderr


def test_enable_apis_dry_run(bundles: dict[str, Path]) -> None:
    apis = ["cloudtrace", "container", "monitoring", "telemetry"]
    assert _dry_run(bundles["gke-managed-otel"], "01-enable-apis.sh") == [
        ["gcloud", "services", "enable", *(f"{a}.googleapis.com" for a in apis), "--project=my-rl-project"]
    ]
    # logs: true adds the Logging API.
    (cmd,) = _dry_run(bundles["gke-autopilot-jobset"], "01-enable-apis.sh")
    assert "logging.googleapis.com" in cmd and "--project=rl-obs-dev" in cmd


def _where(cmds: list[list[str]], *prefix: str) -> list[list[str]]:
    return [c for c in cmds if c[: len(prefix)] == list(prefix)]


def test_managed_otel_dry_run_per_cluster_mode(bundles: dict[str, Path]) -> None:
    where = ["--location=us-central1", "--project=my-rl-project"]
    existing = _dry_run(bundles["gke-managed-otel"], "02-enable-managed-otel.sh")
    assert _where(existing, "gcloud", "container", "clusters", "update") == [
        ["gcloud", "container", "clusters", "update", "rl-cluster", *where, SCOPE_FLAG]
    ]
    assert not _where(existing, "gcloud", "container", "clusters", "create")
    autopilot = _dry_run(bundles["gke-autopilot-jobset"], "02-enable-managed-otel.sh")
    assert _where(autopilot, "gcloud", "container", "clusters", "create-auto") == [
        [
            *("gcloud", "container", "clusters", "create-auto", "rl-autopilot"),
            *("--location=europe-west4", "--project=rl-obs-dev", SCOPE_FLAG),
        ]
    ]
    standard = _dry_run(bundles["gke-standard-rayjob"], "02-enable-managed-otel.sh")
    (create,) = _where(standard, "gcloud", "container", "clusters", "create")
    assert create[4:] == [
        "rl-standard",
        "--location=us-central1-a",
        "--project=rl-obs-dev",
        "--workload-pool=rl-obs-dev.svc.id.goog",
        SCOPE_FLAG,
    ]


def test_grant_iam_dry_run_per_identity(bundles: dict[str, Path]) -> None:
    ksa = _dry_run(bundles["gke-managed-otel"], "03-grant-iam.sh")
    bindings = _where(ksa, "gcloud", "projects", "add-iam-policy-binding")
    roles = sorted(c[-3].removeprefix("--role=") for c in bindings)
    assert roles == sorted(project.BASE_ROLES)
    member = (
        "--member=principal://iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/workloadIdentityPools/"
        "my-rl-project.svc.id.goog/subject/ns/rl/sa/grpo-trainer"
    )
    assert all(member in c and "--condition=None" in c for c in bindings)
    assert ["kubectl", "create", "serviceaccount", "grpo-trainer", "--namespace=rl"] in ksa

    gsa = _dry_run(bundles["gke-autopilot-jobset"], "03-grant-iam.sh")
    email = "rl-trainer@rl-obs-dev.iam.gserviceaccount.com"
    bindings = _where(gsa, "gcloud", "projects", "add-iam-policy-binding")
    assert {c[-3] for c in bindings} == {f"--role={r}" for r in (*project.BASE_ROLES, "roles/logging.logWriter")}
    assert all(f"--member=serviceAccount:{email}" in c for c in bindings)
    assert _where(gsa, "gcloud", "iam", "service-accounts", "add-iam-policy-binding")[0][4:8] == [
        email,
        "--project=rl-obs-dev",
        "--role=roles/iam.workloadIdentityUser",
        "--member=serviceAccount:rl-obs-dev.svc.id.goog[rl-train/rl-trainer]",
    ]
    # The GSA is looked up, and (a dry run finds nothing) created, in the project its email names, before any
    # binding names it.
    (create,) = _where(gsa, "gcloud", "iam", "service-accounts", "create")
    assert create[4:6] == ["rl-trainer", "--project=rl-obs-dev"]
    assert gsa.index(create) < gsa.index(bindings[0])
    assert _where(gsa, "gcloud", "iam", "service-accounts", "describe")[0][4:6] == [email, "--project=rl-obs-dev"]
    assert _where(gsa, "kubectl", "annotate")[0][-1] == f"iam.gke.io/gcp-service-account={email}"

    namespace = _dry_run(bundles["gke-standard-rayjob"], "03-grant-iam.sh")
    assert all(
        "/workloadIdentityPools/rl-obs-dev.svc.id.goog/namespace/ray" in c[4]
        for c in _where(namespace, "gcloud", "projects", "add-iam-policy-binding")
    )
    assert not _where(namespace, "kubectl")


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_deploy_monitoring_covers_every_file(bundles: dict[str, Path], name: str) -> None:
    bundle = bundles[name]
    cmds = _dry_run(bundle, "04-deploy-monitoring.sh")
    deployed = {
        c[-1].split("=", 1)[1] for c in cmds if c[-1].startswith(("--config-from-file=", "--policy-from-file="))
    }
    # The SLO's service and SLO go through the Monitoring API (no gcloud commands): `api ... --data-binary @FILE`.
    by_api = {c[c.index("--data-binary") + 1][1:] for c in cmds if c[0] == "api" and "--data-binary" in c}
    deployed |= by_api
    # ...each looked up first (GET), so a second run patches instead of failing on an existing id.
    assert len([c for c in cmds if c[0] == "api" and len(c) == 2]) == len(by_api)
    on_disk = {str(p) for p in (bundle / "monitoring").rglob("*.json")}
    assert deployed == on_disk and on_disk
    # Each file is first looked up by display name, so a second run updates instead of duplicating.
    lists = [c for c in cmds if "list" in c]
    by_name = [c for c in lists if c[-2].startswith("--filter=displayName>=")]
    assert len(by_name) == len(on_disk) - len(by_api)
    # Before any change, the bundle's labelled dashboards and policies are listed: those left over get deleted.
    bundle_name, project_id = profile(name).metadata.name, profile(name).gke.project
    assert [c for c in lists if c not in by_name] == [
        [
            *("gcloud", "monitoring", "dashboards", "list", f"--project={project_id}"),
            f"--filter={equals('labels.rlobs_bundle', bundle_name)}",
            "--format=value(name)",
        ],
        [
            *("gcloud", "alpha", "monitoring", "policies", "list", f"--project={project_id}"),
            f"--filter={equals('userLabels.rlobs_bundle', bundle_name)}",
            "--format=value(name)",
        ],
    ]
    assert cmds.index(lists[1]) < min(i for i, c in enumerate(cmds) if "create" in c)


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_every_gcloud_command_names_its_project(bundles: dict[str, Path], name: str) -> None:
    # Wherever no default project is configured (CI, an activated service account), a command without a project
    # fails with "Failed to find attribute [project]". `gcloud projects VERB PROJECT` names it as its resource.
    gcloud_lines = [c for s in STEPS for c in _dry_run(bundles[name], s) if c[0] == "gcloud"]
    assert gcloud_lines
    own = profile(name).gke.project

    def names_project(c: list[str]) -> bool:
        return any(w.startswith("--project=") for w in c) or (c[1] == "projects" and c[3] == own)

    missing = [" ".join(c) for c in gcloud_lines if not names_project(c)]
    assert not missing, "\n".join(missing)
    # The version check runs gcloud without printing it; it names the project too.
    assert 'gcloud version --project="$PROJECT"' in (bundles[name] / "scripts" / "04-deploy-monitoring.sh").read_text()


def test_setup_runs_every_step_in_order(bundles: dict[str, Path]) -> None:
    bundle = bundles["gke-managed-otel"]
    proc = run_script(bundle / "scripts" / "setup.sh", "--dry-run", env={"PATH": bare_path(bundle.parent)})
    assert proc.returncode == 0, proc.stderr
    steps = [line.removeprefix("# == ") for line in proc.stdout.splitlines() if line.startswith("# == ")]
    assert steps == list(STEPS)
    singles = [c for s in STEPS for c in _dry_run(bundles["gke-managed-otel"], s)]
    assert commands(proc.stdout) == singles


# --- every printed gcloud line against a real gcloud (rc 2 = usage error, found before any login) ---------


def _shape(cmd: list[str]) -> str:
    """Command words and flag names, values dropped: gcloud parses flags, not values, so one run per shape will do
    (and keeps the test fast: each gcloud start costs about a second)."""
    words = [w for w in cmd if not w.startswith("--") and re.fullmatch(r"[a-z][a-z-]*", w) and w not in _VALUES]
    return " ".join(words + sorted(w.split("=", 1)[0] for w in cmd if w.startswith("--")))


# Positional values of the GKE profiles that look like command words.
_VALUES = {
    v for n in GKE_PROFILES for v in (getattr(profile(n).gke, "project", ""), getattr(profile(n).gke, "cluster", ""))
}


@pytest.mark.slow
def test_every_gcloud_line_parses(bundles: dict[str, Path], tmp_path: Path) -> None:
    gcloud = preinstalled_tool("gcloud", "parses each gcloud command the scripts print")
    lines: dict[str, list[str]] = {}
    for bundle in bundles.values():
        for script in STEPS:
            for cmd in _dry_run(bundle, script):
                if cmd[0] == "gcloud":
                    lines.setdefault(_shape(cmd), cmd)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda c: (c, gcloud_run(gcloud, c, tmp_path)), lines.values()))
    problems = [f"{' '.join(c)}: {why}" for c, p in results if (why := gcloud_usage_error(p))]
    assert not problems, "\n".join(problems)
    assert any(SCOPE_FLAG in c for c in lines.values())


@pytest.mark.slow
def test_gcloud_check_rejects_a_bad_line(tmp_path: Path) -> None:
    gcloud = preinstalled_tool("gcloud", "parses each gcloud command the scripts print")
    bad = ["gcloud", "container", "clusters", "update", "c", "--location=us-central1", "--bogus-flag", SCOPE_FLAG]
    assert gcloud_usage_error(gcloud_run(gcloud, bad, tmp_path)) is not None
    beta = ["gcloud", "beta", "monitoring", "policies", "list", "--project=my-rl-project"]
    assert gcloud_usage_error(gcloud_run(gcloud, beta, tmp_path)) is not None


@pytest.mark.slow
def test_every_kubectl_line_parses(bundles: dict[str, Path], tmp_path: Path) -> None:
    kubectl = tool("kubectl", "parses each kubectl command the scripts print")
    config = tmp_path / "kubeconfig"
    config.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    env = {"KUBECONFIG": str(config), "PATH": "/usr/bin:/bin"}
    seen = set()
    for bundle in bundles.values():
        for script in STEPS:
            for cmd in _dry_run(bundle, script):
                if cmd[0] != "kubectl" or tuple(cmd) in seen:
                    continue
                seen.add(tuple(cmd))
                if cmd[1] == "wait":
                    cmd = [*cmd[:-1], "--timeout=1s"]
                proc = subprocess.run(
                    [kubectl, *cmd[1:]], capture_output=True, text=True, check=False, env=env, timeout=60
                )
                # No server here: a parsed command fails connecting; a bad one says "unknown ...".
                assert not re.search(r"unknown (flag|command|shorthand)", proc.stderr), (cmd, proc.stderr)
    assert seen
    bad = subprocess.run([kubectl, "get", "pods", "--bogus"], capture_output=True, text=True, check=False, env=env)
    assert "unknown flag" in bad.stderr


@pytest.mark.slow
def test_bundle_filters_match_exactly_in_gcloud(tmp_path: Path) -> None:
    # The label filter decides what step 4 deletes: evaluate it with gcloud's own --filter engine. Plain `key=value`
    # would not do: gcloud warns it is moving to word matching, where rl-gke also matches rl-gke-2.
    gcloud = preinstalled_tool("gcloud", "evaluates the scripts' --filter expressions with gcloud's filter engine")
    lib = Path(gcloud).resolve().parents[1] / "lib"
    script = (
        "import json, sys\n"
        "from googlecloudsdk.core.resource import resource_filter\n"
        "expr, items = json.load(sys.stdin)\n"
        "print(json.dumps([i['name'] for i in items if resource_filter.Compile(expr).Evaluate(i)]))\n"
    )

    def evaluate(expr: str, items: list[dict[str, object]], warns: bool = False) -> list[str]:
        env = {"PYTHONPATH": f"{lib}:{lib / 'third_party'}", "CLOUDSDK_CONFIG": str(tmp_path), "PATH": "/usr/bin:/bin"}
        proc = subprocess.run(
            [sys.executable, "-c", script], input=json.dumps([expr, items]), capture_output=True, text=True, env=env
        )
        assert proc.returncode == 0, proc.stderr
        assert ("operator evaluation is changing" in proc.stderr) is warns, proc.stderr
        return list(json.loads(proc.stdout))

    values = ("rl-gke", "rl-gke-2", "my-rl-gke", "rl", "RL-GKE", "")
    policies = [{"name": v or "none", "userLabels": {"rlobs_bundle": v} if v else {}} for v in values]
    assert evaluate(equals("userLabels.rlobs_bundle", "rl-gke"), policies) == ["rl-gke"]
    dashboards = [{"name": v or "none", "labels": {"rlobs_bundle": v} if v else {}} for v in values]
    assert evaluate(equals("labels.rlobs_bundle", "rl-gke"), dashboards) == ["rl-gke"]
    titles = ["RLLossSpike (rl-gke)", "RLLossSpike (rl-gke-2)", "rllossspike (rl-gke)", 'a "quoted" name']
    named = [{"name": t, "displayName": t} for t in titles]
    assert evaluate(equals("displayName", "RLLossSpike (rl-gke)"), named) == ["RLLossSpike (rl-gke)"]
    assert evaluate(equals("displayName", 'a "quoted" name'), named) == ['a "quoted" name']
    # The check can fail: `=` matches case-insensitively (and warns about word matching).
    assert evaluate('displayName="RLLossSpike (rl-gke)"', named[:3], warns=True) == [titles[0], titles[2]]
