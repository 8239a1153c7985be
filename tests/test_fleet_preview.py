"""The offline preview expands each ApplicationSet for each cluster with Go's text/template (helm's engine), and
what it expands equals the single-cluster render of that cluster's effective profile."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.bundle.appsets import strings
from rlobs.errors import RlobsError
from rlobs.fleet import preview
from rlobs.fleet.commands import pairs
from rlobs.profile.fleetspec import bundle_path
from rlobs.targets.eks.appsets import bindings, fleet_application
from testing.bundles import build
from testing.crdschema import errors
from testing.eks import schema
from testing.fleet import example, example_build
from testing.helpers import module, tool

pytestmark = pytest.mark.slow


def _helm() -> str:
    return tool("helm", "runs Go text/template the way the ApplicationSet controller does")


def _single(name: str) -> dict[str, str]:
    member = next(m for m in example().members if m.name == name)
    return {r.path: r.text for r in build(member.profile)}


def _expanded() -> list[tuple[preview.Pair, dict[str, Any]]]:
    _helm()
    found = pairs(example_build())
    return list(zip(found, preview.expand(found), strict=True))


def test_every_pair_equals_the_single_cluster_render() -> None:
    """For every (ApplicationSet, cluster): the Application helm's Go engine expands is the cluster's own
    single-cluster Application (parsed from its rendered argocd/apps/ file), bound to the cluster."""
    fleet, expanded = example(), _expanded()
    assert len(expanded) == 14  # 4 stack components x 2 rlobs-mode clusters + 2 components x 3 clusters
    for pair, app in expanded:
        member = next(m for m in fleet.members if m.name == pair.cluster)
        component = pair.appset.removeprefix("applicationsets/").removesuffix(".yaml")
        single = yaml.safe_load(_single(member.name)[f"argocd/apps/{component}.yaml"])
        expected = fleet_application(
            fleet.spec, component, single, bundle_path(fleet.spec, member.name), bindings(member)
        )
        assert app == expected, (pair.appset, pair.cluster)


@pytest.mark.parametrize("crd", ["argo-cd/application-crd.v3.0.6.yaml", "argo-cd/application-crd.latest.yaml"])
def test_expanded_applications_match_the_application_crd(crd: str) -> None:
    module("jsonschema", "validates Applications against the Argo CD CRD")
    for pair, app in _expanded():
        assert errors(schema(crd), app) == [], (pair.appset, pair.cluster)


def test_layered_values_merged_by_helm_equal_each_clusters_values(tmp_path: Path) -> None:
    """Helm merges the layers the Application lists (missing ones skipped, as ignoreMissingValueFiles does); the
    result is the chart values of the cluster's single-cluster render."""
    helm = _helm()
    files = {r.path: r.text for r in example_build().files}
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: merged\nversion: 0.0.0\n", encoding="utf-8")
    (chart / "templates" / "values.yaml").write_text("{{ toYaml .Values }}\n", encoding="utf-8")
    checked = 0
    for pair, app in _expanded():
        for src in app["spec"].get("sources") or [app["spec"]["source"]]:
            if "helm" not in src:
                continue
            chart_file = src["helm"]["valueFiles"][0].rsplit("/", 1)[1]
            layers = [f.removeprefix("$values/fleets/rl/") for f in src["helm"]["valueFiles"]]
            args = []
            for n, layer in enumerate(layer for layer in layers if layer in files):
                path = tmp_path / f"{pair.cluster}-{n}-{chart_file}"
                path.write_text(files[layer], encoding="utf-8")
                args += ["-f", str(path)]
            env = {"HELM_CACHE_HOME": str(tmp_path / "c"), "HELM_CONFIG_HOME": str(tmp_path / "g")}
            proc = subprocess.run(
                [helm, "template", "m", str(chart), *args], capture_output=True, text=True, env=env, check=True
            )
            merged = yaml.safe_load(proc.stdout.split("\n", 2)[2])
            assert merged == yaml.safe_load(_single(pair.cluster)[f"values/{chart_file}"]), (pair.cluster, chart_file)
            checked += 1
    assert checked == 9  # three stack charts on two clusters, the collector on three


