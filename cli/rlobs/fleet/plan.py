"""Plan a fleet's bundle: each cluster's single-cluster bundle, plus what delivers the EKS clusters (ApplicationSets,
layered Helm values, the cluster Secrets' contract) and the fleet README."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rlobs.bundle import pool
from rlobs.bundle.check import Checker
from rlobs.bundle.render import make_env, render
from rlobs.bundle.spec import DataFile, FileSpec, Plan, Rendered, TemplateFile
from rlobs.errors import RlobsError
from rlobs.fleet import appsets, contract, gketf, layers
from rlobs.fleet.appsets import APPSETS_DIR, VALUES_DIR
from rlobs.profile.eksprofile import EksProfile
from rlobs.profile.fleet import Fleet, Member, terraform_projects
from rlobs.profile.kind import CLUSTERS_DIR
from rlobs.rl.catalog import load_catalog
from rlobs.targets import TARGETS
from rlobs.targets.eks import values as eks_values
from rlobs.targets.eks.versions import CHARTS

README = "README.md"
PROFILES_DIR = "profiles"
GKE_DIR = "gke"
CONTRACT_FILE = "terraform/rlobs-cluster-secrets.tf.json"
# What an EKS cluster's folder leaves out of its single bundle: the ApplicationSets replace its Argo CD apps, the
# layered values/ tree its values, the fleet README its README (which would tell you to apply the root app).
_REPLACED = ("argocd/", "values/", README)


@dataclass(frozen=True, slots=True)
class FleetBuild:
    """A fleet's files, and what the checks and the preview need to see besides them."""

    files: tuple[Rendered, ...]
    appsets: appsets.AppSets
    contracts: dict[str, contract.SecretMetadata]
    singles: dict[str, tuple[Rendered, ...]]  # cluster -> its single-cluster bundle


def _values_files(fleet: Fleet) -> list[FileSpec]:
    members = contract.eks_members(fleet)
    per_chart: dict[str, dict[str, layers.Values]] = {}
    for m in members:
        assert isinstance(m.profile, EksProfile)
        for chart, vals in eks_values.values(m.profile).items():
            per_chart.setdefault(chart, {})[m.name] = vals
    envs = {m.name: m.cluster.environment for m in members}
    files: list[FileSpec] = []
    for chart, by_cluster in sorted(per_chart.items()):
        split = layers.split(by_cluster, envs)
        header = f"Helm values for {chart} {CHARTS[chart].version}: layer %s (applicationsets/ read them via $values)."
        named = [("common", split.common)]
        named += [(f"env/{e}", v) for e, v in split.env.items()]
        named += [(f"clusters/{c}", v) for c, v in split.clusters.items()]
        files += [
            DataFile(
                f"{VALUES_DIR}/{layer}/{chart}.yaml",
                "yaml",
                data,
                "Layered Helm values: common, then env/<environment>, then clusters/<name> (missing layers skipped).",
                header=header % layer,
            )
            for layer, data in named
            if data
        ]
    return files


def _replaced(member: Member) -> tuple[str, ...]:
    if member.cluster.target == "eks":
        return _REPLACED
    # A gke.manage: terraform cluster's project set-up is its project's Terraform root (gke/<project>/terraform/).
    gke = getattr(member.profile, "gke", None)
    return ("terraform/",) if gke is not None and gke.manage == "terraform" else ()


def _singles(members: tuple[Member, ...], checker: Checker | None) -> dict[str, tuple[Rendered, ...]]:
    """Each cluster's single-cluster bundle, by cluster name, in the fleet's order."""
    catalog = load_catalog()
    env = make_env()

    def single(index: int) -> tuple[Rendered, ...]:
        profile = members[index].profile
        files = render(TARGETS[profile.target].plan(profile, catalog), env)
        if checker is not None:
            pool.checker().check(files)
        return files

    if checker is None:
        return {m.name: single(i) for i, m in enumerate(members)}
    built: dict[int, tuple[Rendered, ...]] = {}
    with pool.run(single, len(members)) as results:
        for index, files in results:
            checker.remember(files)
            built[index] = files
    return {m.name: built[i] for i, m in enumerate(members)}


def _cluster_files(member: Member, single: tuple[Rendered, ...]) -> list[Rendered]:
    replaced = _replaced(member)
    keep = [r for r in single if not replaced or not r.path.startswith(replaced)]
    return [replace(r, path=f"{CLUSTERS_DIR}/{member.name}/{r.path}") for r in keep]


