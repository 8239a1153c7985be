"""Argo CD Applications of the EKS bundle: valid against the Application CRD, pinned, ordered, wired to the bundle."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from rlobs.targets.eks.versions import CHARTS
from testing.crdschema import errors
from testing.eks import EKS_PROFILES, bundle, objects, of_kind, schema
from testing.helpers import module, profile

APP_CRD = "argo-cd/application-crd.v3.0.6.yaml"  # Argo CD v3.0.6 = argo-cd chart 8.1.1, what ai-on-eks installs


def _apps(name: str) -> dict[str, Any]:
    return of_kind(name, "Application")


@pytest.mark.parametrize("crd", [APP_CRD, "argo-cd/application-crd.latest.yaml"])
@pytest.mark.parametrize("name", EKS_PROFILES)
def test_applications_match_the_argocd_crd(name: str, crd: str) -> None:
    """Valid for the Argo CD ai-on-eks installs (v3.0.6) and for the latest CRD (no field removed since)."""
    module("jsonschema", "validates Applications against the Argo CD CRD")
    apps = _apps(name)
    assert apps
    for path, app in apps.items():
        assert errors(schema(crd), app) == [], path


def test_the_crd_check_rejects_broken_applications() -> None:
    module("jsonschema", "validates Applications against the Argo CD CRD")
    app = next(iter(_apps("eks-jark").values()))
    typo = copy.deepcopy(app)
    typo["spec"]["syncPolicy"]["syncOption"] = typo["spec"]["syncPolicy"].pop("syncOptions")
    assert any("syncOption" in e for e in errors(schema(APP_CRD), typo))
    missing = copy.deepcopy(app)
    del missing["spec"]["project"]
    assert any("project" in e for e in errors(schema(APP_CRD), missing))
    wrong = copy.deepcopy(app)
    wrong["spec"]["syncPolicy"]["retry"]["limit"] = "ten"
    assert errors(schema(APP_CRD), wrong)


def _sources(app: dict[str, Any]) -> list[dict[str, Any]]:
    spec = app["spec"]
    return spec.get("sources") or [spec["source"]]


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_every_application_is_pinned_finalized_and_in_argocd(name: str) -> None:
    for path, app in _apps(name).items():
        assert app["metadata"]["namespace"] == "argocd", path
        assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"], path
        for src in _sources(app):
            assert src["targetRevision"] not in ("HEAD", "", "*"), path
            if "chart" in src:
                assert re.fullmatch(r"\d+\.\d+\.\d+", src["targetRevision"]), path
                assert src["targetRevision"] == CHARTS[src["chart"]].version


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_chart_values_come_from_the_bundle(name: str) -> None:
    """Each multi-source app reads `$values/<gitops.path>/values/<chart>.yaml`, and the bundle has that file."""
    eks = profile(name).eks
    assert eks is not None
    files = bundle(name)
    for path, app in _apps(name).items():
        sources = _sources(app)
        charts = [s for s in sources if "chart" in s]
        if not charts:
            continue
        ref = next(s for s in sources if s.get("ref") == "values")
        assert (ref["repoURL"], ref["targetRevision"]) == (eks.gitops.repo_url, eks.gitops.target_revision)
        for value_file in charts[0]["helm"]["valueFiles"]:
            prefix = f"$values/{eks.gitops.path}/"
            assert value_file.startswith(prefix), path
            assert value_file.removeprefix(prefix) in files, value_file
        assert charts[0]["helm"]["releaseName"] == CHARTS[charts[0]["chart"]].release


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_git_sources_point_at_bundle_folders(name: str) -> None:
    eks = profile(name).eks
    assert eks is not None
    files = bundle(name)
    root = objects(name, "argocd/root-app.yaml")["argocd/root-app.yaml"]
    for app in [root, *_apps(name).values()]:
        for src in _sources(app):
            if "path" not in src:
                continue
            assert src["repoURL"] == eks.gitops.repo_url
            folder = src["path"].removeprefix(eks.gitops.path + "/")
            assert any(f.startswith(folder + "/") and f.endswith(".yaml") for f in files), src["path"]
    # The root syncs exactly the child Applications (and nothing under argocd/apps is not an Application).
    children = [p for p in files if p.startswith("argocd/apps/")]
    assert sorted(children) == sorted(p for p in _apps(name) if p.startswith("argocd/apps/"))


def _wave(app: dict[str, Any]) -> int:
    return int(app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])


def test_sync_waves_put_crds_before_the_objects_that_use_them() -> None:
    apps = {a["metadata"]["name"]: a for p, a in _apps("eks-jark").items() if p.startswith("argocd/apps/")}
    crd_apps = [apps["kube-prometheus-stack"], apps["opensearch-operator"], apps["fluent-operator"]]
    stack_config = next(a for n, a in apps.items() if n.endswith("-stack-config"))
    rl_layer = next(a for n, a in apps.items() if n.endswith("-rl-layer"))
    assert max(map(_wave, crd_apps)) < _wave(stack_config) < _wave(apps["otel-collector"]) < _wave(rl_layer)


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_large_crds_and_custom_resources_use_server_side_apply(name: str) -> None:
    for path, app in _apps(name).items():
        if not path.startswith("argocd/apps/"):
            continue  # the root holds only Applications
        chart = next((s["chart"] for s in _sources(app) if "chart" in s), None)
        # chart None: the stack-config / RL-layer apps (dashboard ConfigMaps outgrow the client-side annotation).
        if chart in ("kube-prometheus-stack", "opensearch-operator", "fluent-operator", None):
            assert "ServerSideApply=true" in app["spec"]["syncPolicy"]["syncOptions"], path


def test_kube_prometheus_stack_ignores_its_known_perpetual_diffs() -> None:
    app = _apps("eks-jark")["argocd/apps/kube-prometheus-stack.yaml"]
    kinds = {d["kind"] for d in app["spec"]["ignoreDifferences"]}
    assert kinds == {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
    assert "RespectIgnoreDifferences=true" in app["spec"]["syncPolicy"]["syncOptions"]


def test_modes_never_deploy_the_stack_twice() -> None:
    """ai-on-eks mode: Terraform deploys the stack, so the bundle has no stack Applications, and vice versa."""
    stack_charts = {"kube-prometheus-stack", "opensearch-operator", "fluent-operator"}

    def charts(name: str) -> set[str]:
        return {s["chart"] for a in _apps(name).values() for s in _sources(a) if "chart" in s}

    assert stack_charts <= charts("eks-jark")
    assert not stack_charts & charts("eks-ai-on-eks")
    assert "enable_ai_ml_observability_stack = false" in bundle("eks-jark")["terraform/blueprint.tfvars"]
    assert "enable_ai_ml_observability_stack = true" in bundle("eks-ai-on-eks")["terraform/blueprint.tfvars"]
