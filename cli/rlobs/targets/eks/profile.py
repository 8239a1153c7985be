"""A profile of the eks target: the `eks:` section (the JARK cluster, GitOps source and the observability stack)."""

# No `from __future__ import annotations` here: pydantic would eval() each field's annotation string when it builds
# the classes, which made building them about a tenth slower (a profile's classes are built on every cold start).

from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Field, model_validator
from pydantic.alias_generators import to_camel

from rlobs.profile.fields import (
    DEFAULT_SEVERITIES,
    AlertGroup,
    DnsLabel,
    Duration,
    Model,
    Severity,
    matching,
    with_json_pattern,
)
from rlobs.profile.git import GitRevision, GitUrl, RepoPath
from rlobs.profile.kube_versions import today, unsupported
from rlobs.profile.model import ProfileBase
from rlobs.profile.problems import ProblemAt, raise_all, repeats
from rlobs.profile.regions import listed, pinned
from rlobs.profile.worktree import DEFAULT_FOLDER
from rlobs.profile.yamlsource import get_at
from rlobs.targets.eks.helmvalues import override_problems
from rlobs.targets.eks.terraform import entry_problems, flag_problems

AWS_REGION = r"[a-z]{2,4}(-[a-z]+)+-[0-9]{1,2}"


_AWS_EXPECTED = "an AWS region like us-west-2"


def _real_region(value: str) -> str:
    table = pinned("aws_regions.json")
    return listed(value, table["regions"], _AWS_EXPECTED, "regions", table["source"])


# The list holds only names the pattern takes, so the list check is the model's rule and the pattern the editor's.
AwsRegion = Annotated[str, AfterValidator(with_json_pattern(_real_region, AWS_REGION, expected=_AWS_EXPECTED))]
_CLUSTER_EXPECTED = "an EKS cluster name (1-100 letters, digits, '-' and '_', starting with a letter or digit)"
EksClusterName = Annotated[str, AfterValidator(matching(r"[0-9A-Za-z][A-Za-z0-9_-]{0,99}", _CLUSTER_EXPECTED))]


def _supported(version: str) -> str:
    # Past extended support EKS upgrades the cluster by itself; an unreleased version makes `terraform apply` fail.
    if (problem := unsupported("eks", version, today())) is not None:
        raise ValueError(problem)
    return version


# Standard support ended, extended support still on: a warning (targets/eks/warnings.py), not a refusal.
KubernetesVersion = Annotated[
    str,
    AfterValidator(matching(r"1\.[0-9]{2}", "a Kubernetes minor version like 1.34")),
    AfterValidator(_supported),
]
DEFAULT_KUBERNETES_VERSION = "1.35"


Quantity = Annotated[
    str,
    AfterValidator(matching(r"[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|m|k|M|G|T)?", "a Kubernetes quantity like 50Gi or 500m")),
]
# Kubernetes IsConfigMapKey (apimachinery validation.go): [-._a-zA-Z0-9]+, at most 253, not "." or "..", and not
# starting with "..".
SecretKey = Annotated[
    str,
    AfterValidator(
        matching(r"(?!\.\.)(?!\.$)[-._a-zA-Z0-9]+", "a Secret key like password (not . or .., no leading ..)", 253)
    ),
]
# Where Alertmanager posts a Slack notification: #channel, @user or a channel id. The field is a Go template in
# Alertmanager (slack_config.channel), so nothing here may look like one: Slack channel names are lowercase
# letters, digits, '-', '_' and '.', at most 80 characters (slack.com/help: channel names).
_SLACK_EXPECTED = "a Slack channel like #rl-alerts, a user like @oncall or a channel id like C0123456789"
SlackChannel = Annotated[
    str, AfterValidator(matching(r"[#@][a-z0-9][a-z0-9._-]{0,79}|[CGD][A-Z0-9]{8,20}", _SLACK_EXPECTED))
]


# The HCL values a blueprint.tfvars variable can take here (bool, number, string, list(string), map(bool)).
TfValue = bool | int | float | str | tuple[str, ...] | dict[str, bool | int | float | str]


