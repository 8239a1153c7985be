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
from testing.bundles import build
from testing.gke import GKE_PROFILES
from testing.helpers import all_profiles, gke_profile, module, preinstalled_tool, profile


def _files(name: str) -> dict[str, str]:
    return {r.path.removeprefix("terraform/"): r.text for r in build(profile(name)) if r.path.startswith("terraform/")}


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
def test_tfvars_keys_are_declared_with_matching_types(name: str) -> None:
    files = _files(name)
    assert set(files) == {"main.tf", "variables.tf", "terraform.tfvars"}
    declared = _variables(files["variables.tf"])
    values = _loads(files["terraform.tfvars"])
    assert set(values) == set(declared)
    for key, value in values.items():
        kind = declared[key]["type"].strip("${}")
        assert isinstance(value, _TYPES[kind]), (key, kind, value)
        if isinstance(value, list):
            assert all(isinstance(v, str) for v in value)


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_main_uses_exactly_the_declared_variables(name: str) -> None:
    # Declared but unused is a dead input (set in terraform.tfvars, read by nothing); used but undeclared fails.
    files = _files(name)
    used = set(re.findall(r"\bvar\.(\w+)", files["main.tf"]))
    assert used and used == set(_variables(files["variables.tf"]))


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_main_declares_provider_apis_and_cluster(name: str) -> None:
    p = gke_profile(name)
    main = _loads(_files(name)["main.tf"])
    (required,) = main["terraform"][0]["required_providers"]
    assert required["google-beta"]["version"] == project.GOOGLE_BETA_VERSION
    # Pessimistic constraints: `terraform init` stays on google-beta 7.x and Terraform 1.x.
    assert project.GOOGLE_BETA_VERSION == "~> 7.17"
    assert main["terraform"][0]["required_version"] == "~> 1.3"
    resources = {kind: body for block in main["resource"] for kind, body in block.items()}
    assert "google_project_service" in resources and "google_project_iam_member" in resources
    assert set(_loads(_files(name)["terraform.tfvars"])["services"]) == set(project.apis(p))
    cluster = resources.get("google_container_cluster")
    if p.gke.cluster_mode == "existing":
        assert cluster is None  # the cluster is not Terraform's to manage here
        return
    assert cluster is not None
    (config,) = cluster["rl"]["managed_opentelemetry_config"]
    assert config["scope"] == "COLLECTION_AND_INSTRUMENTATION_COMPONENTS"
    assert cluster["rl"].get("enable_autopilot", False) is (p.gke.cluster_mode == "create-autopilot")
    assert ("google_service_account_iam_member" in resources) is bool(
        p.gke.workload_identity and p.gke.workload_identity.gcp_service_account
    )


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
    for name in sorted(all_profiles()):
        for r in build(profile(name)):
            if r.path.startswith("terraform/") and r.path.endswith((".tf", ".tfvars")):
                path = tmp_path / name / r.path
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(r.text, encoding="utf-8")
                written.append(f"{name}/{r.path}")
    assert {"eks-jark/terraform/blueprint.tfvars", "gke-managed-otel/terraform/main.tf"} <= set(written)
    proc = _fmt(terraform, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_terraform_fmt_rejects_unaligned_tfvars(tmp_path: Path) -> None:
    terraform = preinstalled_tool("terraform", "runs terraform fmt -check on the rendered .tf and .tfvars")
    (tmp_path / "bad.tfvars").write_text('project_id = "p"\nnamespace = "rl"\n')
    proc = _fmt(terraform, tmp_path)
    assert proc.returncode != 0 and "bad.tfvars" in proc.stdout
