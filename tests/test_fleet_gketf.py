"""A project's Terraform root for the fleet's gke.manage: terraform clusters: resources iterate (for_each) over the
clusters, and each instance, with each.key / each.value and the variables substituted, is the resource the
cluster's single-cluster render creates with its own variables substituted."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rlobs.fleet.paths import producible
from rlobs.fleet.plan import build_fleet
from rlobs.targets.gke import fleettf as gketf
from rlobs.targets.gke import tfpolicy
from testing.fleet_gke import terraform_fleet
from testing.gketf import SCHEMA
from testing.helpers import module, preinstalled_tool
from testing.promql import shape

ROOT = gketf.root("rl-prod-project")
GKE_CLUSTERS = {"dev-gke", "prod-gke"}
KSA = "\n    workloadIdentity: {kubernetesServiceAccount: rl-trainer}"
GSA = (
    "\n    workloadIdentity: {kubernetesServiceAccount: rl-trainer,"
    " gcpServiceAccount: rl-writer@rl-prod-project.iam.gserviceaccount.com}"
)
# (identity, clusterMode): every shape of the Terraform the single-cluster render has.
VARIANTS = {
    "namespace-standard": ("", "create-standard"),
    "ksa-autopilot": (KSA, "create-autopilot"),
    "gsa-existing": (GSA, "existing"),
    "gsa-standard": (GSA, "create-standard"),
}


def _build(variant: str, dashboards: str = "per-cluster") -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    identity, mode = VARIANTS[variant]
    b = build_fleet(terraform_fleet(identity=identity, mode=mode, dashboards=dashboards))
    singles = {c: {r.path: r.text for r in files} for c, files in b.singles.items() if c in GKE_CLUSTERS}
    return {r.path: r.text for r in b.files}, singles


def _hcl(text: str) -> dict[str, Any]:
    module("hcl2", "parses the rendered Terraform")
    import hcl2

    return hcl2.loads(text, serialization_options=hcl2.SerializationOptions(strip_string_quotes=True))  # type: ignore[no-any-return]


def _clean(value: Any) -> Any:
    """python-hcl2's output without its markers (comments, block flags)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in ("__comments__", "__is_block__")}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _resources(text: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (kind, name): _clean(body)
        for block in _hcl(text)["resource"]
        for kind, named in block.items()
        for name, body in named.items()
    }


def _locals(text: str) -> dict[str, str]:
    return {k: v for block in _hcl(text).get("locals", []) for k, v in _clean(block).items()}


_REF = re.compile(r"\b(each|var|local)\.")


def _resolve(text: str, env: dict[str, Any]) -> str:
    """`text` with every reference to each/var/local replaced by its value (a quoted literal for a string), as far
    as env holds it; index expressions are resolved first; `${"x"}` folded into x."""
    out, i = [], 0
    while (m := _REF.search(text, i)) is not None:
        out.append(text[i : m.start()])
        value: Any = env[m.group(1)]
        j = m.end()
        while True:
            name = re.match(r"[A-Za-z_][\w-]*", text[j:])
            if isinstance(value, dict) and text[j - 1] == "." and name and name.group(0) in value:
                value, j = value[name.group(0)], j + name.end()
            elif isinstance(value, dict) and text[j:].startswith("["):
                end = text.index("]", j)
                key = json.loads(_resolve(text[j + 1 : end], env))
                value, j = value[key], end + 1
            else:
                break
            if j < len(text) and text[j] == ".":
                j += 1
        if text[j - 1] == "." and not isinstance(value, dict):
            j -= 1
        out.append(json.dumps(value) if not isinstance(value, dict) else m.group(0) + "?")
        i = j
    out.append(text[i:])
    return re.sub(r'\$\{"([^"$]*)"\}', r"\1", "".join(out))