def _declared_variables(value: Any) -> Any:
    # Each entry is checked against the variable's declared Terraform type first: the union above would report a
    # bad value once per member, at key paths the profile does not have, and stop the other entries' checks.
    raise_all(entry_problems(value))
    return value


TerraformVariables = Annotated[dict[str, TfValue], BeforeValidator(_declared_variables)]


class SecretRef(Model):
    """A key of a Kubernetes Secret; the value never appears in the profile or the bundle."""

    name: DnsLabel
    key: SecretKey


class EksCluster(Model):
    name: EksClusterName = Field(description="EKS cluster name (`name` in blueprint.tfvars).")
    region: AwsRegion = Field(
        description="A real AWS region: one of cli/rlobs/data/aws_regions.json (the AWS SDKs' list, pinned)."
    )
    kubernetes_version: KubernetesVersion = DEFAULT_KUBERNETES_VERSION


class GitOps(Model):
    repo_url: GitUrl = Field(description="The Git repository this bundle is committed to.")
    target_revision: GitRevision = Field("main", description="Branch, tag or commit ArgoCD syncs.")
    path: RepoPath = Field(
        DEFAULT_FOLDER,
        description="Path of the rendered bundle inside that repository; rendering into a folder of a git work tree "
        "sets it to that folder's path (a different one is refused).",
    )


class Resources(Model):
    cpu: Quantity
    memory: Quantity


class PrometheusSettings(Model):
    retention: Duration = "15d"
    storage_size: Quantity = "50Gi"
    storage_class: DnsLabel = "gp3"
    requests: Resources = Resources(cpu="500m", memory="2Gi")
    limits: Resources = Resources(cpu="2", memory="8Gi")
    remote_write: Literal["all", "aggregated"] = Field(
        "all",
        description="What Prometheus sends to the remoteWrite URLs of eks.helmValues: every series it scrapes (all), "
        "or only the RL series summed per run by recording rules (aggregated; rlobs plan shows the effect).",
    )


# How Grafana reaches another cluster's Prometheus. No userinfo, query or fragment (credentials are Secret
# references), and no `$`: Grafana expands $VAR and ${VAR} in provisioning files
# (https://grafana.com/docs/grafana/latest/administration/provisioning/#using-environment-variables).
_URL = r"https?://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?(/[-A-Za-z0-9._~/]*)?"
_URL_EXPECTED = "a Prometheus URL like https://prometheus.prod.example.com (no user, password, query or `$`)"
PrometheusUrl = Annotated[str, AfterValidator(matching(_URL, _URL_EXPECTED, 2048))]
BasicAuthUser = Annotated[
    str, AfterValidator(matching(r"[A-Za-z0-9][-A-Za-z0-9._@]{0,63}", "a user name like grafana (no `$`)"))
]


class BasicAuth(Model):
    username: BasicAuthUser
    password_secret: SecretRef = Field(description="Secret key (in Grafana's namespace) holding the password.")


class PrometheusEndpoint(Model):
    """Where a Grafana elsewhere queries this cluster's Prometheus; credentials only as Secret references."""

    url: PrometheusUrl = Field(description="The Prometheus HTTP API base URL, as the Grafana hub reaches it.")
    bearer_token_secret: SecretRef | None = Field(
        None, description="Secret key (in Grafana's namespace) holding a bearer token for it."
    )
    basic_auth: BasicAuth | None = None

    @model_validator(mode="after")
    def _one_auth(self) -> Self:
        if self.bearer_token_secret is not None and self.basic_auth is not None:
            raise_all([ProblemAt(("basicAuth",), "expected bearerTokenSecret or basicAuth, got both")])
        return self


class RemotePrometheus(PrometheusEndpoint):
    name: DnsLabel = Field(description="The cluster it belongs to: datasource `Prometheus (<name>)`.")


