"""blueprint.tfvars: the packaged variable table matches ai-on-eks, the file parses back with python-hcl2 and sets only
declared variables of the declared types, and the profile rejects undeclared, sensitive or conflicting variables."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rlobs.errors import ProfileError, RlobsError
from rlobs.resources import read_text
from rlobs.targets import parse_profile
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.eks.tfvars import check_tfvars, declared, tfvars, type_problem
from testing.bundles import build
from testing.eks import EKS_PROFILES, bundle
from testing.helpers import REPO, all_profiles, eks_profile, profile, shared
from testing.readback import hcl_values


def test_packaged_variables_are_built_from_the_pinned_upstream_variables() -> None:
    spec = importlib.util.spec_from_file_location("ai_on_eks_variables", REPO / "tools" / "ai_on_eks_variables.py")
    assert spec and spec.loader
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    built = tool.build(shared(tool.EXTRACT).parent.parent.parent)
    assert built == json.loads(read_text("data", "ai_on_eks_variables.json"))
    assert built["source"]["commit"] and built["source"]["repository"] == "awslabs/ai-on-eks"
    assert built["variables"] == declared()
    assert "enable_argocd" not in declared()  # removed upstream; the bundle must not set it


def _parsed(name: str) -> dict[str, Any]:
    return hcl_values(bundle(name)["terraform/blueprint.tfvars"])


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_tfvars_parse_back_with_declared_names_and_types(name: str) -> None:
    known = declared()
    parsed = _parsed(name)
    assert parsed
    for key, value in parsed.items():
        assert key in known, key
        assert type_problem(known[key]["type"], value) is None, (key, value)
        assert not known[key]["sensitive"], key
    eks = eks_profile(name).eks
    assert parsed["name"] == eks.cluster.name and parsed["region"] == eks.cluster.region
    assert parsed["eks_cluster_version"] == eks.cluster.kubernetes_version
    assert parsed["enable_ai_ml_observability_stack"] is (eks.mode == "ai-on-eks")
    assert parsed["enable_kube_prometheus_stack"] is False
    assert parsed["enable_kuberay_operator"] is eks.kuberay_operator
    assert parsed["enable_nvidia_dcgm_exporter"] is eks.dcgm_exporter
    assert parsed["nvidia_dcgm_exporter_service_monitor"] is False  # rlobs renders its own
    assert parsed["enable_cluster_addons"]["metrics-server"] is True
    for key, value in eks.terraform_variables.items():
        assert parsed[key] == (list(value) if isinstance(value, tuple) else value)


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_each_variable_is_a_paragraph_under_its_comment(name: str) -> None:
    lines = bundle(name)["terraform/blueprint.tfvars"].splitlines()
    for variable in tfvars(eks_profile(name)):
        (at,) = [i for i, line in enumerate(lines) if line.startswith(f"{variable.name} = ")]
        above = [f"# {variable.comment}"] if variable.comment else []
        assert lines[at - 1 - len(above) : at] == ["", *above], variable.name


def test_type_checks_reject_wrong_values() -> None:
    assert type_problem("bool", "true") is not None
    assert type_problem("number", True) is not None
    assert type_problem("list(string)", ["a", 1]) is not None
    assert type_problem("map(bool)", {"coredns": "yes"}) is not None
    assert type_problem("object({repository = string, tag = string})", {}) is not None


def test_enable_argocd_is_explained_not_set() -> None:
    text = bundle("eks-jark")["terraform/blueprint.tfvars"]
    assert "enable_argocd" not in _parsed("eks-jark")
    assert not any("enable_argocd" in line for line in text.splitlines() if not line.startswith("#"))
    assert "# enable_argocd is deliberately absent" in text
    assert "enable_argocd" in bundle("eks-jark")["README.md"]


def test_render_time_guard_rejects_conflicting_flags() -> None:
    variables = tfvars(profile("eks-jark"))
    flipped = tuple(
        type(v)(v.name, True, v.comment) if v.name == "enable_ai_ml_observability_stack" else v for v in variables
    )
    with pytest.raises(RlobsError, match="enable_ai_ml_observability_stack"):
        check_tfvars(flipped, "rlobs", dcgm=True)
    both = tuple(type(v)(v.name, True, v.comment) if v.name == "enable_kube_prometheus_stack" else v for v in variables)
    with pytest.raises(RlobsError, match="two Prometheus operators"):
        check_tfvars(both, "rlobs", dcgm=True)
    undeclared = (*variables, type(variables[0])("enable_argocd", True))
    with pytest.raises(RlobsError, match="enable_argocd: expected a declared variable"):
        check_tfvars(undeclared, "rlobs", dcgm=True)


def _with_vars(block: str) -> str:
    text = all_profiles()["eks-jark"]
    return text.rstrip("\n") + "\n  terraformVariables:\n" + "".join(f"    {line}\n" for line in block.splitlines())


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("- enable_jupyterhub", "expected a mapping, got a list"),
        ("enable_argocd: true", "no longer declared"),
        ("enable_nvidia_gpu_operater: true", "did you mean 'enable_nvidia_gpu_operator'"),
        ("grafana_admin_password: hunter2", "TF_VAR_grafana_admin_password"),
        ("huggingface_token: hf_abc", "never writes credentials"),
        ("region: eu-west-1", "rlobs sets it from eks.cluster.region"),
        ("enable_ai_ml_observability_stack: true", "rlobs sets it from eks.mode"),
        ("enable_kube_prometheus_stack: true", "two Prometheus operators"),
        ("observability_mcp_enabled: true", "only with eks.mode: ai-on-eks"),
        ("enable_nvidia_gpu_operator: true", "enable_nvidia_gpu_operator_dcgm_exporter: false"),
        ('availability_zones_count: "3"', "Terraform type number"),
        ("availability_zones_count: 5", "2, 3 or 4"),
        ("ami_family: ubuntu", "bottlerocket or al2023"),
        ("dranet_driver_image: {repository: x, tag: y}", "not supported"),
        ('enable_cluster_addons: {"metrics-server": false}', "metrics-server to stay true"),
        ('enable_cluster_addons: {"amazon-cloudwatch-observability": true}', "from eks.cloudwatch"),
        ('enable_cluster_addons: {"coredns": "yes"}', "Terraform type map(bool)"),
    ],
)
def test_profile_rejects_bad_terraform_variables(block: str, expected: str) -> None:
    with pytest.raises(ProfileError) as info:
        parse_profile(_with_vars(block), "p.yaml")
    (problem,) = info.value.problems
    assert expected in problem.message
    assert problem.path.startswith("eks.terraformVariables"), problem.path
    assert problem.line > 1


def test_cluster_addon_entries_override_the_default_map() -> None:
    prof = parse_profile(_with_vars('enable_cluster_addons: {"eks-node-monitoring-agent": false}'))
    (addons,) = [v for v in tfvars(prof) if v.name == "enable_cluster_addons"]
    assert addons.value["eks-node-monitoring-agent"] is False and addons.value["metrics-server"] is True
    assert len(addons.value) == 7
    assert "eks-node-monitoring-agent = false (eks.terraformVariables)" in addons.comment


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_cloudwatch_is_off_unless_asked_and_the_comment_names_what_differs_from_upstream(name: str) -> None:
    default = declared()["enable_cluster_addons"]["default"]
    (addons,) = [v for v in tfvars(eks_profile(name)) if v.name == "enable_cluster_addons"]
    assert addons.value["amazon-cloudwatch-observability"] is eks_profile(name).eks.cloudwatch
    differs = sorted(k for k, v in addons.value.items() if default.get(k) != v)
    assert sorted(k for k in addons.value if f"{k} = " in addons.comment) == differs
    assert bundle(name)["README.md"].count("amazon-cloudwatch-observability") == 1


def test_cloudwatch_on_adds_the_add_on_and_says_what_it_costs() -> None:
    text = all_profiles()["eks-jark"].replace("  metricsPipeline:", "  cloudwatch: true\n  metricsPipeline:")
    prof = parse_profile(text)
    assert isinstance(prof, EksProfile) and prof.eks.cloudwatch
    (addons,) = [v for v in tfvars(prof) if v.name == "enable_cluster_addons"]
    assert addons.value["amazon-cloudwatch-observability"] is True
    readme = {r.path: r.text for r in build(prof)}["README.md"]
    assert "`eks.cloudwatch: true` turns on the `amazon-cloudwatch-observability` EKS add-on" in readme
    assert "collected twice" in readme and "CloudWatch bills" in readme


def test_profile_accepts_declared_variables() -> None:
    prof = parse_profile(_with_vars("enable_mlflow_tracking: true\nsecondary_cidr_blocks: [100.64.0.0/16]"))
    assert prof.eks is not None
    assert prof.eks.terraform_variables == {"enable_mlflow_tracking": True, "secondary_cidr_blocks": ("100.64.0.0/16",)}


def test_hcl2_rejects_a_broken_tfvars() -> None:
    import hcl2

    broken = bundle("eks-jark")["terraform/blueprint.tfvars"].replace('name = "jark-stack"', 'name = "jark-stack')
    with pytest.raises(Exception, match=r"(?i)unexpected|token|expected"):
        hcl2.loads(broken)


def _terraform_dir(tmp: Path) -> tuple[str, Path]:
    """A root module declaring exactly ai-on-eks's variables (types and validation rules), nothing else."""
    terraform = shutil.which("terraform")
    if terraform is None:
        # Optional (tooling.md): CI installs no terraform; python-hcl2 and the declared-type checks above always run.
        pytest.skip("terraform is not installed (optional real-tool check of blueprint.tfvars)")
    upstream = json.loads(shared("upstream/ai-on-eks/base-terraform-variables.json").read_text())["variables"]
    rules = {
        "availability_zones_count": "var.availability_zones_count >= 2 && var.availability_zones_count <= 4",
        "ami_family": 'contains(["bottlerocket", "al2023"], var.ami_family)',
    }
    blocks = []
    for name, var in sorted(upstream.items()):
        check = ""
        if name in rules:
            check = f'  validation {{\n    condition     = {rules[name]}\n    error_message = "invalid"\n  }}\n'
        default = json.dumps(var["default"])  # JSON is valid HCL for these defaults ({"k": v} object syntax too)
        blocks.append(f'variable "{name}" {{\n  type    = {var["type"]}\n  default = {default}\n{check}}}\n')
    (tmp / "variables.tf").write_text("\n".join(blocks), encoding="utf-8")
    return terraform, tmp