def _subst(value: Any, env: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return {k: _subst(v, env) for k, v in value.items() if k != "for_each"}
    if isinstance(value, list):
        return [_subst(v, env) for v in value]
    if isinstance(value, str):
        text = _resolve(value, env)
        whole = re.fullmatch(r"\$\{(true|false|\"[^\"]*\")\}", text)
        return json.loads(whole.group(1)) if whole else text
    return value


def _single_env(files: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    variables = _clean(_hcl(files["terraform/terraform.tfvars"]))
    local = {
        k: v.removeprefix("${").removesuffix("}") if v.count("${") == 1 and v.startswith("${") else v
        for k, v in _locals(files["terraform/main.tf"]).items()
    }
    return {"var": variables, "local": {}}, local


def _inline_locals(body: Any, local: dict[str, str]) -> Any:
    text = json.dumps(body)
    for name, expr in local.items():
        # a whole-string local becomes its value; a local inside an expression its expression
        text = text.replace(
            f'"${{local.{name}}}"',
            json.dumps(expr if not expr.startswith(("split", "trimsuffix")) else "${" + expr + "}"),
        )
        text = text.replace(f"local.{name}", expr.replace('"', '\\"'))
    return json.loads(text)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_instance_equals_the_single_cluster_resource(variant: str) -> None:
    fleet_files, singles = _build(variant)
    main = _resources(fleet_files[f"{ROOT}/main.tf"])
    tfvars = json.loads(fleet_files[f"{ROOT}/terraform.tfvars.json"])
    fleet_env: dict[str, Any] = {"var": tfvars, "local": {}}
    compared: set[str] = set()
    for cluster, files in singles.items():
        assert not [p for p in fleet_files if p.startswith(f"clusters/{cluster}/terraform/")]
        single = _resources(files["terraform/main.tf"])
        env, local = _single_env(files)
        gsa = env["var"].get("gcp_service_account")
        for (kind, name), body in single.items():
            body = _inline_locals(body, local)
            if gsa:  # the single resource's one instance is the fleet's instance keyed by the GSA
                body = json.loads(
                    json.dumps(body).replace(
                        "google_service_account.workload.", f'google_service_account.workload[\\"{gsa}\\"].'
                    )
                )
            fleet_body = main[(kind, name)]
            if kind == "google_monitoring_dashboard":
                # The same file: the cluster's own dashboard, read from its folder.
                path = os.path.normpath(f"{ROOT}/{tfvars['clusters'][cluster]['dashboard']}")
                assert fleet_files[path] == files[f"monitoring/dashboards/{cluster}.json"]
                compared.add(kind)
                continue
            instances = _instances(kind, fleet_body, tfvars, cluster, env["var"])
            if body.get("for_each") == "${toset(var.writer_roles)}" or body.get("for_each") == "${toset(var.services)}":
                values = env["var"]["writer_roles" if "writer_roles" in body["for_each"] else "services"]
                expected = {v: _subst(body, {**env, "each": {"key": v, "value": v}}) for v in values}
            else:
                assert "for_each" not in body and len(instances) == 1, (kind, name)
                expected = {next(iter(instances)): _subst(body, env)}
            got = {k: _subst(fleet_body, {**fleet_env, "each": {"key": k, "value": v}}) for k, v in instances.items()}
            if kind == "google_service_account" and len(tfvars["service_accounts"][gsa]["display_name"].split(",")) > 1:
                for b in (*expected.values(), *got.values()):
                    b.pop("display_name")
            assert got == expected, (cluster, kind, name)
            compared.add(kind)
    assert {"google_project_service", "google_project_iam_member", "google_monitoring_dashboard"} <= compared


def _instances(
    kind: str, fleet_body: dict[str, Any], tfvars: dict[str, Any], cluster: str, single_vars: dict[str, Any]
) -> dict[str, Any]:
    """The fleet resource's instances that stand for the cluster's single resource."""
    if kind == "google_project_service":
        return {s: s for s in tfvars["services"] if s in single_vars["services"]}
    each = fleet_body["for_each"].removeprefix("${var.").removesuffix("}")
    principal = single_vars["namespace"] + (
        f"/{single_vars['kubernetes_service_account']}" if "kubernetes_service_account" in single_vars else ""
    )
    holder = single_vars.get("gcp_service_account", principal)
    mine = {"clusters": cluster, "workloads": principal, "service_accounts": holder}
    if each == "writers":
        return {
            r["role"]: r
            for r in tfvars["writers"].values()
            if r["workload"] == holder and r["role"] in single_vars["writer_roles"]
        }
    return {mine[each]: tfvars[each][mine[each]]}


def test_the_alert_policy_instances_equal_the_single_cluster_policies() -> None:
    fleet_files, singles = _build("namespace-standard")
    data = json.loads(fleet_files[f"{ROOT}/alert_policies.tf.json"])
    resources = data["resource"][tfpolicy.RESOURCE]
    assert resources and all(r["for_each"] == f"${{local.{gketf.LOCALS}.{n}}}" for n, r in resources.items())
    for cluster, files in singles.items():
        single = json.loads(files[tfpolicy.FILE])["resource"][tfpolicy.RESOURCE]
        assert set(single) == set(resources)
        for name, body in resources.items():
            got = _expand(body, {"each": {"key": cluster, "value": data["locals"][gketf.LOCALS][name][cluster]}})
            got["documentation"] = {k: v for k, v in got["documentation"].items() if v != []}
            assert got == {k: v for k, v in single[name].items()}, (cluster, name)


def _expand(value: Any, env: dict[str, Any]) -> Any:
    """The resource as Terraform expands it for one instance: references read, dynamic blocks unrolled."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, sub in value.items():
            if key == "for_each":
                continue
            if key == "dynamic":
                for block, spec in sub.items():
                    items = _expand(spec["for_each"], env)
                    out[block] = [_expand(spec["content"], {**env, block: {"value": item}}) for item in items]
                continue
            out[key] = _expand(sub, env)
        return out
    if isinstance(value, list):
        return [_expand(v, env) for v in value]
    if isinstance(value, str) and (m := re.fullmatch(r"\$\{([\w.-]+)\}", value)) and m.group(1).split(".")[0] in env:
        found: Any = env
        for part in m.group(1).split("."):
            found = found[part]
        return found
    return value


def _arguments(body: Any, path: str = "") -> list[str]:
    """Every argument path outside string maps, dynamic blocks read as the blocks they make."""
    out = []
    for key, sub in body.items():
        if key in ("for_each", "dynamic"):
            for block, spec in sub.items() if key == "dynamic" else ():
                out.append(f"{path}.{block}".lstrip("."))
                out += _arguments(spec["content"], f"{path}.{block}".lstrip("."))
            continue
        here = f"{path}.{key}".lstrip(".")
        out.append(here)
        if isinstance(sub, dict) and key not in ("user_labels", "labels"):
            out += _arguments(sub, here)
    return out


def test_the_alert_policies_use_only_provider_arguments() -> None:
    fleet_files, _ = _build("namespace-standard")
    for body in json.loads(fleet_files[f"{ROOT}/alert_policies.tf.json"])["resource"][tfpolicy.RESOURCE].values():
        for path in _arguments(body):
            parent, _, leaf = path.rpartition(".")
            assert leaf in SCHEMA[parent], path


def test_one_principal_is_bound_once_for_the_clusters_that_share_it() -> None:
    fleet_files, singles = _build("namespace-standard")
    tfvars = json.loads(fleet_files[f"{ROOT}/terraform.tfvars.json"])
    assert set(tfvars["clusters"]) == set(singles) == {"dev-gke", "prod-gke"}
    # both clusters run in namespace rl of one project: one principal set, one binding per role
    assert list(tfvars["workloads"]) == ["rl"]
    assert sorted(w["role"] for w in tfvars["writers"].values()) == sorted(
        set(w["role"] for w in tfvars["writers"].values())
    )


def test_the_root_replaces_the_clusters_own_terraform_and_is_producible() -> None:
    fleet_files, _ = _build("namespace-standard")
    assert not [p for p in fleet_files if p.startswith(("clusters/dev-gke/terraform/", "clusters/prod-gke/terraform/"))]
    ours = [p for p in fleet_files if p.startswith("gke/")]
    assert {
        f"{ROOT}/main.tf",
        f"{ROOT}/variables.tf",
        f"{ROOT}/terraform.tfvars.json",
        f"{ROOT}/alert_policies.tf.json",
    } <= set(ours)
    assert all(producible(p) for p in ours)


def test_variables_are_declared_used_and_set() -> None:
    for variant in VARIANTS:
        fleet_files, _ = _build(variant)
        declared = {n for block in _hcl(fleet_files[f"{ROOT}/variables.tf"])["variable"] for n in block}
        text = fleet_files[f"{ROOT}/main.tf"] + fleet_files[f"{ROOT}/alert_policies.tf.json"]
        assert (
            declared
            == set(re.findall(r"\bvar\.(\w+)", text))
            == set(json.loads(fleet_files[f"{ROOT}/terraform.tfvars.json"]))
        ), variant


def tiles(board: dict[str, Any]) -> list[dict[str, Any]]:
    return [t["widget"] for t in board["mosaicLayout"]["tiles"] if "xyChart" in t["widget"]]


def test_per_project_is_one_dashboard_with_a_cluster_filter() -> None:
    fleet_files, singles = _build("namespace-standard", dashboards="per-project")
    board = json.loads(fleet_files[f"gke/rl-prod-project/{gketf.dashboard_path('rl-prod-project')}"])
    assert board["dashboardFilters"][0] == {"filterType": "METRIC_LABEL", "labelKey": "cluster"}
    own = json.loads(singles["dev-gke"]["monitoring/dashboards/dev-gke.json"])
    assert board["dashboardFilters"][1:] == own["dashboardFilters"]
    assert [t["title"] for t in tiles(board)] == [t["title"] for t in tiles(own)]
    # Every query reads the project's clusters (the `cluster` filter picks one) and keeps the label for the filter.
    queries = [d["timeSeriesQuery"]["prometheusQuery"] for t in tiles(board) for d in t["xyChart"]["dataSets"]]
    assert queries
    for q in queries:
        selectors, groupings = shape(q)
        assert all(set(s["cluster"].removeprefix("=~").split("|")) == GKE_CLUSTERS for s in selectors), q
        assert all("cluster" in labels for labels in groupings), q
    main = _resources(fleet_files[f"{ROOT}/main.tf"])
    assert ("google_monitoring_dashboard", "project") in main and ("google_monitoring_dashboard", "rl") not in main
    assert "dashboard" not in json.dumps(json.loads(fleet_files[f"{ROOT}/terraform.tfvars.json"]).get("clusters", {}))


def test_the_project_dashboard_parses_as_monitoring_v1() -> None:
    module("google.cloud.monitoring_dashboard_v1", "parses the dashboards with Google's client library")
    from google.cloud.monitoring_dashboard_v1 import Dashboard

    fleet_files, _ = _build("namespace-standard", dashboards="per-project")
    text = fleet_files[f"gke/rl-prod-project/{gketf.dashboard_path('rl-prod-project')}"]
    parsed = Dashboard.from_json(text)  # unknown fields raise
    assert parsed.display_name == "RL golden signals (rl-fleet, rl-prod-project)"
    assert parsed.dashboard_filters[0].label_key == "cluster"


def test_per_project_needs_a_terraform_managed_cluster() -> None:
    from rlobs.errors import ProfileError
    from rlobs.fleet.commands import parse_fleet
    from testing.fleet import example_text

    text = example_text().replace("views:\n", "views:\n  gkeDashboards: per-project\n")
    with pytest.raises(ProfileError) as exc:
        parse_fleet(text, "fleet.yaml")
    (line,) = exc.value.lines()
    assert "views.gkeDashboards: expected per-cluster: no gke cluster has gke.manage: terraform" in line


def _fmt(terraform: str, root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TF_CLI_CONFIG_FILE": os.devnull}
    cmd = [terraform, "fmt", "-check", "-diff", "-recursive", str(root)]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, timeout=60)


@pytest.mark.slow
def test_terraform_fmt_accepts_every_project_root(tmp_path: Path) -> None:
    terraform = preinstalled_tool("terraform", "runs terraform fmt -check on the fleet's Terraform roots")
    for variant in VARIANTS:
        fleet_files, _ = _build(variant)
        for path, text in fleet_files.items():
            if path.startswith("gke/") and path.endswith((".tf", ".tf.json")):
                out = tmp_path / variant / path
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(text, encoding="utf-8")
    proc = _fmt(terraform, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