class GrafanaSettings(Model):
    admin_secret: DnsLabel = Field(
        "grafana-admin", description="Existing Secret with keys admin-user and admin-password."
    )
    remote_prometheus: tuple[RemotePrometheus, ...] = Field(
        (),
        description="Other clusters' Prometheus servers, one Grafana datasource each (a fleet sets this on its "
        "views.grafana.hub); every RL dashboard's `cluster` variable picks one.",
    )

    @model_validator(mode="after")
    def _one_datasource_per_cluster(self) -> Self:
        raise_all(
            ProblemAt(
                ("remotePrometheus", i, "name"),
                f"expected each cluster once (one datasource uid each), got {name!r} again",
            )
            for i, name in repeats(remote.name for remote in self.remote_prometheus)
        )
        return self


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
    channel: SlackChannel | None = Field(None, description="Slack channel, e.g. #rl-alerts.")
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
    cloudwatch: bool = Field(
        default=False,
        description="Keep ai-on-eks's amazon-cloudwatch-observability EKS add-on (CloudWatch agent and its own Fluent "
        "Bit: Container Insights, billed by CloudWatch, and every container log collected a second time).",
    )
    ray_logs: bool = Field(
        default=True, description="Ship Ray session logs with a FluentBit sidecar (Ray workload kinds)."
    )
    terraform_variables: TerraformVariables = Field(
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
    def _fits_ai_on_eks_mode(self) -> Self:
        if self.mode != "ai-on-eks":
            return self
        # The reference stack deploys these with its own values; silently ignoring them would leave the user
        # believing their retention or Secrets apply.
        stack = [
            ProblemAt(
                (to_camel(key),),
                f"expected no {key} settings with eks.mode: ai-on-eks (the reference stack deploys {key} with its own "
                f"values; change them in its Argo CD Application, or use eks.mode: rlobs)",
            )
            for key in ("prometheus", "grafana", "opensearch")
            # The log writer Secret lives in the workload's namespace and is read by rlobs' own sidecar.
            if key in self.model_fields_set and getattr(self, key).model_fields_set - {"log_writer_secret"}
        ]
        # The reference stack owns Alertmanager; rlobs wires its receivers through an AlertmanagerConfig, which the
        # operator confines to alerts labelled with its own namespace (the RL alerts).
        receivers = [
            ProblemAt(
                ("alertmanagerReceivers", i, "alerts"),
                "expected rl with eks.mode: ai-on-eks (the reference stack's Alertmanager routes the cluster alerts; "
                "rlobs wires only the RL alerts, through an AlertmanagerConfig)",
            )
            for i, r in enumerate(self.alertmanager_receivers)
            if r.alerts != "rl"
        ]
        raise_all([*stack, *receivers])
        return self

    @model_validator(mode="after")
    def _receiver_names(self) -> Self:
        # Alertmanager refuses a config with two receivers of one name, and rlobs routes unmatched alerts to its
        # own `null` receiver (prometheus/alertmanager config.go: "notification config name ... is not unique").
        names = [receiver.name for receiver in self.alertmanager_receivers]
        null = "expected a name other than null (rlobs routes silenced alerts to its own `null` receiver), got 'null'"
        found = {i: f"expected a name no other receiver has, got {name!r} again" for i, name in repeats(names)}
        found |= {i: null for i, name in enumerate(names) if name == "null"}  # a second null: one problem, this one
        raise_all(ProblemAt(("alertmanagerReceivers", i, "name"), message) for i, message in found.items())
        return self

    @model_validator(mode="after")
    def _aggregate_what_is_remote_written(self) -> Self:
        at = ("kube-prometheus-stack", "prometheus", "prometheusSpec", "remoteWrite")
        if self.prometheus.remote_write == "aggregated" and not get_at(self.helm_values, at):
            message = "expected a remote write to aggregate for (eks.helmValues." + ".".join(at) + "), got none"
            raise ProblemAt(("prometheus", "remoteWrite"), message)
        return self

    @model_validator(mode="after")
    def _helm_values(self) -> Self:
        raise_all(override_problems(self.mode, self.helm_values))
        return self

    @model_validator(mode="after")
    def _terraform_variables(self) -> Self:
        found = flag_problems(self.mode, dcgm=self.dcgm_exporter, values=self.terraform_variables)
        raise_all(ProblemAt(("terraformVariables", key), problem) for key, problem in found)
        return self


class EksProfile(ProfileBase):
    target: Literal["eks"] = Field(description="Which bundle to render.")
    eks: EksSpec = Field(description="The EKS cluster, GitOps source and observability stack.")