def build_fleet(fleet: Fleet, checker: Checker | None = None) -> FleetBuild:
    """Every file of the fleet bundle, rendered; raises when the referential check fails. With a `checker`, each
    cluster's files are planned, rendered and parse-checked in parallel (rlobs.bundle.pool), and the checker
    remembers them as checked; the fleet's own files are left to it."""
    singles = _singles(fleet.members, checker)
    sets = appsets.application_sets(fleet)
    contracts = contract.contract(fleet)
    problems = contract.referential_problems(
        {f"{APPSETS_DIR}/{c}.yaml": s for c, s in sets.sets.items()},
        {f"{APPSETS_DIR}/{c}.yaml": names for c, names in sets.selected.items()},
        contracts,
    )
    if problems:
        raise RlobsError("the cluster Secrets do not hold what the ApplicationSets read:\n  " + "\n  ".join(problems))
    specs: list[FileSpec] = [
        DataFile(
            f"{APPSETS_DIR}/{component}.yaml",
            "yaml",
            appset,
            "An ApplicationSet per component: one Application per EKS cluster whose Secret carries the labels.",
            header="Apply on the Argo CD hub: kubectl apply -n argocd -f applicationsets/",
        )
        for component, appset in sets.sets.items()
    ]
    if contracts:
        specs.append(
            DataFile(
                CONTRACT_FILE,
                "json",
                contract.terraform(fleet, contracts),
                "Terraform locals and output: each EKS cluster Secret's name, labels and annotations (no credentials).",
            )
        )
    specs += _values_files(fleet)
    specs += [
        DataFile(
            f"{PROFILES_DIR}/{m.name}.yaml",
            "yaml",
            m.data,
            "Each cluster's effective profile: `rlobs render` of it is that cluster's single-cluster bundle.",
            header=f"The effective profile of cluster {m.name} (fleet {fleet.name}); generated, edit the fleet file.",
        )
        for m in fleet.members
    ]
    specs += _project_scripts(fleet)
    specs += gketf.project_files(fleet, load_catalog())  # loaded once per process (rl.catalog)
    specs.append(_readme(fleet, sets, contracts, specs))
    files = list(render(Plan(fleet.name, tuple(specs))))
    for m in fleet.members:
        files += _cluster_files(m, singles[m.name])
    return FleetBuild(tuple(sorted(files, key=lambda r: r.path)), sets, contracts, singles)


def gke_projects(fleet: Fleet) -> dict[str, list[str]]:
    """project -> its GKE clusters whose project set-up the numbered scripts own (gke.manage: scripts)."""
    found: dict[str, list[str]] = {}
    for m in fleet.members:
        gke = getattr(m.profile, "gke", None)
        if gke is not None and gke.manage == "scripts":
            found.setdefault(gke.project, []).append(m.name)
    return found


def _project_scripts(fleet: Fleet) -> list[FileSpec]:
    return [
        TemplateFile(
            f"{GKE_DIR}/{project}/setup.sh",
            "sh",
            "fleet/gke-setup.sh.j2",
            "Per GCP project: runs each of its GKE clusters' scripts/setup.sh in turn (each step safe to rerun).",
            {"fleet": fleet.name, "project": project, "clusters": clusters},
            executable=True,
        )
        for project, clusters in sorted(gke_projects(fleet).items())
    ]


def _folder(path: str) -> str:
    """The README's name for where a fleet file lies: its top folder, or under gke/ its path in any project."""
    head, _, rest = path.partition("/")
    if head == GKE_DIR:
        project, _, inner = rest.partition("/")
        return f"{GKE_DIR}/<project>/{inner.replace(project, '<project>')}"
    return head + "/"


def _readme(
    fleet: Fleet, sets: appsets.AppSets, contracts: dict[str, contract.SecretMetadata], specs: list[FileSpec]
) -> TemplateFile:
    tables = sorted({(_folder(f.path), f.description) for f in specs})
    refs = {r for component, s in sets.sets.items() for r in contract.references(component, s)}
    return TemplateFile(
        README,
        "md",
        "fleet/README.md.j2",
        "This file.",
        {
            "fleet": fleet,
            "members": fleet.members,
            "components": sets.selected,
            "contracts": contracts,
            "folders": tables,
            "contract_file": CONTRACT_FILE,
            "replaced": _REPLACED,
            "label_keys": sorted({r.key for r in refs if r.kind == "labels"}),
            "annotation_keys": sorted({r.key for r in refs if r.kind == "annotations"}),
            "extra_keys": sorted(
                {k for c in contracts.values() for k in [*c.labels, *c.annotations]} - {r.key for r in refs}
            ),
            "gke_projects": gke_projects(fleet),
            "terraform_projects": dict(sorted(terraform_projects(fleet.members).items())),
            "hub": fleet.spec.views.grafana.hub if fleet.spec.views.grafana else "",
            "remote": _remote(fleet),
        },
    )


def _remote(fleet: Fleet) -> list[dict[str, str]]:
    """The hub's remote Prometheus datasources, for the README."""
    hub = next(
        (m.profile for m in fleet.members if fleet.spec.views.grafana and m.name == fleet.spec.views.grafana.hub), None
    )
    if not isinstance(hub, EksProfile):
        return []
    found = []
    for r in hub.eks.grafana.remote_prometheus:
        ref = r.bearer_token_secret or (r.basic_auth.password_secret if r.basic_auth else None)
        kind = (
            "bearer token"
            if r.bearer_token_secret
            else f"basic auth as `{r.basic_auth.username}`"
            if r.basic_auth
            else ""
        )
        auth = f"{kind}: Secret `{ref.name}`, key `{ref.key}`" if ref else "none"
        found.append({"name": r.name, "uid": eks_values.remote_uid(r.name), "url": r.url, "auth": auth})
    return found
