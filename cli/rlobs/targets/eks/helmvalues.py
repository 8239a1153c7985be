"""`eks.helmValues.<chart>`: checked against the pinned chart's keys (data/helm_keys.json) and the keys rlobs owns."""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterator, Mapping
from typing import Any

from rlobs.profile.problems import KeyPath, ProblemAt
from rlobs.profile.regions import pinned
from rlobs.profile.yamlsource import plain

# The charts each stack mode deploys (eks.mode: ai-on-eks leaves the stack to the reference Application).
CHARTS_BY_MODE = {
    "rlobs": ("fluent-operator", "kube-prometheus-stack", "opensearch-operator", "opentelemetry-collector"),
    "ai-on-eks": ("opentelemetry-collector",),
}

# kube-prometheus-stack components whose targets EKS does not expose (values.kube_prometheus_stack turns them off).
EKS_UNSCRAPABLE = ("kubeControllerManager", "kubeScheduler", "kubeEtcd", "kubeProxy")
_SELECTOR = (
    "the ServiceMonitors, PodMonitors and PrometheusRules rlobs renders carry the label `release: "
    "kube-prometheus-stack` this selector matches; another selector silently drops the RL monitors and alerts"
)
_ENDPOINT = (
    "the workload's OTLP endpoint and the collector's ServiceMonitor are rendered from this name and port; change "
    "it and the app exports to nothing"
)
# chart -> key path -> why rlobs owns it (and the profile key that sets it, where there is one).
OWNED: dict[str, dict[tuple[str, ...], str]] = {
    "kube-prometheus-stack": {
        ("grafana", "admin"): "the admin credentials come from a Secret: set eks.grafana.adminSecret",
        ("grafana", "adminUser"): "the admin credentials come from a Secret: set eks.grafana.adminSecret",
        ("grafana", "adminPassword"): "the admin credentials come from a Secret: set eks.grafana.adminSecret",
        ("grafana", "envValueFrom"): "the OpenSearch datasource credentials: set eks.opensearch.credentialsSecret",
        ("grafana", "sidecar", "dashboards", "label"): "the RL dashboards' ConfigMaps carry this label",
        ("grafana", "sidecar", "dashboards", "labelValue"): "the RL dashboards' ConfigMaps carry this label",
        ("grafana", "sidecar", "datasources", "uid"): "every RL dashboard queries the datasource uid prometheus",
        ("alertmanager", "config"): "receivers and routes come from eks.alertmanagerReceivers",
        ("alertmanager", "alertmanagerSpec", "secrets"): "the receivers' Secrets: set eks.alertmanagerReceivers",
        ("prometheus", "prometheusSpec", "retention"): "set eks.prometheus.retention",
        ("prometheus", "prometheusSpec", "storageSpec"): "set eks.prometheus.storageSize and storageClass",
        ("prometheus", "prometheusSpec", "resources"): "set eks.prometheus.requests and limits",
        **{
            ("prometheus", "prometheusSpec", f"{kind}{suffix}"): _SELECTOR
            for kind in ("serviceMonitorSelector", "podMonitorSelector", "ruleSelector")
            for suffix in ("", "NilUsesHelmValues")
        },
        **{
            (component, "enabled"): "EKS does not expose it: its scrape fails and its alerts never clear"
            for component in EKS_UNSCRAPABLE
        },
        ("crds", "enabled"): "the Prometheus Operator CRDs the RL monitors and rules need come with this chart",
    },
    "opentelemetry-collector": {
        ("fullnameOverride",): _ENDPOINT,
        ("mode",): _ENDPOINT,
        ("ports", "prom-exporter"): _ENDPOINT,
        ("config", "receivers", "otlp"): _ENDPOINT,
        ("config", "exporters", "prometheus"): "Prometheus scrapes this exporter for the RL metrics",
        ("config", "service", "pipelines", "metrics"): "the RL metrics pipeline (OTLP in, Prometheus out)",
        ("extraEnvs",): "the OpenSearch credentials come from eks.opensearch.credentialsSecret (add your own "
        "variables with extraEnvsFrom)",
    },
    "opensearch-operator": {("fullnameOverride",): "the OpenSearch objects in stack/ name this operator"},
    "fluent-operator": {
        ("fluentbit", "output"): "logs go to the OpenSearch ClusterOutput in stack/, whose credentials come from "
        "eks.opensearch.credentialsSecret",
    },
}

