"""Helm values of the EKS bundle: every key exists in the pinned chart, the collector's values pass its schema,
credentials only by Secret reference."""

from __future__ import annotations

import copy
import functools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.targets import parse_profile
from rlobs.targets.eks import values
from rlobs.targets.eks.versions import CHARTS
from testing.eks import EKS_PROFILES, objects
from testing.helpers import all_profiles, eks_profile, module, profile, shared, tool

# Maps the charts leave open (free-form config or a map of user-named entries) in which no chart default lists the
# keys: the check stops there, having checked that the map itself exists. Maps whose chart default is {} or null
# (prometheusSpec.storageSpec, resources, envValueFrom, output.opensearch...) are open as well and found on the way.
OPEN_MAPS = {
    "kube-prometheus-stack": {"alertmanager.config"},
    "opentelemetry-collector": {"config", "ports"},
}


def _chart_values(chart: str) -> dict[str, Any]:
    return copy.deepcopy(_chart_values_cached(chart))


@functools.cache
def _chart_values_cached(chart: str) -> dict[str, Any]:
    version = CHARTS[chart].version
    found: dict[str, Any] = yaml.safe_load(shared(f"upstream/charts/{chart}-{version}.values.yaml").read_text())
    if chart == "kube-prometheus-stack":
        # grafana.* keys belong to the grafana subchart (9.3.2 in kube-prometheus-stack 76.3.0); the parent's
        # grafana section adds its own keys (sidecar.datasources.uid, additionalDataSources...).
        sub = yaml.safe_load(shared("upstream/charts/grafana-9.3.2.values.yaml").read_text())
        found["grafana"] = _merge(sub, found["grafana"])
    return found


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Helm's coalescing: maps merge, anything else replaces, null deletes."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def unknown_keys(values: Any, chart: Any, open_maps: set[str], path: str = "") -> list[str]:
    """Dotted paths of `values` keys the chart's values do not have."""
    problems: list[str] = []
    for key, value in values.items():
        dotted = f"{path}.{key}" if path else key
        if not isinstance(chart, dict) or key not in chart:
            problems.append(dotted)
        elif dotted in open_maps:
            continue
        elif isinstance(value, dict) and isinstance(chart[key], dict) and chart[key]:
            problems += unknown_keys(value, chart[key], open_maps, dotted)
    return problems


def _values(name: str) -> dict[str, dict[str, Any]]:
    return {p.removeprefix("values/").removesuffix(".yaml"): v for p, v in objects(name, "values/").items()}


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_every_values_key_exists_in_the_pinned_chart(name: str) -> None:
    # What rlobs renders itself, strictly against values.yaml; the profile's eks.helmValues are checked against the
    # fuller key index (keys the chart documents only in comments too) by tests/test_helmvalues.py.
    overrides = eks_profile(name).eks.helm_values
    for chart, chart_values in _values(name).items():
        found = unknown_keys(chart_values, _chart_values(chart), OPEN_MAPS.get(chart, set()))
        assert [k for k in found if not _overridden(overrides.get(chart, {}), k.split("."))] == [], chart


def _overridden(override: Any, path: list[str]) -> bool:
    return (
        bool(path)
        and isinstance(override, dict)
        and path[0] in override
        and (len(path) == 1 or not isinstance(override[path[0]], dict) or _overridden(override[path[0]], path[1:]))
    )


def test_the_key_check_rejects_a_misspelt_key() -> None:
    values = copy.deepcopy(_values("eks-jark")["kube-prometheus-stack"])
    values["grafana"]["admin"]["existingSecrets"] = values["grafana"]["admin"].pop("existingSecret")
    values["prometheus"]["prometheusSpec"]["retentionTime"] = "1d"
    found = unknown_keys(values, _chart_values("kube-prometheus-stack"), OPEN_MAPS["kube-prometheus-stack"])
    assert found == ["grafana.admin.existingSecrets", "prometheus.prometheusSpec.retentionTime"]