def _terraform_plan(tfvars: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    terraform, root = _terraform_dir(tmp)
    (root / "blueprint.tfvars").write_text(tfvars, encoding="utf-8")
    env = {**os.environ, "TF_CLI_CONFIG_FILE": "/dev/null", "CHECKPOINT_DISABLE": "1", "TF_IN_AUTOMATION": "1"}
    run = functools.partial(subprocess.run, cwd=root, capture_output=True, text=True, check=False, env=env)
    init = run([terraform, "init", "-input=false", "-no-color"])
    assert init.returncode == 0, init.stderr
    result: subprocess.CompletedProcess[str] = run(
        [terraform, "plan", "-input=false", "-no-color", "-var-file=blueprint.tfvars"]
    )
    return result


@pytest.mark.slow
@pytest.mark.parametrize("name", EKS_PROFILES)
def test_terraform_accepts_the_tfvars_without_warnings(name: str, tmp_path: Path) -> None:
    proc = _terraform_plan(bundle(name)["terraform/blueprint.tfvars"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stdout + proc.stderr  # e.g. "Value for undeclared variable"


@pytest.mark.slow
def test_terraform_rejects_a_mistyped_tfvars(tmp_path: Path) -> None:
    text = bundle("eks-jark")["terraform/blueprint.tfvars"] + '\navailability_zones_count = "three"\n'
    proc = _terraform_plan(text, tmp_path)
    assert proc.returncode != 0 and "a number is required" in proc.stderr
