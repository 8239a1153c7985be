"""The GKE Terraform: parsed back with python-hcl2, every tfvars key declared with a matching type."""

from __future__ import annotations

import re
from typing import Any

import pytest

from gke_helpers import GKE_PROFILES
from helpers import module, profile
from rlobs import gke_project
from rlobs.bundle import build


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
def test_main_uses_only_declared_variables(name: str) -> None:
    files = _files(name)
    used = set(re.findall(r"\bvar\.(\w+)", files["main.tf"]))
    assert used and used <= set(_variables(files["variables.tf"]))


@pytest.mark.parametrize("name", GKE_PROFILES)
def test_main_declares_provider_apis_and_cluster(name: str) -> None:
    p = profile(name)
    assert p.gke is not None
    main = _loads(_files(name)["main.tf"])
    (required,) = main["terraform"][0]["required_providers"]
    assert required["google-beta"]["version"] == gke_project.GOOGLE_BETA_VERSION
    resources = {kind: body for block in main["resource"] for kind, body in block.items()}
    assert "google_project_service" in resources and "google_project_iam_member" in resources
    assert set(_loads(_files(name)["terraform.tfvars"])["services"]) == set(gke_project.apis(p))
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
