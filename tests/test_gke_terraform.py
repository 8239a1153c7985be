"""The GKE Terraform: parsed back with python-hcl2, every tfvars key declared with a matching type, and (with every
rendered .tf/.tfvars of both targets) accepted by `terraform fmt -check`."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rlobs.targets.gke import project
from rlobs.targets.gke.profile import GkeProfile
from testing.bundles import build
from testing.gke import GKE_PROFILES, managed_by, terraform_profiles
from testing.helpers import all_profiles, gke_profile, module, preinstalled_tool, profile

TF = terraform_profiles()


def _tf(name: str) -> GkeProfile:
    return TF[name]


def _files(name: str) -> dict[str, str]:
    return {r.path.removeprefix("terraform/"): r.text for r in build(_tf(name)) if r.path.startswith("terraform/")}


def _loads(text: str) -> dict[str, Any]:
    module("hcl2", "parses the rendered Terraform")
    import hcl2

    result: dict[str, Any] = hcl2.loads(text, serialization_options=hcl2.SerializationOptions(strip_string_quotes=True))
    # python-hcl2 8 reports comments under this key; they are not Terraform values.
    return {k: v for k, v in result.items() if k != "__comments__"}


def _variables(text: str) -> dict[str, dict[str, Any]]:
    return {name: body for block in _loads(text)["variable"] for name, body in block.items()}


_TYPES = {"string": str, "list(string)": list}


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_scripts_mode_has_no_terraform(name: str) -> None:
    # One owner per object: with the scripts in charge, nothing in the bundle could apply the same objects again.
    assert not [r.path for r in build(managed_by(gke_profile(name), "scripts")) if r.path.startswith("terraform/")]


@pytest.mark.parametrize("name", sorted(TF))
def test_tfvars_keys_are_declared_with_matching_types(name: str) -> None:
    files = _files(name)
    policies = {"alert_policies.tf.json"} if _tf(name).alerts.enabled else set()
    slos = {"slos.tf.json"} if _tf(name).slos else set()  # the goodput SLO (tests/test_slo.py)
    assert set(files) == {"main.tf", "variables.tf", "terraform.tfvars"} | policies | slos
    declared = _variables(files["variables.tf"])
    values = _loads(files["terraform.tfvars"])
    assert set(values) == set(declared)
    for key, value in values.items():
        kind = declared[key]["type"].strip("${}")
        assert isinstance(value, _TYPES[kind]), (key, kind, value)
        if isinstance(value, list):
            assert all(isinstance(v, str) for v in value)


@pytest.mark.parametrize("name", sorted(TF))
def test_main_uses_exactly_the_declared_variables(name: str) -> None:
    # Declared but unused is a dead input (set in terraform.tfvars, read by nothing); used but undeclared fails.
    files = _files(name)
    used = set(re.findall(r"\bvar\.(\w+)", files["main.tf"]))
    assert used and used == set(_variables(files["variables.tf"]))


def _resources(name: str) -> dict[str, Any]:
    return {kind: body for block in _loads(_files(name)["main.tf"])["resource"] for kind, body in block.items()}


@pytest.mark.parametrize("name", sorted(TF))
def test_main_declares_provider_apis_and_cluster(name: str) -> None:
    p = _tf(name)
    main = _loads(_files(name)["main.tf"])
    (required,) = main["terraform"][0]["required_providers"]
    assert required["google-beta"]["version"] == project.GOOGLE_BETA_VERSION
    # managed_opentelemetry_config needs 7.17; 8.0 makes breaking changes, so stay below it.
    assert project.GOOGLE_BETA_VERSION == ">= 7.17, < 8"
    assert main["terraform"][0]["required_version"] == "~> 1.3"
    resources = _resources(name)
    assert "google_project_service" in resources and "google_project_iam_member" in resources
    assert set(_loads(_files(name)["terraform.tfvars"])["services"]) == set(project.apis(p))
    cluster = resources.get("google_container_cluster")
    gsa = bool(p.gke.workload_identity and p.gke.workload_identity.gcp_service_account)
    assert ("google_service_account_iam_member" in resources) is gsa
    # The GSA the roles go to is created here (and its API enabled), not assumed to exist.
    assert ("google_service_account" in resources) is gsa and (project.IAM_API in project.apis(p)) is gsa
    if p.gke.cluster_mode == "existing":
        assert cluster is None  # the cluster is not Terraform's to manage here
        return
    assert cluster is not None
    (config,) = cluster["rl"]["managed_opentelemetry_config"]
    assert config["scope"] == "COLLECTION_AND_INSTRUMENTATION_COMPONENTS"
    assert cluster["rl"].get("enable_autopilot", False) is (p.gke.cluster_mode == "create-autopilot")
    # The profile's explicit choice, never the provider default.
    assert cluster["rl"]["deletion_protection"] is p.gke.deletion_protection


def _in_pool(member: str) -> bool:
    """True for an IAM member that lives in the cluster's workload identity pool."""
    return ".svc.id.goog" in member