# Where the pinned charts run a value through Helm's `tpl`, which executes `{{ ... }}` in it at `helm template` time
# with the release's whole context (a value there is code, not data): the file under the chart's templates/ that does
# -> its key paths (`*` is any one key), from `grep -rn tpl` over kube-prometheus-stack 76.3.0 and
# opentelemetry-collector 0.170.0 (fluent-operator 3.2.0 and opensearch-operator 2.7.0 have no tpl call). A value at or
# below one may not hold `{{`; rlobs renders none into them, and the profile values it places there cannot hold one.
TPL_VALUES: dict[str, dict[str, tuple[str, ...]]] = {
    "kube-prometheus-stack": {
        "alertmanager/secret.yaml": ("alertmanager.config", "alertmanager.stringConfig"),
        "alertmanager/alertmanager.yaml": tuple(
            f"alertmanager.alertmanagerSpec.{key}"
            for key in (
                "alertmanagerConfigSelector",
                "alertmanagerConfigNamespaceSelector",
                "externalUrl",
                "serviceName",
                "storage",
            )
        ),
        "prometheus/prometheus.yaml": tuple(
            f"prometheus.prometheusSpec.{key}"
            for key in (
                "*Selector",
                "externalLabels",
                "externalUrl",
                "secrets",
                "configMaps",
                "remoteRead",
                "remoteWrite",
                "podMetadata",
                "serviceName",
                "storageSpec",
                "excludedFromEnforcement",
            )
        ),
        "prometheus/additional*.yaml": ("prometheus.prometheusSpec.additional*",),
        "thanos-ruler/ruler.yaml": tuple(
            f"thanosRuler.thanosRulerSpec.{key}"
            for key in ("*Selector", "additionalArgs", "externalPrefix", "labels", "serviceName")
        ),
        "exporters/*/servicemonitor.yaml": ("*.serviceMonitor.*elabelings", "*.serviceMonitor.selector"),
        "*/ingress*.yaml": tuple(
            f"*.{i}.{k}" for i in ("ingress", "thanosIngress") for k in ("annotations", "hosts", "paths", "tls")
        ),
        "*/ingressperreplica.yaml": ("*.ingressPerReplica.annotations",),
        "*/route.yaml": ("*.route.*.additionalRules",),
        "grafana/configmaps-datasources.yaml": ("grafana.additionalDataSources", "grafana.deleteDatasources"),
        "prometheus-operator/deployment.yaml": (
            "prometheusOperator.denyNamespaces",
            "prometheusOperator.secretFieldSelector",
        ),
        "extra-objects.yaml": ("extraManifests",),
    },
    "opentelemetry-collector": {
        "_config.tpl": ("config",),
        "_helpers.tpl": ("additionalLabels", "podAnnotations", "podLabels", "configMap.existingName"),
        "deployment.yaml": ("annotations",),
        "<kind>.yaml": ("*.annotations",),
        "clusterrolebinding.yaml": ("clusterRole.clusterRoleBinding.annotations",),
        "_pod.tpl": ("extraVolumes", "extraVolumeMounts", "extraContainers", "initContainers"),
        "extraManifests.yaml": ("extraManifests",),
        "ingress.yaml": ("ingress.hosts", "ingress.additionalIngresses"),
        "httproute.yaml": ("httproute.rules",),
    },
}


def tpl_file(chart: str, path: tuple[str | int, ...]) -> str | None:
    """The chart file that runs the value at `path` (or a value above it) through tpl, or None."""
    for where, patterns in TPL_VALUES.get(chart, {}).items():
        for parts in (pattern.split(".") for pattern in patterns):
            if len(path) >= len(parts) and all(map(fnmatch.fnmatchcase, map(str, path), parts)):
                return where
    return None


def _template_text(chart: str, value: Any, path: tuple[str | int, ...], at: KeyPath) -> Iterator[ProblemAt]:
    """`{{` in a key or string value that the chart runs through tpl: Helm would execute it."""
    items = value.items() if isinstance(value, Mapping) else enumerate(value) if isinstance(value, list | tuple) else ()
    for key, sub in items:
        here = (*path, key)
        where = tpl_file(chart, here)
        if where is not None and ("{{" in str(key) or (isinstance(sub, str) and "{{" in sub)):
            yield ProblemAt(
                (*at, *here),
                f"expected text without '{{{{': {chart} runs this value through Helm's tpl (templates/{where}), "
                "which would execute it as a template, got a template action",
            )
        else:
            yield from _template_text(chart, sub, here, at)


