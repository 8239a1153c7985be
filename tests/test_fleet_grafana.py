"""Fleet-wide views: the hub's Grafana gets a Prometheus datasource per other EKS cluster (its values layer, the
real kube-prometheus-stack chart renders them), credentials only as Secret references, and every cluster's
Prometheus its `cluster` external label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.errors import ProfileError
from rlobs.fleet.commands import parse_fleet
from rlobs.targets.eks import layers
from rlobs.targets.eks.appsets import VALUES_DIR
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.eks.values import remote_uid
from rlobs.targets.eks.versions import CHARTS
from testing.fleet import example, example_build, example_text
from testing.helm import render

HUB = "prod-usw2-a"
KPS = "kube-prometheus-stack"


def _merged(cluster: str, chart: str = KPS) -> dict[str, Any]:
    """The cluster's values as its Application lists the layers: common, env/<env>, clusters/<name>."""
    files = {r.path: r.text for r in example_build().files}
    env = next(m.cluster.environment for m in example().members if m.name == cluster)
    merged: dict[str, Any] = {}
    for layer in ("common", f"env/{env}", f"clusters/{cluster}"):
        text = files.get(f"{VALUES_DIR}/{layer}/{chart}.yaml")
        if text:
            merged = layers.merge(merged, yaml.safe_load(text))
    return merged


def _problems(text: str) -> list[str]:
    with pytest.raises(ProfileError) as exc:
        parse_fleet(text, "fleet.yaml")
    return exc.value.lines()


def test_the_hub_has_a_prometheus_datasource_per_other_eks_cluster() -> None:
    grafana = _merged(HUB)["grafana"]
    remote = {d["uid"]: d for d in grafana["additionalDataSources"] if d["type"] == "prometheus"}
    assert set(remote) == {remote_uid("dev-use2"), remote_uid("prod-usw2-b")}
    dev, prod_b = remote[remote_uid("dev-use2")], remote[remote_uid("prod-usw2-b")]
    assert dev["url"] == "https://prometheus.dev-use2.rl.example.com" and dev["access"] == "proxy"
    # Credentials by Secret reference only: the values hold an env variable name, the env comes from the Secret.
    assert dev["secureJsonData"] == {"httpHeaderValue1": "Bearer ${RLOBS_PROMETHEUS_DEV_USE2_TOKEN}"}
    assert prod_b["basicAuthUser"] == "grafana-hub"
    assert prod_b["secureJsonData"] == {"basicAuthPassword": "${RLOBS_PROMETHEUS_PROD_USW2_B_PASSWORD}"}
    env = grafana["envValueFrom"]
    assert env["RLOBS_PROMETHEUS_DEV_USE2_TOKEN"] == {
        "secretKeyRef": {"name": "fleet-prometheus-dev-use2", "key": "token"}
    }
    assert env["RLOBS_PROMETHEUS_PROD_USW2_B_PASSWORD"] == {
        "secretKeyRef": {"name": "fleet-prometheus-prod-usw2-b", "key": "password"}
    }
    # the OpenSearch datasource stays (a list in a values layer replaces, it does not merge)
    assert any(d["uid"] == "opensearch" for d in grafana["additionalDataSources"])


def test_only_the_hub_gets_them_and_its_profile_says_so() -> None:
    assert not [d for d in _merged("dev-use2")["grafana"]["additionalDataSources"] if d["type"] == "prometheus"]
    by_name = {m.name: m.profile for m in example().members}
    hub = by_name[HUB]
    assert isinstance(hub, EksProfile)
    assert [r.name for r in hub.eks.grafana.remote_prometheus] == ["dev-use2", "prod-usw2-b"]
    # profiles/<hub>.yaml carries them, so the single-cluster render of it is the hub's bundle (the preview test)
    files = {r.path: r.text for r in example_build().files}
    assert "remotePrometheus" in files[f"profiles/{HUB}.yaml"]


def test_every_rlobs_stack_labels_its_series_with_its_cluster() -> None:
    for cluster in ("dev-use2", HUB):
        assert _merged(cluster)["prometheus"]["prometheusSpec"]["externalLabels"] == {"cluster": cluster}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "      url: https://prometheus.dev-use2.rl.example.com\n"
            "      bearerTokenSecret: {name: fleet-prometheus-dev-use2, key: token}",
            "      bearerTokenSecret: {name: fleet-prometheus-dev-use2, key: token}",
            "clusters[0].prometheus.url: expected this required key",
        ),
        ("hub: prod-usw2-a", "hub: prod-gke", "views.grafana.hub: expected the name of an eks cluster"),
        (
            "hub: prod-usw2-a",
            "hub: prod-usw2-b",
            "views.grafana.hub is prod-usw2-b, so expected `prometheus: {url: ...}` on cluster prod-usw2-a",
        ),
        (
            "https://prometheus.dev-use2.rl.example.com",
            "https://admin:hunter2@prometheus.dev-use2.rl.example.com",
            "clusters[0].prometheus.url: expected a Prometheus URL",
        ),
        (
            "https://prometheus.dev-use2.rl.example.com",
            "https://prometheus.dev-use2.rl.example.com/${HOME}",
            "clusters[0].prometheus.url: expected a Prometheus URL",
        ),
        (
            "      bearerTokenSecret: {name: fleet-prometheus-dev-use2, key: token}",
            "      bearerTokenSecret: {name: fleet-prometheus-dev-use2, key: token}\n"
            "      basicAuth: {username: u, passwordSecret: {name: s, key: p}}",
            "clusters[0].prometheus.basicAuth: expected bearerTokenSecret or basicAuth, got both",
        ),
        (
            "    region: us-central1\n    overrides:",
            "    region: us-central1\n    prometheus: {url: https://p.example.com}\n    overrides:",
            "clusters[4].prometheus: expected no prometheus on a gke cluster",
        ),
    ],
)
def test_hub_problems_are_located(old: str, new: str, expected: str) -> None:
    text = example_text()
    assert old in text
    lines = _problems(text.replace(old, new, 1))
    assert any(expected in ln for ln in lines), lines


