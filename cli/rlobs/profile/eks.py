"""The `eks:` section of a profile: the JARK cluster, GitOps source and the observability stack."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator
from pydantic.alias_generators import to_camel

from rlobs.profile.fields import DEFAULT_SEVERITIES, AlertGroup, DnsLabel, Duration, Model, Severity, matching
from rlobs.profile.helmvalues import override_problems
from rlobs.profile.problems import ProblemAt, raise_all
from rlobs.profile.terraform import variable_problems

AwsRegion = Annotated[
    str, AfterValidator(matching(r"[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]", "an AWS region like us-west-2"))
]
EksClusterName = Annotated[
    str,
    AfterValidator(
        matching(
            r"[0-9A-Za-z][A-Za-z0-9_-]{0,99}",
            "an EKS cluster name (1-100 letters, digits, '-' and '_', starting with a letter or digit)",
        )
    ),
]
KubernetesVersion = Annotated[str, AfterValidator(matching(r"1\.[0-9]{2}", "a Kubernetes minor version like 1.34"))]
GitUrl = Annotated[
    str,
    AfterValidator(
        matching(
            r"(https://|ssh://|git@)[^\s]+",
            "a Git repository URL like https://github.com/acme/gitops.git or git@github.com:acme/gitops.git",
        )
    ),
]
# HEAD follows whatever the repository's default branch is at sync time: the unpinned revision the issue is about.
GitRevision = Annotated[
    str,
    AfterValidator(
        matching(
            r"(?!HEAD$)[A-Za-z0-9][A-Za-z0-9._/-]{0,199}",
            "a branch, tag or commit like main, v1.4.0 or a commit SHA (not HEAD: name the revision to sync)",
        )
    ),
]
RepoPath = Annotated[
    str,
    AfterValidator(
        matching(
            r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*",
            "a relative path inside the repository like clusters/prod/rlobs",
        )
    ),
]
Quantity = Annotated[
    str,
    AfterValidator(matching(r"[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|m|k|M|G|T)?", "a Kubernetes quantity like 50Gi or 500m")),
]
SecretKey = Annotated[str, AfterValidator(matching(r"[-._a-zA-Z0-9]+", "a Secret key like password"))]


# The HCL values a blueprint.tfvars variable can take here (bool, number, string, list(string), map(bool)).
TfValue = bool | int | float | str | tuple[str, ...] | dict[str, bool | int | float | str]


class SecretRef(Model):
    """A key of a Kubernetes Secret; the value never appears in the profile or the bundle."""

    name: DnsLabel
    key: SecretKey


class EksCluster(Model):
    name: EksClusterName = Field(description="EKS cluster name (`name` in blueprint.tfvars).")
    region: AwsRegion
    kubernetes_version: KubernetesVersion = "1.34"


class GitOps(Model):
    repo_url: GitUrl = Field(description="The Git repository this bundle is committed to.")
    target_revision: GitRevision = Field("main", description="Branch, tag or commit ArgoCD syncs.")
    path: RepoPath = Field(description="Path of the rendered bundle inside that repository.")


class Resources(Model):
    cpu: Quantity
    memory: Quantity


class PrometheusSettings(Model):
    retention: Duration = "15d"
    storage_size: Quantity = "50Gi"
    storage_class: DnsLabel = "gp3"
    requests: Resources = Resources(cpu="500m", memory="2Gi")
    limits: Resources = Resources(cpu="2", memory="8Gi")


class GrafanaSettings(Model):
    admin_secret: DnsLabel = Field(
        "grafana-admin", description="Existing Secret with keys admin-user and admin-password."
    )


class OpenSearchSettings(Model):
    credentials_secret: DnsLabel = Field(
        "opensearch-admin-credentials", description="Existing Secret with keys username and password."
    )
    security_config_secret: DnsLabel = Field(
        "opensearch-securityconfig",
        description="Existing Secret with the OpenSearch security plugin files (internal_users.yml holds the "
        "bcrypt hash of the admin password); the README shows how to create it.",
    )
    log_writer_secret: DnsLabel = Field(
        "opensearch-log-writer",
        description="Existing Secret (keys username and password) in the workload's namespace: the OpenSearch user "
        "the Ray log sidecar writes as, allowed to write only the Ray log index; the README shows how to create it.",
    )
    storage_size: Quantity = "30Gi"
    replicas: int = Field(3, ge=1, le=9)


class Receiver(Model):
    name: DnsLabel
    type: Literal["slack", "pagerduty", "webhook"]
    secret_ref: SecretRef = Field(description="Secret key holding the Slack webhook URL, PagerDuty routing key or URL.")
    channel: str | None = Field(None, description="Slack channel, e.g. #rl-alerts.")
    alerts: AlertGroup = Field(
        "rl",
        description="rl: this bundle's RL alerts; cluster: kube-prometheus-stack's cluster alerts; all: both.",
    )
    severities: tuple[Severity, ...] | None = Field(
        None, description="Severities it gets; default critical for pagerduty, critical and warning otherwise."
    )

    @property
    def routed_severities(self) -> tuple[Severity, ...]:
        return self.severities or DEFAULT_SEVERITIES[self.type]


class EksSpec(Model):
    mode: Literal["rlobs", "ai-on-eks"] = Field(
        "rlobs",
        description="rlobs: rlobs renders and pins the stack's ArgoCD Applications; ai-on-eks: the "
        "enable_ai_ml_observability_stack Terraform flag deploys the reference stack and rlobs adds the RL layer.",
    )
    cluster: EksCluster
    gitops: GitOps
    metrics_pipeline: Literal["otel-collector", "prometheus-exporter"] = Field(
        "otel-collector",
        description="otel-collector: the app pushes OTLP to a collector that Prometheus scrapes; "
        "prometheus-exporter: Prometheus scrapes the app's own /metrics.",
    )
    prometheus: PrometheusSettings = PrometheusSettings()
    grafana: GrafanaSettings = GrafanaSettings()
    opensearch: OpenSearchSettings = OpenSearchSettings()
    alertmanager_receivers: tuple[Receiver, ...] = ()
    dcgm_exporter: bool = True
    kuberay_operator: bool = True
    ray_logs: bool = Field(
        default=True, description="Ship Ray session logs with a FluentBit sidecar (Ray workload kinds)."
    )
    terraform_variables: dict[str, TfValue] = Field(
        default_factory=dict,
        description="More ai-on-eks variables for blueprint.tfvars (declared, non-sensitive ones only), "
        "e.g. enable_nvidia_gpu_operator: true.",
    )
    helm_values: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Helm values per chart (kube-prometheus-stack, opentelemetry-collector, opensearch-operator, "
        "fluent-operator), deep-merged over what rlobs renders; every key is checked against the pinned chart's "
        "values, and keys rlobs owns are refused with the profile key to use instead.",
    )

    @model_validator(mode="after")
    def _stack_settings_need_rlobs_mode(self) -> EksSpec:
        # In ai-on-eks mode the reference stack deploys these with its own values; silently ignoring them would
        # leave the user believing their retention or Secrets apply.
        if self.mode != "ai-on-eks":
            return self
        raise_all(
            ProblemAt(
                (to_camel(key),),
                f"expected no {key} settings with eks.mode: ai-on-eks (the reference stack deploys {key} with its own "
                f"values; change them in its Argo CD Application, or use eks.mode: rlobs)",
            )
            for key in ("prometheus", "grafana", "opensearch")
            # The log writer Secret lives in the workload's namespace and is read by rlobs' own sidecar.
            if key in self.model_fields_set and getattr(self, key).model_fields_set - {"log_writer_secret"}
        )
        return self

    @model_validator(mode="after")
    def _receivers_fit_the_mode(self) -> EksSpec:
        # In ai-on-eks mode the reference stack owns Alertmanager; rlobs wires its receivers through an
        # AlertmanagerConfig, which the operator confines to alerts labelled with its own namespace (the RL alerts).
        if self.mode != "ai-on-eks":
            return self
        raise_all(
            ProblemAt(
                ("alertmanagerReceivers", i, "alerts"),
                "expected rl with eks.mode: ai-on-eks (the reference stack's Alertmanager routes the cluster alerts; "
                "rlobs wires only the RL alerts, through an AlertmanagerConfig)",
            )
            for i, r in enumerate(self.alertmanager_receivers)
            if r.alerts != "rl"
        )
        return self

    @model_validator(mode="after")
    def _helm_values(self) -> EksSpec:
        raise_all(override_problems(self.mode, self.helm_values))
        return self

    @model_validator(mode="after")
    def _terraform_variables(self) -> EksSpec:
        raise_all(variable_problems(self.mode, dcgm=self.dcgm_exporter, variables=dict(self.terraform_variables)))
        return self
