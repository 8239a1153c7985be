"""The fleet's ApplicationSets: valid against both ApplicationSet CRDs (strict), goTemplate with missingkey=error,
selected by the cluster Secrets' labels, pinned, preserving resources; the contract and its referential check; the
values layers."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
import yaml

from rlobs.bundle import appsets as contract
from rlobs.errors import RlobsError
from rlobs.fleet.commands import parse_fleet
from rlobs.fleet.plan import build_fleet
from rlobs.targets.eks import contract as eks_contract
from rlobs.targets.eks import layers
from rlobs.targets.eks.appsets import STACK_COMPONENTS, application_sets
from rlobs.targets.eks.versions import CHARTS
from testing.crdschema import errors
from testing.eks import schema
from testing.fleet import example, example_build, example_text
from testing.helpers import module

CRDS = ["argo-cd/applicationset-crd.v3.0.6.yaml", "argo-cd/applicationset-crd.latest.yaml"]


def _files() -> dict[str, str]:
    return {r.path: r.text for r in example_build().files}


def _appsets() -> dict[str, Any]:
    return {p: yaml.safe_load(t) for p, t in _files().items() if p.startswith("applicationsets/")}


@pytest.mark.parametrize("crd", CRDS)
def test_application_sets_match_the_crds_strictly(crd: str) -> None:
    module("jsonschema", "validates ApplicationSets against the Argo CD CRD")
    sets = _appsets()
    assert len(sets) == 6
    for path, appset in sets.items():
        assert errors(schema(crd), appset) == [], path


def test_the_crd_check_rejects_a_broken_application_set() -> None:
    module("jsonschema", "validates ApplicationSets against the Argo CD CRD")
    appset = next(iter(_appsets().values()))
    typo = copy.deepcopy(appset)
    typo["spec"]["syncPolicy"]["preserveResourceOnDeletion"] = typo["spec"]["syncPolicy"].pop(
        "preserveResourcesOnDeletion"
    )
    assert any("preserveResourceOnDeletion" in e for e in errors(schema(CRDS[0]), typo))
    kind_in_template = copy.deepcopy(appset)
    kind_in_template["spec"]["template"]["kind"] = "Application"
    assert errors(schema(CRDS[0]), kind_in_template)


def test_every_application_set_is_safe_for_a_fleet() -> None:
    for path, appset in _appsets().items():
        spec = appset["spec"]
        assert spec["goTemplate"] is True and spec["goTemplateOptions"] == ["missingkey=error"], path
        assert spec["syncPolicy"] == {"preserveResourcesOnDeletion": True, "applicationsSync": "create-update"}
        (generator,) = spec["generators"]
        selector = generator["clusters"]["selector"]
        assert selector["matchLabels"][contract.ENABLED] == "true", path
        assert {"key": contract.CLUSTER, "operator": "NotIn", "values": ["in-cluster"]} in selector["matchExpressions"]
        stack = path.removeprefix("applicationsets/").removesuffix(".yaml") in STACK_COMPONENTS
        assert (selector["matchLabels"].get(eks_contract.STACK) == "rlobs") == stack, path
        # The controller owns the deletion finalizer when it preserves resources.
        assert "finalizers" not in spec["template"]["metadata"], path


def test_every_source_is_pinned() -> None:
    for path, appset in _appsets().items():
        tspec = appset["spec"]["template"]["spec"]
        for src in tspec.get("sources") or [tspec["source"]]:
            if "chart" in src:
                assert src["targetRevision"] == CHARTS[src["chart"]].version, path
            else:
                # The Secret's revision, and a failed template (never HEAD) where the Secret has none.
                assert src["targetRevision"] == (
                    '{{ or (index .metadata.annotations "rlobs.io/revision") '
                    '(fail "expected the cluster Secret to carry annotation rlobs.io/revision") }}'
                ), path
            if "helm" in src:
                assert src["helm"]["ignoreMissingValueFiles"] is True
                assert [
                    re.sub(r"\{\{.*?\}\}", "X", f).split("/values/")[1].rsplit("/", 1)[0]
                    for f in src["helm"]["valueFiles"]
                ] == ["common", "env/X", "clusters/X"]


def test_the_contract_is_terraform_locals_and_outputs_without_credentials() -> None:
    data = json.loads(_files()["terraform/rlobs-cluster-secrets.tf.json"])
    secrets = data["locals"]["rlobs_cluster_secrets"]
    assert sorted(secrets) == ["dev-use2", "prod-usw2-a", "prod-usw2-b"]  # EKS clusters only
    assert data["output"]["rlobs_cluster_secrets"]["value"] == "${local.rlobs_cluster_secrets}"
    prod = secrets["prod-usw2-b"]
    assert prod["name"] == "prod-usw2-b"
    assert prod["labels"][eks_contract.STACK] == "ai-on-eks"
    assert prod["annotations"][contract.REVISION] == "v1.4.0"
    assert set(prod) == {"name", "labels", "annotations"}  # never server, config or tokens
    for meta in secrets.values():
        assert all(len(v) <= 63 and "/" not in v and ":" not in v for v in meta["labels"].values())


def test_the_stack_application_sets_skip_clusters_whose_stack_comes_from_ai_on_eks() -> None:
    selected = example_build().selected
    assert selected["applicationsets/kube-prometheus-stack.yaml"] == ["dev-use2", "prod-usw2-a"]
    assert selected["applicationsets/rl-layer.yaml"] == ["dev-use2", "prod-usw2-a", "prod-usw2-b"]


def test_every_key_a_template_reads_is_in_every_selected_clusters_secret() -> None:
    built = example_build()
    sets, selected = built.appsets, built.selected
    assert contract.referential_problems(sets, selected, built.contracts, built.rules) == []
    refs = {(r.kind, r.key) for s in sets.items() for r in contract.references(*s)}
    assert ("annotations", contract.REVISION) in refs and ("labels", contract.ENABLED) in refs


def test_a_missing_or_invalid_annotation_names_the_cluster_the_key_and_the_template() -> None:
    built = example_build()
    sets, selected = built.appsets, built.selected
    broken = copy.deepcopy(built.contracts)
    del broken["prod-usw2-a"].annotations[contract.REVISION]
    broken["dev-use2"].labels[eks_contract.STACK] = "arn:aws:iam::1:role/x"
    problems = contract.referential_problems(sets, selected, broken, built.rules)
    assert "cluster prod-usw2-a: annotation rlobs.io/revision is missing (read by applicationsets/rl-layer.yaml)" in (
        problems
    )
    assert not any("prod-usw2-b" in p for p in problems)
    assert any(p.startswith("cluster dev-use2: label rlobs.io/stack is not a valid label value") for p in problems)


def test_validate_fails_when_a_template_reads_an_annotation_the_contract_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plant the fault: a contract without the revision annotation fails the build, naming cluster, key, template."""
    real = eks_contract.metadata

    def without_revision(member: Any, profile: Any) -> contract.SecretMetadata:
        meta = real(member, profile)
        if member.name == "dev-use2":
            del meta.annotations[contract.REVISION]
        return meta

    monkeypatch.setattr(eks_contract, "metadata", without_revision)
    with pytest.raises(RlobsError) as exc:
        build_fleet(example())
    assert (
        "cluster dev-use2: annotation rlobs.io/revision is missing (read by applicationsets/otel-collector.yaml)"
        in (str(exc.value))
    )