def _collector_errors(values: dict[str, Any]) -> list[str]:
    module("jsonschema", "validates values against the chart's values.schema.json")
    import jsonschema

    schema = json.loads(shared("upstream/charts/opentelemetry-collector-0.170.0.values.schema.json").read_text())
    merged = _merge(_chart_values("opentelemetry-collector"), values)
    validator = jsonschema.Draft7Validator(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(merged)]


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_collector_values_pass_the_chart_schema(name: str) -> None:
    assert _collector_errors(_values(name)["opentelemetry-collector"]) == []


def test_the_collector_schema_rejects_broken_values() -> None:
    values = copy.deepcopy(_values("eks-jark")["opentelemetry-collector"])
    values["ports"]["prom-exporter"]["containerPort"] = "8889"
    values["image"]["name"] = "collector"
    assert len(_collector_errors(values)) == 2


def test_collector_pipelines_hand_metrics_to_prometheus_and_traces_to_opensearch() -> None:
    config = _merge(_chart_values("opentelemetry-collector"), _values("eks-jark")["opentelemetry-collector"])["config"]
    pipelines = config["service"]["pipelines"]
    assert set(pipelines) == {"metrics", "traces"}
    assert pipelines["metrics"]["exporters"] == ["prometheus"]
    assert pipelines["traces"]["exporters"] == ["opensearch/traces"]
    assert set(config["receivers"]) == {"otlp"}  # jaeger, zipkin and the self-scrape removed with null
    for pipeline in pipelines.values():
        for part in ("receivers", "processors", "exporters"):
            assert all(c in config[part] for c in pipeline[part]), (part, pipeline)
    assert all(e in config["extensions"] for e in config["service"]["extensions"])
    assert config["exporters"]["opensearch/traces"]["http"]["endpoint"].startswith("https://")


def test_grafana_admin_and_datasource_credentials_come_from_secrets() -> None:
    eks = eks_profile("eks-jark").eks
    grafana = _values("eks-jark")["kube-prometheus-stack"]["grafana"]
    assert grafana["admin"]["existingSecret"] == eks.grafana.admin_secret
    assert "adminPassword" not in grafana
    env = grafana["envValueFrom"]
    assert {v["secretKeyRef"]["name"] for v in env.values()} == {eks.opensearch.credentials_secret}
    (ds,) = grafana["additionalDataSources"]
    # Grafana expands ${VAR} in provisioning files; the ConfigMap holds only the variable's name.
    assert ds["secureJsonData"] == {"basicAuthPassword": "${OPENSEARCH_PASSWORD}"}
    assert ds["basicAuthUser"] == "${OPENSEARCH_USERNAME}" and "OPENSEARCH_USERNAME" in env
    assert grafana["sidecar"]["dashboards"]["label"] == "grafana_dashboard"


def test_alertmanager_receivers_read_their_secrets_from_mounted_files() -> None:
    for name in EKS_PROFILES:
        eks = eks_profile(name).eks
        kps = _values(name).get("kube-prometheus-stack")
        if kps is None:
            continue  # ai-on-eks mode: the reference stack owns Alertmanager
        am = kps["alertmanager"]
        mounted = set(am["alertmanagerSpec"]["secrets"])
        receivers = {r["name"]: r for r in am["config"]["receivers"]}
        assert set(receivers) == {"null", *(r.name for r in eks.alertmanager_receivers)}
        for r in eks.alertmanager_receivers:
            (config,) = next(v for k, v in receivers[r.name].items() if k.endswith("_configs"))
            files = [v for k, v in config.items() if k.endswith("_file")]
            assert files == [f"/etc/alertmanager/secrets/{r.secret_ref.name}/{r.secret_ref.key}"]
            assert r.secret_ref.name in mounted
        routed = {r["receiver"] for r in am["config"]["route"]["routes"]}
        assert routed == set(receivers)