@pytest.mark.parametrize("name", sorted(TF))
def test_no_iam_binding_races_its_principal(name: str) -> None:
    # A member in PROJECT.svc.id.goog exists only once the cluster that creates the pool does; Terraform runs
    # independent resources in parallel, so each such binding must depend on the cluster (or the cluster exists).
    p = _tf(name)
    main = _files(name)["main.tf"]
    resources = _resources(name)
    writer_member = _loads(main)["locals"][0]["writer_member"]
    bindings = [("google_project_iam_member", "writer", writer_member)]
    if "google_service_account_iam_member" in resources:
        wi = resources["google_service_account_iam_member"]["workload_identity"]
        bindings.append(("google_service_account_iam_member", "workload_identity", wi["member"]))
        # The GSA is created first: the binding names it by reference.
        assert wi["service_account_id"] == "${google_service_account.workload.name}"
    checked = 0
    for kind, key, member in bindings:
        if not _in_pool(member) or p.gke.cluster_mode == "existing":
            continue
        assert "${google_container_cluster.rl}" in resources[kind][key].get("depends_on", []), (kind, member)
        checked += 1
    assert checked or p.gke.cluster_mode == "existing" or not any(_in_pool(m) for *_, m in bindings)


def test_hcl2_rejects_broken_terraform() -> None:
    module("hcl2", "parses the rendered Terraform")
    import hcl2

    with pytest.raises(Exception, match=r"(?i)unexpected"):
        hcl2.loads('resource "x" "y" {\n  a = \n}\n')


def _fmt(terraform: str, root: Path) -> subprocess.CompletedProcess[str]:
    # No CLI config file here; without this terraform warns on every run.
    env = {**os.environ, "TF_CLI_CONFIG_FILE": os.devnull}
    cmd = [terraform, "fmt", "-check", "-diff", "-recursive", str(root)]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, timeout=60)


@pytest.mark.slow
def test_terraform_fmt_accepts_every_rendered_file(tmp_path: Path) -> None:
    # The GitOps repo a bundle lands in may run `terraform fmt -check` in CI, so what rlobs renders must pass it.
    terraform = preinstalled_tool("terraform", "runs terraform fmt -check on the rendered .tf and .tfvars")
    written = []
    every = {n: profile(n) for n in all_profiles()} | terraform_profiles()
    for name, p in sorted(every.items()):
        for r in build(p):
            if r.path.startswith("terraform/") and r.path.endswith((".tf", ".tfvars")):
                path = tmp_path / name / r.path
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(r.text, encoding="utf-8")
                written.append(f"{name}/{r.path}")
    assert {"eks-jark/terraform/blueprint.tfvars", "gke-managed-otel@terraform/terraform/main.tf"} <= set(written)
    proc = _fmt(terraform, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_terraform_fmt_rejects_unaligned_tfvars(tmp_path: Path) -> None:
    terraform = preinstalled_tool("terraform", "runs terraform fmt -check on the rendered .tf and .tfvars")
    (tmp_path / "bad.tfvars").write_text('project_id = "p"\nnamespace = "rl"\n')
    proc = _fmt(terraform, tmp_path)
    assert proc.returncode != 0 and "bad.tfvars" in proc.stdout


@pytest.mark.parametrize("name", sorted(TF))
def test_git_ignores_the_state_and_cache_but_not_the_lock_file(tmp_path: Path, name: str) -> None:
    """Real git on the rendered bundle: `git add` of the folder takes no Terraform state or cache."""
    for r in build(_tf(name)):
        (tmp_path / r.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / r.path).write_text(r.text)
    made = ["terraform/.terraform/providers/x", "terraform/terraform.tfstate", "terraform/terraform.tfstate.backup"]
    made += ["terraform/.terraform.tfstate.lock.info", "terraform/.terraform.lock.hcl"]
    for rel in made:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    proc = subprocess.run(
        ["git", "-C", str(tmp_path), "check-ignore", *made], capture_output=True, text=True, check=False
    )
    assert proc.stdout.split() == made[:4], proc.stderr
    # The main.tf backend takes its path at init, so the state can live outside the bundle.
    assert 'backend "local" {}' in (tmp_path / "terraform/main.tf").read_text()