# A key that names a credential and holds a literal value (not the name of a Secret, a key in one, or a file). Both
# patterns as text: re compiles (and caches) them when Helm values are first checked, not on every start.
_SECRET_NAME = r"(?i)(password|passwd|token|api[-_]?key|webhook[-_]?url|routing[-_]?key|credentials?)"
# A key naming where a credential is (existingSecret, passwordKey, tokenFile, usernames), not the credential itself.
_REFERENCE = r"(?i)(secret(name|ref)?|ref|file|path|name|(password|passwd|token)key)$"


def index() -> dict[str, Any]:
    """chart -> {version, keys}: the packaged key index of every chart the EKS bundle deploys."""
    return pinned("helm_keys.json")


def override_problems(mode: str, overrides: Mapping[str, Mapping[str, Any]]) -> list[ProblemAt]:
    """Every problem of eks.helmValues; paths relative to the `eks:` section."""
    problems = []
    for chart, values in overrides.items():
        at: KeyPath = ("helmValues", chart)
        if chart not in CHARTS_BY_MODE[mode]:
            deployed = ", ".join(CHARTS_BY_MODE[mode])
            why = " (the reference stack deploys the others with its own values)" if mode == "ai-on-eks" else ""
            problems.append(ProblemAt(at, f"expected a chart this bundle deploys ({deployed}){why}, got {chart!r}"))
            continue
        found = [*_walk(chart, index()[chart]["keys"], values, (), at), *_template_text(chart, values, (), at)]
        secrets = list(_inline_secrets(values, at))
        # One problem per key: a key rlobs owns says which profile key to use; otherwise a literal secret says
        # how to reference a Secret, which matters more than the key's spelling.
        owned = {f.path for f in found if f.message.startswith("expected no override")}
        secret_paths = {s.path for s in secrets} - owned
        problems += [f for f in found if f.path not in secret_paths]
        problems += [s for s in secrets if s.path in secret_paths]
    return problems


def _inline_secrets(value: Any, at: KeyPath) -> Iterator[ProblemAt]:
    """Literal values under credential-like keys anywhere in the overrides, lists included (remoteWrite basicAuth)."""
    items = value.items() if isinstance(value, Mapping) else enumerate(value) if isinstance(value, list | tuple) else ()
    for key, sub in items:
        where = (*at, key)
        if isinstance(sub, str) and sub and re.search(_SECRET_NAME, str(key)) and not re.search(_REFERENCE, str(key)):
            yield ProblemAt(
                where,
                "expected a reference to a Kubernetes Secret, not an inline secret (rlobs never writes credentials "
                "to git): use the chart's existingSecret-style key naming a Secret created with kubectl, got a "
                "literal value",
            )
        else:
            yield from _inline_secrets(sub, where)


def _walk(chart: str, node: Any, values: Mapping[str, Any], path: tuple[str, ...], at: KeyPath) -> Iterator[ProblemAt]:
    for key, value in values.items():
        here = (*path, str(key))
        where = (*at, *here)
        owned = OWNED.get(chart, {}).get(here)
        if owned is not None:
            yield ProblemAt(where, f"expected no override of a key rlobs owns ({owned}), got one")
        elif isinstance(node, dict) and key not in node:
            yield _unknown(chart, node, here, where)
        elif isinstance(value, Mapping):
            # Below an open map ("*") any keys go (its owned ones, like the collector's `config.exporters.prometheus`,
            # are still refused); a value that is no mapping (scalar or list) is replaced whole, as Helm does.
            yield from _walk(chart, node[key] if isinstance(node, dict) else "*", value, here, at)


def _unknown(chart: str, node: dict[str, Any], path: tuple[str, ...], where: KeyPath) -> ProblemAt:
    known = sorted(node)
    hint = difflib.get_close_matches(path[-1], known, n=1)
    parent = ".".join(path[:-1]) or "top level"
    chart_at = f"{chart} {index()[chart]['version']}"
    if hint:
        expected = f"did you mean '{hint[0]}'? expected a key of {chart_at} at {parent}"
    else:
        listed = ", ".join(known) if len(known) <= 12 else ", ".join(known[:12]) + f", ... ({len(known)} keys)"
        expected = f"expected a key of {chart_at} at {parent}: {listed}"
    return ProblemAt(where, f"unknown key: {expected}, got {path[-1]!r}")


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """`override` over `base` as Helm merges values files: maps merge key by key, anything else is replaced."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = plain(value)
    return out