def test_every_other_eks_cluster_needs_its_url_and_none_without_a_hub() -> None:
    text = example_text()
    no_b = text.replace(
        "    prometheus:\n      url: https://prometheus.prod-usw2-b.rl.example.com\n"
        "      basicAuth: {username: grafana-hub, passwordSecret: {name: fleet-prometheus-prod-usw2-b, "
        "key: password}}\n",
        "",
    )
    assert no_b != text
    (line,) = _problems(no_b)
    assert "views.grafana.hub is prod-usw2-a, so expected `prometheus: {url: ...}` on cluster prod-usw2-b" in line
    no_hub = text[: text.index("views:\n")]
    lines = _problems(no_hub)
    assert len(lines) == 2 and all("expected no prometheus without views.grafana" in ln for ln in lines)


def test_the_hub_needs_the_rlobs_stack() -> None:
    text = example_text().replace("hub: prod-usw2-a", "hub: prod-usw2-b")
    text = text.replace(
        "    revision: v1.4.0        # prod syncs a release tag\n",
        "    revision: v1.4.0        # prod syncs a release tag\n    prometheus: {url: https://p.example.com}\n",
    )
    lines = _problems(text)
    assert any("views.grafana: expected no grafana settings with eks.mode: ai-on-eks" in ln for ln in lines), lines


def test_the_hub_cannot_be_set_by_hand_in_defaults() -> None:
    text = example_text().replace(
        "    prometheus:\n      retention: 7d",
        "    prometheus:\n      retention: 7d\n    grafana: {remotePrometheus: []}",
    )
    assert any("expected no eks.grafana.remotePrometheus here" in ln for ln in _problems(text))


@pytest.mark.slow
def test_the_real_chart_renders_the_hubs_datasources(tmp_path: Path) -> None:
    docs = render(f"{KPS}-{CHARTS[KPS].version}", CHARTS[KPS].release, _merged(HUB), tmp_path)
    (config,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-grafana-datasource")]
    sources = {d["uid"]: d for d in yaml.safe_load(config["data"]["datasource.yaml"])["datasources"]}
    # the hub's own Prometheus (the default every dashboard's `cluster` variable starts on), then one per cluster
    assert sources["prometheus"]["isDefault"] is True
    assert sources[remote_uid("dev-use2")]["url"] == "https://prometheus.dev-use2.rl.example.com"
    assert sources[remote_uid("prod-usw2-b")]["secureJsonData"] == {
        "basicAuthPassword": "${RLOBS_PROMETHEUS_PROD_USW2_B_PASSWORD}"
    }
    prom = next(d for d in docs if d["kind"] == "Prometheus")
    assert prom["spec"]["externalLabels"] == {"cluster": HUB}


def test_the_hubs_readme_creates_each_datasource_secret_from_a_prompt() -> None:
    from testing.bundles import build

    hub = next(m.profile for m in example().members if m.name == HUB)
    readme = next(r.text for r in build(hub) if r.path == "README.md").replace("\\\n", " ")
    for name, key in (("fleet-prometheus-dev-use2", "token"), ("fleet-prometheus-prod-usw2-b", "password")):
        (line,) = [ln for ln in readme.splitlines() if f"create secret generic {name} " in ln]
        assert f'--from-literal={key}="$PROMETHEUS_CREDENTIAL"' in line, line
        assert line.rstrip().endswith("--dry-run=client -o yaml | kubectl apply -f -"), line


@pytest.mark.parametrize("crd", ["v3.0.6", "latest"])
def test_the_fleet_readme_is_right_that_the_pinned_crds_have_flat_list(crd: str) -> None:
    """The fleet README says why the datasource list is generated although the cluster generator has flatList."""
    from testing.crdschema import read_crd
    from testing.helpers import shared

    doc = read_crd(shared(f"upstream/argo-cd/applicationset-crd.{crd}.yaml"))
    spec = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    clusters = spec["generators"]["items"]["properties"]["clusters"]["properties"]
    assert clusters["flatList"] == {"type": "boolean"}
    assert "flatList" in {r.text for r in example_build().files if r.path == "README.md"}.pop()


def test_a_single_profile_may_list_remote_prometheus_once_per_cluster() -> None:
    from rlobs.targets import parse_profile
    from testing.helpers import all_profiles

    base = all_profiles()["eks-jark"]
    anchor = "\n  grafana:\n"
    assert anchor in base
    entry = "      - {name: other, url: https://prometheus.other.example.com}\n"
    text = base.replace(anchor, anchor + "    remotePrometheus:\n" + entry + entry, 1)
    with pytest.raises(ProfileError) as exc:
        parse_profile(text, "p.yaml")
    assert any("eks.grafana.remotePrometheus[1].name: expected each cluster once" in ln for ln in exc.value.lines())
    once = parse_profile(base.replace(anchor, anchor + "    remotePrometheus:\n" + entry, 1), "p.yaml")
    assert isinstance(once, EksProfile) and [r.url for r in once.eks.grafana.remote_prometheus] == [
        "https://prometheus.other.example.com"
    ]