def test_prometheus_retention_storage_and_resources_follow_the_profile() -> None:
    eks = eks_profile("eks-jark").eks
    spec = _values("eks-jark")["kube-prometheus-stack"]["prometheus"]["prometheusSpec"]
    assert spec["retention"] == eks.prometheus.retention
    claim = spec["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert claim["resources"]["requests"]["storage"] == eks.prometheus.storage_size
    assert claim["storageClassName"] == eks.prometheus.storage_class
    assert spec["resources"]["limits"]["memory"] == eks.prometheus.limits.memory


def _alertmanager_config(name: str) -> dict[str, Any]:
    """The Alertmanager configuration Helm renders: the chart's default config merged with the bundle's."""
    chart = _chart_values("kube-prometheus-stack")["alertmanager"]["config"]
    merged: dict[str, Any] = _merge(chart, _values(name)["kube-prometheus-stack"]["alertmanager"]["config"])
    return merged


def _amtool(config: dict[str, Any], tmp: Path) -> subprocess.CompletedProcess[str]:
    amtool = tool("amtool", "checks the rendered Alertmanager configuration")
    version = subprocess.run([amtool, "--version"], capture_output=True, text=True, check=False)
    found = re.search(r"version (\d+)\.(\d+)", version.stdout + version.stderr)
    if found and (int(found[1]), int(found[2])) < (0, 26):
        # webhook_config.url_file arrived in Alertmanager 0.26 (kube-prometheus-stack 76.3.0 runs v0.28.1); an older
        # amtool (Debian ships 0.25) checks the rest of the webhook receiver with an equivalent inline URL.
        config = copy.deepcopy(config)
        for receiver in config["receivers"]:
            for hook in receiver.get("webhook_configs", []):
                hook["url"] = "https://example.invalid/" + hook.pop("url_file").rsplit("/", 1)[-1]
    path = tmp / "alertmanager.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return subprocess.run([amtool, "check-config", str(path)], capture_output=True, text=True, check=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in EKS_PROFILES if n != "eks-ai-on-eks"])
def test_amtool_accepts_the_alertmanager_config(name: str, tmp_path: Path) -> None:
    proc = _amtool(_alertmanager_config(name), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_amtool_accepts_every_receiver_type_and_rejects_a_broken_one(tmp_path: Path) -> None:
    config = _alertmanager_config("eks-jark")
    text = all_profiles()["eks-ai-on-eks"].replace("mode: ai-on-eks", "mode: rlobs")
    text = text.replace("    observability_mcp_enabled: false\n", "")
    prof = parse_profile(text, "p.yaml")
    assert prof.eks is not None
    config = _merge(config, values.kube_prometheus_stack(prof)["alertmanager"]["config"])  # type: ignore[arg-type]
    kinds = {k for r in config["receivers"] for k in r if k.endswith("_configs")}
    assert kinds == {"pagerduty_configs", "webhook_configs"}
    assert _amtool(config, tmp_path).returncode == 0
    config["receivers"][1]["pagerduty_configs"][0]["routing_key_path"] = "/nowhere"
    assert _amtool(config, tmp_path).returncode != 0


# Grafana's own parser of a GF_INSTALL_PLUGINS entry (pkg/setting/setting_plugins.go,
# migrateInstallPluginsToPreinstallPluginsSync): `[<url>;]<id>[ <version>]`.
_GF_PLUGIN_ENTRY = re.compile(r"(?:([^;]+);)?([^;\s]+)(?:\s+(.+))?")
_VERSION = re.compile(r"\d+\.\d+\.\d+")


def _mode(name: str) -> str:
    eks = eks_profile(name).eks
    return eks.mode


def unpinned_plugins(plugins: list[str]) -> list[str]:
    """Entries of grafana.plugins that install whatever release grafana.com serves: pinned are `<id> <x.y.z>` and the
    chart's URL form `https://grafana.com/api/plugins/<id>/versions/<x.y.z>/download;<id>` (grafana-9.3.2 values)."""
    found = []
    # The chart joins the list with "," into GF_INSTALL_PLUGINS (templates/configmap.yaml), so split as Grafana does.
    for entry in ",".join(plugins).split(","):
        match = _GF_PLUGIN_ENTRY.fullmatch(entry.strip())
        url, version = (match[1], match[3]) if match else (None, None)
        pinned_url = url is not None and re.search(rf"/versions/{_VERSION.pattern}/download$", url)
        if not (version and _VERSION.fullmatch(version)) and not pinned_url:
            found.append(entry)
    return found


@pytest.mark.parametrize("name", [n for n in EKS_PROFILES if _mode(n) == "rlobs"])  # ai-on-eks: not rlobs' Grafana
def test_every_grafana_plugin_is_pinned(name: str) -> None:
    grafana = _values(name)["kube-prometheus-stack"]["grafana"]
    assert grafana["plugins"] and unpinned_plugins(grafana["plugins"]) == []
    # The datasource the bundle provisions is the plugin that is installed.
    types = {ds["type"] for ds in grafana["additionalDataSources"]}
    assert types <= {_GF_PLUGIN_ENTRY.fullmatch(p)[2] for p in grafana["plugins"]}  # type: ignore[index]


def test_the_pin_check_rejects_unpinned_plugins() -> None:
    url = (
        "https://grafana.com/api/plugins/marcusolsson-json-datasource/versions/{}/download;marcusolsson-json-datasource"
    )
    assert unpinned_plugins([url.format("1.3.2"), "grafana-clock-panel 2.1.8"]) == []
    broken = ["grafana-opensearch-datasource", url.format("latest"), "grafana-clock-panel latest"]
    assert unpinned_plugins(broken) == broken


def _routes_to(config: dict[str, Any], tmp: Path, labels: dict[str, str]) -> set[str]:
    """The receivers Alertmanager's own router picks for an alert with `labels` (`amtool config routes test`)."""
    amtool = tool("amtool", "tests the rendered Alertmanager routing")
    path = tmp / "routes.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    args = [f"{k}={v}" for k, v in labels.items()]
    proc = subprocess.run(
        [amtool, "config", "routes", "test", f"--config.file={path}", *args], capture_output=True, text=True
    )
    assert proc.returncode in (0, 1), proc.stderr
    return set(proc.stdout.strip().split(","))


@pytest.mark.slow
def test_routing_follows_the_profile(tmp_path: Path) -> None:
    """rl-oncall (slack, alerts rl) gets this bundle's critical and warning RL alerts; platform-pager (pagerduty,
    alerts cluster) gets only critical cluster alerts; nothing else pages anyone."""
    config = _alertmanager_config("eks-prometheus-exporter")
    bundle = profile("eks-prometheus-exporter").metadata.name
    rl = {"alertname": "RLTrainingStalled", "rlobs_bundle": bundle}
    assert _routes_to(config, tmp_path, {**rl, "severity": "critical"}) == {"rl-oncall"}
    assert _routes_to(config, tmp_path, {**rl, "severity": "warning"}) == {"rl-oncall"}
    cluster = {"alertname": "KubePodCrashLooping", "namespace": "kube-system"}
    assert _routes_to(config, tmp_path, {**cluster, "severity": "critical"}) == {"platform-pager"}
    assert _routes_to(config, tmp_path, {**cluster, "severity": "warning"}) == {"null"}
    other = {"alertname": "RLTrainingStalled", "rlobs_bundle": "another-team", "severity": "critical"}
    assert _routes_to(config, tmp_path, other) == {"null"}  # another bundle's RL alerts are neither ours nor cluster
    assert _routes_to(config, tmp_path, {"alertname": "Watchdog", "severity": "none"}) == {"null"}