def test_clusters_that_cannot_share_a_template_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlobs.targets.eks import appsets

    real = appsets.single_applications

    def odd(member: Any) -> dict[str, Any]:
        apps = real(member)
        if member.name == "prod-usw2-a":
            apps["rl-layer"]["spec"]["project"] = "other"
        return apps

    monkeypatch.setattr(appsets, "single_applications", odd)
    with pytest.raises(RlobsError, match="component rl-layer: the Applications of clusters prod-usw2-a differ"):
        application_sets(example())


def test_values_layers_merge_back_to_each_clusters_values() -> None:
    values = {
        "a": {"x": 1, "y": {"k": [1, 2]}, "only": True},
        "b": {"x": 1, "y": {"k": [1, 2]}, "z": "b"},
        "c": {"x": 2, "y": {"k": [3]}, "empty": {}},
    }
    envs = {"a": "dev", "b": "dev", "c": "prod"}
    split = layers.split(values, envs)
    assert split["common"] == {"x": 1, "y": {"k": [1, 2]}} or split["common"] == {}
    for name, full in values.items():
        env, own = split[f"env/{envs[name]}"], split[f"clusters/{name}"]
        assert layers.merge(layers.merge(split["common"], env), own) == full
    assert split["env/dev"] == {"x": 1, "y": {"k": [1, 2]}}
    assert split["clusters/a"] == {"only": True}


