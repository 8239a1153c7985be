"""What the eks target adds to a fleet bundle: ApplicationSets, layered Helm values, the Secrets' contract, README."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlobs.bundle import appsets as contract
from rlobs.bundle.fleetpart import FleetPart, ReadmeSection
from rlobs.bundle.spec import DataFile, FileSpec
from rlobs.targets.eks import layers
from rlobs.targets.eks import values as eks_values
from rlobs.targets.eks.appsets import APPSETS_DIR, VALUES_DIR, Selected, Sets, application_sets
from rlobs.targets.eks.contract import RULES, members, terraform
from rlobs.targets.eks.contract import contract as eks_contract
from rlobs.targets.eks.fleetspec import hub
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.eks.versions import CHARTS

if TYPE_CHECKING:
    from rlobs.profile.fleet import Fleet
    from rlobs.rl.catalog import Catalog

README = "README.md"
CONTRACT_FILE = "terraform/rlobs-cluster-secrets.tf.json"
# What an EKS cluster's folder leaves out of its single bundle: the ApplicationSets replace its Argo CD apps, the
# layered values/ tree its values, the fleet README its README (which would tell you to apply the root app).
REPLACED = ("argocd/", "values/", README)


def fleet_part(fleet: Fleet, catalog: Catalog) -> FleetPart:
    del catalog  # the ApplicationSets and values hold no RL query
    found = members(fleet)
    sets, selected = application_sets(fleet)
    contracts = eks_contract(fleet)
    files: list[FileSpec] = [
        DataFile(
            f"{APPSETS_DIR}/{component}.yaml",
            "yaml",
            appset,
            "An ApplicationSet per component: one Application per EKS cluster whose Secret carries the labels.",
            header="Apply on the Argo CD hub: kubectl apply -n argocd -f applicationsets/",
        )
        for component, appset in sets.items()
    ]
    if contracts:
        files.append(
            DataFile(
                CONTRACT_FILE,
                "json",
                terraform(fleet, contracts),
                "Terraform locals and output: each EKS cluster Secret's name, labels and annotations (no credentials).",
            )
        )
    files += _values_files(fleet)
    return FleetPart(
        files=tuple(files),
        appsets={f"{APPSETS_DIR}/{c}.yaml": s for c, s in sets.items()},
        selected={f"{APPSETS_DIR}/{c}.yaml": names for c, names in selected.items()},
        contracts=contracts,
        rules=RULES,
        replaced={m.name: REPLACED for m, _ in found},
        details={m.name: p.eks.gitops.target_revision for m, p in found},
        gitops_note="the ApplicationSets read it from there, each EKS cluster at the revision its cluster Secret "
        "names.",
        folder_note="EKS clusters leave out "
        + ", ".join(f"`{r}`" for r in REPLACED)
        + ": the ApplicationSets, the layered values and this README replace them.",
        readme=ReadmeSection("eks/fleet-readme.md.j2", _readme(fleet, sets, selected, contracts)),
    )


def _values_files(fleet: Fleet) -> list[FileSpec]:
    found = members(fleet)
    per_chart: dict[str, dict[str, layers.Values]] = {}
    for m, p in found:
        for chart, vals in eks_values.values(p).items():
            per_chart.setdefault(chart, {})[m.name] = vals
    envs = {m.name: m.cluster.environment for m, _ in found}
    files: list[FileSpec] = []
    for chart, by_cluster in sorted(per_chart.items()):
        header = f"Helm values for {chart} {CHARTS[chart].version}: layer %s (applicationsets/ read them via $values)."
        files += [
            DataFile(
                f"{VALUES_DIR}/{layer}/{chart}.yaml",
                "yaml",
                data,
                "Layered Helm values: common, then env/<environment>, then clusters/<name> (missing layers skipped).",
                header=header % layer,
            )
            for layer, data in layers.split(by_cluster, envs).items()
            if data
        ]
    return files


def _readme(
    fleet: Fleet, sets: Sets, selected: Selected, contracts: dict[str, contract.SecretMetadata]
) -> dict[str, object]:
    refs = {r for component, s in sets.items() for r in contract.references(component, s)}
    return {
        "components": selected,
        "contracts": contracts,
        "contract_file": CONTRACT_FILE,
        "label_keys": sorted({r.key for r in refs if r.kind == "labels"}),
        "annotation_keys": sorted({r.key for r in refs if r.kind == "annotations"}),
        "extra_keys": sorted(
            {k for c in contracts.values() for k in [*c.labels, *c.annotations]} - {r.key for r in refs}
        ),
        "hub": hub(fleet.spec) or "",
        "remote": _remote(fleet),
    }


def _remote(fleet: Fleet) -> list[dict[str, str]]:
    name = hub(fleet.spec)
    found = next((m.profile for m in fleet.members if name and m.name == name), None)
    if not isinstance(found, EksProfile):
        return []
    rows = []
    for r in found.eks.grafana.remote_prometheus:
        kind, ref = "bearer token", r.bearer_token_secret
        if r.basic_auth is not None:  # never both (PrometheusEndpoint._one_auth)
            kind, ref = f"basic auth as `{r.basic_auth.username}`", r.basic_auth.password_secret
        auth = f"{kind}: Secret `{ref.name}`, key `{ref.key}`" if ref else "none"
        rows.append({"name": r.name, "uid": eks_values.remote_uid(r.name), "url": r.url, "auth": auth})
    return rows
