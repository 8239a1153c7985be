"""The fleet's EKS clusters through Argo CD ApplicationSets: one per component of the single-cluster bundle."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from rlobs.bundle import appsets as contract
from rlobs.errors import RlobsError
from rlobs.profile.fleet import Fleet, Member
from rlobs.profile.fleetspec import FleetSpec, bundle_path
from rlobs.rl.labels import BUNDLE_LABEL, bundle_metadata
from rlobs.targets.eks import argocd
from rlobs.targets.eks.contract import STACK, members
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.eks.stack import ARGOCD

VALUES_DIR = "values"
APPSETS_DIR = "applicationsets"
# Components that exist only where rlobs deploys the stack (eks.mode: rlobs).
STACK_COMPONENTS = ("kube-prometheus-stack", "opensearch-operator", "fluent-operator", "stack-config")


def _go(kind: str, key: str) -> str:
    # `index`, since these keys hold '/' and '.'. The controller's index of a missing key is "" even with
    # missingkey=error (text/template returns the zero value of the Secret's map[string]string), so a Secret without
    # the key would sync HEAD or a path without a cluster: Sprig's `fail` stops the template instead (`or` stops at
    # the first non-empty argument, so it runs only then). Argo CD has Sprig's functions, not Helm's `required`.
    refusal = f'(fail "expected the cluster Secret to carry {kind.removesuffix("s")} {key}")'
    return f'{{{{ or (index .metadata.{kind} "{key}") {refusal} }}}}'


@dataclass(frozen=True, slots=True)
class Bindings:
    """What differs per cluster: Go template expressions (the template) or one cluster's values (the Application the
    controller creates for it, which the preview proves equal to the single-cluster render's)."""

    cluster: str
    environment: str
    revision: str
    destination: str  # the Argo CD cluster name the Application deploys to


GO = Bindings(
    cluster=_go("annotations", contract.CLUSTER),
    environment=_go("annotations", contract.ENVIRONMENT),
    revision=_go("annotations", contract.REVISION),
    destination="{{ .name }}",
)


def bindings(member: Member) -> Bindings:
    c = member.cluster
    assert isinstance(member.profile, EksProfile)
    return Bindings(c.name, c.environment, member.profile.eks.gitops.target_revision, c.name)


def fleet_application(
    spec: FleetSpec, component: str, app: dict[str, Any], single_path: str, b: Bindings
) -> dict[str, Any]:
    """The single-cluster Application `app` (whose bundle lies at `single_path`) as the fleet delivers it."""
    assert spec.gitops is not None
    root = spec.gitops.path
    out = copy.deepcopy(app)
    meta = out["metadata"]
    meta["name"] = f"{b.cluster}-{component}"
    meta["labels"] = {**meta["labels"], BUNDLE_LABEL: b.cluster}
    # With preserveResourcesOnDeletion the controller owns the finalizer: it adds resources-finalizer only when
    # resources are to be deleted with the Application (Argo CD docs, ApplicationSet "Application Deletion").
    meta.pop("finalizers", None)
    destination = out["spec"]["destination"]
    out["spec"]["destination"] = {"name": b.destination, "namespace": destination["namespace"]}
    for src in out["spec"].get("sources") or [out["spec"]["source"]]:
        if "chart" not in src:  # the GitOps repository: sync this cluster's revision
            src["targetRevision"] = b.revision
        if "path" in src:
            src["path"] = f"{root}/clusters/{b.cluster}{src['path'].removeprefix(single_path)}"
        helm = src.get("helm")
        if helm and "valueFiles" in helm:
            helm["valueFiles"] = [layer for f in helm["valueFiles"] for layer in _layered(root, single_path, f, b)]
            helm["ignoreMissingValueFiles"] = True  # a layer with nothing to say is not written
    return out


def _layered(root: str, single_path: str, value_file: str, b: Bindings) -> list[str]:
    chart_file = value_file.removeprefix(f"$values/{single_path}/{VALUES_DIR}/")
    return [
        f"$values/{root}/{VALUES_DIR}/common/{chart_file}",
        f"$values/{root}/{VALUES_DIR}/env/{b.environment}/{chart_file}",
        f"$values/{root}/{VALUES_DIR}/clusters/{b.cluster}/{chart_file}",
    ]


def single_applications(member: Member) -> dict[str, dict[str, Any]]:
    assert isinstance(member.profile, EksProfile)
    return {f.removesuffix(".yaml"): app for f, app in argocd.applications(member.profile).items()}


def _selector(component: str) -> dict[str, Any]:
    labels = {contract.ENABLED: "true", contract.TARGET: "eks"}
    if component in STACK_COMPONENTS:
        labels[STACK] = "rlobs"
    # Only cluster Secrets carrying the fleet's cluster label, never one naming Argo CD's own cluster: the hub's
    # `in-cluster` has no labels unless a Secret registers it, and the fleet never names a cluster in-cluster.
    expressions = [
        {"key": contract.CLUSTER, "operator": "Exists"},
        {"key": contract.CLUSTER, "operator": "NotIn", "values": ["in-cluster"]},
    ]
    return {"matchLabels": labels, "matchExpressions": expressions}


def application_set(fleet: Fleet, component: str, template: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": bundle_metadata(f"rlobs-{fleet.name}-{component}", ARGOCD, fleet.name),
        "spec": {
            "goTemplate": True,
            # One bad element then fails the whole set instead of rendering "<no value>" (argo-cd#16832): the
            # referential check makes sure no cluster is that element.
            "goTemplateOptions": ["missingkey=error"],
            "generators": [{"clusters": {"selector": _selector(component)}}],
            "syncPolicy": {
                # A failed cluster Secret listing must not take the stack with it (argo-cd#18480).
                "preserveResourcesOnDeletion": True,
                # Honoured only with the controller's policy override enabled (README).
                "applicationsSync": "create-update",
            },
            "template": template,
        },
    }


Sets = dict[str, dict[str, Any]]  # component -> its ApplicationSet
Selected = dict[str, list[str]]  # component -> the clusters its selector matches


def application_sets(fleet: Fleet) -> tuple[Sets, Selected]:
    """One ApplicationSet per component; raises when a cluster's Application does not fit the shared template."""
    singles = {m.name: single_applications(m) for m, _ in members(fleet)}
    components = sorted({c for apps in singles.values() for c in apps})
    sets, selected = {}, {}
    for component in components:
        users = [name for name, apps in singles.items() if component in apps]
        for name in users:
            _refuse_template_text(component, name, singles[name][component])
        templates = {
            name: fleet_application(fleet.spec, component, singles[name][component], bundle_path(fleet.spec, name), GO)
            for name in users
        }
        first = next(iter(templates.values()))
        odd = [name for name, t in templates.items() if t != first]
        if odd:
            raise RlobsError(
                f"component {component}: the Applications of clusters {', '.join(odd)} differ from "
                f"{users[0]}'s beyond what the cluster Secret binds; expected one template for the fleet"
            )
        # The template is an Application's metadata and spec; the controller supplies apiVersion and kind.
        sets[component] = application_set(fleet, component, {k: first[k] for k in ("metadata", "spec")})
        selected[component] = users
    return sets, selected


def _refuse_template_text(component: str, cluster: str, app: dict[str, Any]) -> None:
    """The controller runs every string of the template: a profile value holding `{{` would run as Go template code."""
    found = sorted({text for text in contract.strings(app) if "{{" in text or "}}" in text})
    if found:
        raise RlobsError(
            f"cluster {cluster}, component {component}: expected no '{{{{' or '}}}}' in values the ApplicationSet "
            f"template carries (the controller would run them as Go templates), got {found[0]!r}"
        )