def test_a_fleet_without_eks_clusters_has_no_application_sets() -> None:
    text = example_text()
    gke_only = text[: text.index("  - name: dev-use2")] + text[text.index("  - name: dev-gke") : text.index("views:")]
    built = build_fleet(parse_fleet(gke_only, "fleet.yaml"))
    paths = [r.path for r in built.files]
    assert not any(p.startswith(("applicationsets/", "values/", "terraform/")) for p in paths)
    assert "clusters/dev-gke/README.md" in paths


def test_values_that_would_run_as_go_templates_are_refused() -> None:
    from rlobs.errors import ProfileError
    from rlobs.targets.eks.appsets import _refuse_template_text

    # The profile's own rules already refuse template text in the values that reach an Application...
    text = example_text().replace("https://github.com/acme/gitops.git", "https://github.com/acme/{{.name}}.git")
    with pytest.raises(ProfileError, match=r"gitops\.repoUrl: expected a Git repository URL"):
        parse_fleet(text, "fleet.yaml")
    # ...and the fleet refuses any that would still get through, before the controller could execute it.
    app = {"spec": {"source": {"repoURL": "https://github.com/acme/{{.name}}.git"}}}
    with pytest.raises(RlobsError, match=r"cluster dev-use2, component rl-layer: expected no '\{\{' or '\}\}'"):
        _refuse_template_text("rl-layer", "dev-use2", app)


def _unbound(app: dict[str, Any]) -> dict[str, Any]:
    """An Application without what the fleet binds per cluster."""
    out = copy.deepcopy(app)
    out["metadata"].pop("name")
    out["metadata"].pop("finalizers", None)
    out["spec"].pop("destination")
    for src in out["spec"].get("sources") or [out["spec"]["source"]]:
        if "chart" not in src:
            src.pop("targetRevision")
        src.pop("path", None)
        if "helm" in src:
            src["helm"].pop("valueFiles")
            src["helm"].pop("ignoreMissingValueFiles", None)
    return out


def test_the_fleet_binds_only_name_destination_revision_paths_and_values() -> None:
    """Everything else of every cluster's Application is its single-cluster Application, unchanged: a regression
    in the binding that drops or alters anything else fails here."""
    from rlobs.profile.fleetspec import bundle_path
    from rlobs.targets.eks.appsets import bindings, fleet_application, single_applications

    fleet = example()
    checked = 0
    for member, _ in eks_contract.members(fleet):
        for component, single in single_applications(member).items():
            path = bundle_path(fleet.spec, member.name)
            bound = fleet_application(fleet.spec, component, single, path, bindings(member))
            assert _unbound(bound) == _unbound(single), (member.name, component)
            assert bound["metadata"]["name"] == f"{member.name}-{component}"
            assert bound["spec"]["destination"] == {
                "name": member.name,
                "namespace": single["spec"]["destination"]["namespace"],
            }
            checked += 1
    assert checked == 14
