"""The JSON Schema `rlobs schema` prints (and `init` writes) accepts every shipped profile and rejects typos."""

from __future__ import annotations

import functools
import json

import jsonschema
import pytest
import yaml

from rlobs.commands import schema_text
from testing.helpers import all_profiles


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    """Built once: the schema is a pure function of the installed package."""
    schema = json.loads(schema_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("name", sorted(all_profiles()))
def test_shipped_profiles_satisfy_the_schema(name: str) -> None:
    errors = sorted(_validator().iter_errors(yaml.safe_load(all_profiles()[name])), key=str)
    assert not errors, "\n".join(e.message for e in errors)


def test_schema_rejects_unknown_keys() -> None:
    data = yaml.safe_load(all_profiles()["eks-jark"])
    data["workload"]["contianer"] = "x"
    assert any("contianer" in e.message for e in _validator().iter_errors(data))


_RUN = "    model: Qwen2.5-7B-Instruct"
_ZONE = "location: us-central1\n  cluster: rl-cluster\n  clusterMode: existing"
_MODE = "clusterMode: existing     # or create-standard / create-autopilot\n  manage: scripts"

# (profile, text to replace, replacement): field rules the editor must flag exactly as `validate` does.
CORPUS = [
    ("eks-jark", "region: us-west-2", "region: eu-central-1"),
    ("eks-jark", "region: us-west-2", "region: us-west"),
    ("eks-jark", "region: us-west-2", "region: US-WEST-2"),
    ("eks-jark", "name: jark-stack", "name: -jark"),
    ("eks-jark", 'kubernetesVersion: "1.35"', 'kubernetesVersion: "1.3"'),
    ("eks-jark", "repoUrl: https://github.com/acme/gitops.git", "repoUrl: git@github.com:acme/gitops.git"),
    ("eks-jark", "repoUrl: https://github.com/acme/gitops.git", "repoUrl: github.com/acme/gitops"),
    ("eks-jark", "targetRevision: main", "targetRevision: HEAD"),
    ("eks-jark", "targetRevision: main", "targetRevision: v1.4.0"),
    ("eks-jark", "mode: rlobs", "mode: stack"),
    ("eks-jark", "  name: grpo-trainer", "  name: Grpo-Trainer"),
    ("eks-jark", "  namespace: rl", "  namespace: rl-"),
    ("eks-jark", "  name: rl-eks", "  name: " + "a" * 64),
    ("eks-jark", "  name: rl-eks", "  name: " + "a" * 63),
    ("eks-jark", "secretRef: {name: alertmanager-slack, key: webhook-url}", "secretRef: {name: x, key: 'a b'}"),
    ("eks-jark", "algorithm: grpo", "algorithm: 'gr po'"),
    ("eks-jark", "    model: Qwen2.5-7B-Instruct", "    model: Qwen2.5-7B-Instruct\n  exportInterval: '15'"),
    ("eks-jark", "    model: Qwen2.5-7B-Instruct", "    model: Qwen2.5-7B-Instruct\n  exportInterval: 15s"),
    ("gke-managed-otel", "project: my-rl-project", "project: my-google-proj"),
    ("gke-managed-otel", "project: my-rl-project", "project: rl-obs-dev"),
    ("gke-managed-otel", "project: my-rl-project", "project: My-Project"),
    ("gke-managed-otel", "location: us-central1", "location: us-central1-a"),
    ("gke-managed-otel", "location: us-central1", "location: uscentral1"),
    ("gke-managed-otel", "cluster: rl-cluster", "cluster: rl_cluster"),
    ("gke-managed-otel", "naming: telemetry-api", "naming: otlp"),
    ("gke-managed-otel", "target: gke", "target: eks"),
    ("gke-managed-otel", "gke:", "gcp:"),
    # Cross-field rules (rlobs.profile.schema): the target's own section, then each validator across keys.
    ("gke-managed-otel", "target: gke", "target: gke\neks: {}"),
    ("eks-jark", "  kind: RayJob", "  kind: JobSet"),
    ("eks-jark", "  kind: RayJob", "  kind: JobSet\n  replicatedJobs: [trainer, {name: rollout, container: vllm}]"),
    ("eks-jark", "  kind: RayJob", "  kind: JobSet\n  replicatedJobs: []"),
    ("eks-jark", "  kind: RayJob", "  kind: RayJob\n  replicatedJobs: [trainer]"),
    ("eks-jark", "  kind: RayJob", "  kind: RayJob\n  replicatedJobs: []"),
    ("eks-jark", _RUN, _RUN + "\n  tracker: {kind: wandb, entity: rl}"),
    ("eks-jark", _RUN, _RUN + "\n  tracker: {kind: wandb, entity: rl, project: grpo}"),
    ("eks-jark", _RUN, _RUN + "\n  tracker: {kind: wandb, entity: rl, project: grpo, experiment: '1'}"),
    ("eks-jark", _RUN, _RUN + "\n    id: run:7\n  tracker: {kind: wandb, entity: rl, project: grpo}"),
    (
        "eks-jark",
        _RUN,
        _RUN + "\n    id: run:7\n  tracker: {kind: mlflow, url: 'https://ml.example.com', experiment: '3'}",
    ),
    ("eks-jark", _RUN, _RUN + "\n  tracker: {kind: mlflow, experiment: '3'}"),
    ("eks-jark", _RUN, _RUN + "\n  tracker: {kind: mlflow, url: 'https://ml.example.com', experiment: '3', entity: x}"),
    ("eks-jark", "    - name: rl-oncall", "    - name: 'null'"),
    (
        "eks-jark",
        "  alertmanagerReceivers:",
        "  terraformVariables: {observability_mcp_enabled: true}\n  alertmanagerReceivers:",
    ),
    (
        "eks-jark",
        "  alertmanagerReceivers:",
        "  terraformVariables: {observability_mcp_enabled: false}\n  alertmanagerReceivers:",
    ),
    ("eks-ai-on-eks", "  metricsPipeline:", "  prometheus: {retention: 7d}\n  metricsPipeline:"),
    ("eks-ai-on-eks", "  metricsPipeline:", "  prometheus: {}\n  metricsPipeline:"),
    ("eks-ai-on-eks", "  metricsPipeline:", "  opensearch: {logWriterSecret: writer}\n  metricsPipeline:"),
    ("eks-ai-on-eks", "  metricsPipeline:", "  grafana: {adminSecret: g}\n  metricsPipeline:"),
    ("eks-ai-on-eks", "      type: webhook", "      type: webhook\n      alerts: cluster"),
    ("eks-ai-on-eks", "observability_mcp_enabled: false", "observability_mcp_enabled: true"),
    ("eks-ai-on-eks", "  mode: ai-on-eks", "  mode: rlobs"),
    ("eks-ai-on-eks", "  mode: ai-on-eks", "  mode: rlobs\n  dcgmExporter: false"),
    (
        "eks-ai-on-eks",
        "enable_nvidia_gpu_operator_dcgm_exporter: false",
        "enable_nvidia_gpu_operator_dcgm_exporter: true",
    ),
    ("eks-ai-on-eks", "enable_nvidia_gpu_operator_dcgm_exporter: false", "enable_kube_prometheus_stack: false"),
    ("eks-ai-on-eks", "availability_zones_count: 3", "availability_zones_count: 5"),
    ("eks-ai-on-eks", "availability_zones_count: 3", "availability_zones_count: '3'"),
    ("eks-ai-on-eks", "availability_zones_count: 3", "enable_kube_prometheus_stack: true"),
    ("eks-ai-on-eks", "availability_zones_count: 3", "enable_argocd: true"),
    ("eks-ai-on-eks", "availability_zones_count: 3", "region: eu-west-1"),
    ("eks-ai-on-eks", "availability_zones_count: 3", "huggingface_token: x"),
    ("eks-ai-on-eks", "availability_zones_count: 3", "no_such_variable: 1"),
    ("eks-ai-on-eks", "availability_zones_count: 3", "enable_cluster_addons: {metrics-server: false}"),
    ("eks-ai-on-eks", "availability_zones_count: 3", "enable_cluster_addons: {metrics-server: true, coredns: true}"),
    ("gke-managed-otel", "exportInterval: 30s", "exportInterval: 2s"),
    ("gke-managed-otel", "exportInterval: 30s", "exportInterval: 300s"),
    ("gke-managed-otel", "exportInterval: 30s", "exportInterval: 301s"),
    ("gke-managed-otel", "exportInterval: 30s", "exportInterval: 5m"),
    ("gke-managed-otel", "exportInterval: 30s", "exportInterval: 6m"),
    ("gke-managed-otel", "exportInterval: 30s", "exportInterval: 1h"),
    ("gke-managed-otel", "  namespace: rl", "  namespace: kube-rl"),
    ("gke-managed-otel", "  namespace: rl", "  namespace: gmp-public"),
    ("gke-managed-otel", "  namespace: rl", "  namespace: gmp-rl"),
    ("gke-managed-otel", "clusterMode: existing", "clusterMode: create-autopilot"),
    ("gke-managed-otel", "location: us-central1", "location: us-central1-a"),
    ("gke-managed-otel", _ZONE, _ZONE.replace("us-central1", "us-central1-a").replace("existing", "create-autopilot")),
    ("gke-managed-otel", _MODE, "clusterMode: create-standard\n  manage: terraform"),
    ("gke-managed-otel", _MODE, "clusterMode: create-standard\n  manage: terraform\n  deletionProtection: true"),
    ("gke-managed-otel", _MODE, "clusterMode: existing\n  manage: terraform\n  deletionProtection: false"),
    ("gke-managed-otel", _MODE, "clusterMode: create-autopilot\n  manage: scripts\n  deletionProtection: null"),
    ("gke-managed-otel", "naming: telemetry-api", "naming: gmp-collector"),
    ("gke-managed-otel", "naming: telemetry-api", "naming: gmp-collector\n  collectorEndpoint: http://otel.obs:4317"),
    ("gke-managed-otel", "naming: telemetry-api", "naming: telemetry-api\n  collectorEndpoint: http://otel.obs:4317"),
    ("gke-managed-otel", "logs: false", "logs: false\n  userLabels: {team: rl-research, cost_center: '42'}"),
    ("gke-managed-otel", "logs: false", "logs: false\n  userLabels: {rlobs_bundle: x}"),
    ("gke-managed-otel", "logs: false", "logs: false\n  userLabels: {Team: rl}"),
    ("gke-managed-otel", "logs: false", "logs: false\n  userLabels: {team: RL}"),
    # Free text: one printable line for the terminal table of `rlobs blueprints`.
    *(
        (
            "eks-jark",
            "  description: EKS JARK stack with pinned ArgoCD Applications, Grafana dashboards and PrometheusRules",
            f"  description: {text}",
        )
        for text in ('"\\e[31mEKS"', '"EKS \\u202e"', '"two\\nlines"', "Été, ok", "'" + "x" * 201 + "'")
    ),
    # Cloud Monitoring user labels and channel names, key by key.
    ("gke-managed-otel", "  notificationChannels: []", "  userLabels: {team: rl-research}"),
    ("gke-managed-otel", "  notificationChannels: []", "  userLabels: {Team: rl}"),
    ("gke-managed-otel", "  notificationChannels: []", "  userLabels: {team: RL}"),
    (
        "gke-managed-otel",
        "  notificationChannels: []",
        "  notificationChannels: [projects/p-123456/notificationChannels/1]",
    ),
    ("gke-managed-otel", "  notificationChannels: []", "  notificationChannels: [projects/p/channels/1]"),
    ("gke-managed-otel", "  notificationChannels: []", "  notificationChannels: [{name: 'projects/p/x'}]"),
]


@pytest.mark.parametrize(("name", "old", "new"), CORPUS, ids=[f"{n}:{new.strip()[:40]}" for n, _, new in CORPUS])
def test_schema_and_validate_agree(name: str, old: str, new: str) -> None:
    from rlobs.errors import ProfileError
    from rlobs.targets import parse_profile

    base = all_profiles()[name]
    assert old in base, old
    text = base.replace(old, new, 1)
    try:
        parse_profile(text, "p.yaml")
        valid = True
    except ProfileError:
        valid = False
    errors = [e.message for e in _validator().iter_errors(yaml.safe_load(text))]
    assert (not errors) == valid, f"validate says {'ok' if valid else 'bad'}, the schema says {errors or 'ok'}"


def test_corpus_has_both_verdicts() -> None:
    # The agreement test means something only if the corpus holds good and bad profiles.
    from rlobs.errors import ProfileError
    from rlobs.targets import parse_profile

    verdicts = set()
    for name, old, new in CORPUS:
        try:
            parse_profile(all_profiles()[name].replace(old, new, 1), "p.yaml")
            verdicts.add(True)
        except ProfileError:
            verdicts.add(False)
    assert verdicts == {True, False}


def test_the_gke_export_interval_pattern_is_the_validators_range() -> None:
    import re

    from rlobs.profile.fields import duration_seconds
    from rlobs.targets.gke.profile import MAX_EXPORT_SECONDS, MIN_EXPORT_SECONDS
    from rlobs.targets.gke.schema import GKE_EXPORT_INTERVAL

    for value in [f"{n}{unit}" for unit in "smhd" for n in range(1, 400)]:
        in_range = MIN_EXPORT_SECONDS <= duration_seconds(value) <= MAX_EXPORT_SECONDS
        assert bool(re.fullmatch(GKE_EXPORT_INTERVAL, value)) == in_range, value