def test_each_synced_folder_holds_the_single_cluster_files() -> None:
    files = {r.path: r.text for r in example_build().files}
    for pair, app in _expanded():
        for src in app["spec"].get("sources") or [app["spec"]["source"]]:
            if "path" not in src:
                continue
            folder = src["path"].removeprefix("fleets/rl/")
            synced = {p.removeprefix(folder + "/"): t for p, t in files.items() if p.startswith(folder + "/")}
            sub = folder.removeprefix(f"clusters/{pair.cluster}/")
            single = {p.removeprefix(sub + "/"): t for p, t in _single(pair.cluster).items() if p.startswith(sub + "/")}
            assert synced and synced == single, folder


def test_a_planted_fault_in_a_template_is_caught() -> None:
    """A template that binds the wrong annotation expands to Applications that differ from the single render."""
    _helm()
    fleet, found = example(), pairs(example_build())
    pair = next(p for p in found if p.appset.endswith("rl-layer.yaml") and p.cluster == "prod-usw2-a")
    wrong = copy.deepcopy(pair.template)
    wrong["spec"]["source"]["targetRevision"] = '{{ index .metadata.annotations "rlobs.io/environment" }}'
    (app,) = preview.expand([preview.Pair(pair.appset, pair.cluster, wrong, pair.params)])
    member = next(m for m in fleet.members if m.name == pair.cluster)
    single = yaml.safe_load(_single(member.name)["argocd/apps/rl-layer.yaml"])
    expected = fleet_application(fleet.spec, "rl-layer", single, bundle_path(fleet.spec, member.name), bindings(member))
    assert app["spec"]["source"]["targetRevision"] == "prod"
    assert app != expected


def test_a_key_the_secret_lacks_fails_the_preview_as_missingkey_error_would() -> None:
    _helm()
    pair = pairs(example_build())[0]
    wrong = copy.deepcopy(pair.template)
    wrong["metadata"]["name"] = "{{ .metadata.annotations.owner }}-app"
    with pytest.raises(RlobsError, match="lacks"):
        preview.expand([preview.Pair(pair.appset, pair.cluster, wrong, pair.params)])
    # A template that is not valid Go text/template fails as the controller would.
    broken = copy.deepcopy(pair.template)
    broken["metadata"]["name"] = "{{ .name "
    with pytest.raises(RlobsError, match="failed to render"):
        preview.expand([preview.Pair(pair.appset, pair.cluster, broken, pair.params)])


def test_a_missing_annotation_reads_as_empty_as_in_the_controller() -> None:
    # The controller's index of a key its map[string]string lacks is "", even with missingkey=error.
    _helm()
    pair = pairs(example_build())[0]
    wrong = copy.deepcopy(pair.template)
    wrong["metadata"]["name"] = '{{ index .metadata.annotations "owner" }}-app'
    (app,) = preview.expand([preview.Pair(pair.appset, pair.cluster, wrong, pair.params)])
    assert app["metadata"]["name"] == "-app"


@pytest.mark.parametrize("key", ["rlobs.io/revision", "rlobs.io/cluster", "rlobs.io/environment"])
def test_a_secret_without_an_annotation_the_templates_read_fails_them_never_syncs_head(key: str) -> None:
    _helm()
    found = [p for p in pairs(example_build()) if any(key in text for text in strings(p.template))]
    assert found
    for pair in found:
        # Every read of the key is guarded in the template itself, not only by the preview's contract check.
        reads = [t for t in strings(pair.template) if f'"{key}"' in t]
        assert all(t.count("index .metadata") == t.count('(fail "expected the cluster Secret') for t in reads)
        annotations = {k: v for k, v in pair.params["metadata"]["annotations"].items() if k != key}
        params = {**pair.params, "metadata": {**pair.params["metadata"], "annotations": annotations}}
        with pytest.raises(RlobsError, match=f"expected the cluster Secret to carry annotation {key}"):
            preview.expand([preview.Pair(pair.appset, pair.cluster, pair.template, params)])


def test_render_preview_prints_every_application(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rlobs.main import app
    from testing.fleet import example_text

    _helm()
    path = tmp_path / "fleet.yaml"
    path.write_text(example_text(), encoding="utf-8")
    result = CliRunner().invoke(app, ["render", str(path), "--preview", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    docs = [d for d in yaml.safe_load_all(result.output) if d]
    assert len(docs) == 14 and {d["kind"] for d in docs} == {"Application"}
    assert "# applicationsets/rl-layer.yaml for cluster prod-usw2-b" in result.output
    assert not (tmp_path / "out").exists()
