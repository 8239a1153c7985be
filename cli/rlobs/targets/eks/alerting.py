"""Where alerts go: the Alertmanager routes and receivers the profile asks for, in either stack mode."""

from __future__ import annotations

from typing import Any

from rlobs.rl.labels import bundle_metadata
from rlobs.rl.slos import BURN_LABEL, SLO_LABEL
from rlobs.targets.eks.profile import EksProfile, Receiver

# Alertmanager mounts each Secret of alertmanagerSpec.secrets at /etc/alertmanager/secrets/<name>/<key>
# (prometheus-operator Alertmanager CRD, spec.secrets).
AM_SECRETS = "/etc/alertmanager/secrets"
BUNDLE_LABEL = "rlobs_bundle"  # on every RL alert (rl.facts), so routes can tell them from the cluster's
CONFIG_FILE = "alertmanagerconfig.yaml"

# receiver type -> (Alertmanager config key, its credential-file field, AlertmanagerConfig key, its Secret field).
# *_file fields: api_url_file Alertmanager >= 0.22, routing_key_file >= 0.25, url_file >= 0.26 (kube-prometheus-stack
# 76.3.0 runs v0.28); AlertmanagerConfig fields from the v0.84.1 CRD.
_KINDS = {
    "slack": ("slack_configs", "api_url_file", "slackConfigs", "apiURL"),
    "pagerduty": ("pagerduty_configs", "routing_key_file", "pagerdutyConfigs", "routingKey"),
    "webhook": ("webhook_configs", "url_file", "webhookConfigs", "urlSecret"),
}


# RLTelemetryTargetDown carries this label: a scrape problem is the platform's, so it goes where the cluster's own
# alerts go, never to the RL receivers (rlobs.rl.alerts.targetdown.ROUTE).
ROUTE_LABEL, PLATFORM = "rlobs_route", "platform"
# One fault, one page: while a run is stalled, failed or gone, the alerts that follow from it are silent. The rules
# already hold them (rlobs.rl.alerts.lifecycle.training_ok); the inhibition keeps it so across evaluation delays.
DEPENDENT = ("RLRewardCollapse", "RLLossSpike", "RLMfuLow", "RLLoopRegression", "RLSyncLatencyHigh")
RUN_LABEL = "rl_run_id"


def _group(bundle: str, r: Receiver) -> list[list[str]]:
    """Matcher sets (any of them) for a receiver's alerts: the RL ones, the others (cluster, platform warnings), all."""
    rl = [f'{BUNDLE_LABEL} = "{bundle}"', f'{ROUTE_LABEL} != "{PLATFORM}"']
    platform = [f'{BUNDLE_LABEL} = "{bundle}"', f'{ROUTE_LABEL} = "{PLATFORM}"']
    groups: dict[str, list[list[str]]] = {"rl": [rl], "cluster": [[f'{BUNDLE_LABEL} = ""'], platform], "all": [[]]}
    return groups[r.alerts]


Matcher = tuple[str, str, str]  # label, match type, value


def _inhibitions(*, slos: bool) -> list[tuple[Matcher, Matcher, str]]:
    """(source, target, shared label): a run's stall or target down mutes its dependents; an SLO's page its ticket."""
    dependent = ("alertname", "=~", "|".join(DEPENDENT))
    found = [(("alertname", "=", a), dependent, RUN_LABEL) for a in ("RLTrainingStalled", "RLTelemetryTargetDown")]
    if slos:
        found.append(((BURN_LABEL, "=", "page"), (BURN_LABEL, "=", "ticket"), SLO_LABEL))
    return found


def _text(m: Matcher) -> str:
    return f'{m[0]} {m[1]} "{m[2]}"'


def _cr(m: Matcher) -> dict[str, str]:
    return {"name": m[0], "value": m[2], "matchType": m[1]}


def _severities(r: Receiver) -> Matcher:
    return ("severity", "=~", "|".join(r.routed_severities))


def alertmanager_config(bundle: str, receivers: tuple[Receiver, ...], *, slos: bool = False) -> dict[str, Any]:
    """rlobs mode: routes and receivers of the stack's Alertmanager (`alertmanager.config` of the chart)."""
    mine = _text((BUNDLE_LABEL, "=", bundle))
    routes: list[dict[str, Any]] = [{"receiver": "null", "matchers": ['alertname = "Watchdog"']}]
    routes += [
        {"receiver": r.name, "matchers": [*group, _text(_severities(r))], "continue": True}
        for r in receivers
        for group in _group(bundle, r)
    ]
    return {
        "route": {
            "receiver": "null",
            "group_by": ["namespace", "alertname"],
            "group_wait": "30s",
            "group_interval": "5m",
            "repeat_interval": "12h",
            "routes": routes,
        },
        "receivers": [{"name": "null"}, *(_receiver(r) for r in receivers)],
        "inhibit_rules": [
            {
                "source_matchers": [mine, _text(source)],
                "target_matchers": [mine, _text(target)],
                "equal": [BUNDLE_LABEL, on],
            }
            for source, target, on in _inhibitions(slos=slos)
        ],
    }


def _receiver(r: Receiver, *, cr: bool = False) -> dict[str, Any]:
    key, file_field, cr_key, secret_field = _KINDS[r.type]
    ref = r.secret_ref
    if cr:
        key, config = cr_key, {secret_field: {"name": ref.name, "key": ref.key}, "sendResolved": True}
    else:
        config = {file_field: f"{AM_SECRETS}/{ref.name}/{ref.key}", "send_resolved": True}
    if r.type == "slack" and r.channel:
        config["channel"] = r.channel
    return {"name": r.name, key: [config]}


def alertmanager_config_cr(profile: EksProfile) -> dict[str, Any]:
    """ai-on-eks mode (the reference stack owns Alertmanager's config): an AlertmanagerConfig and its Secrets in the
    workload's namespace; its routes get its namespace's alerts only (alertmanagerConfigMatcherStrategy OnNamespace)."""
    receivers = profile.eks.alertmanager_receivers
    bundle = profile.metadata.name
    # RL receivers get no platform warnings; the others get every alert of the namespace.
    rl_only = {"rl": [_cr((ROUTE_LABEL, "!=", PLATFORM))], "cluster": [], "all": []}
    return {
        "apiVersion": "monitoring.coreos.com/v1alpha1",
        "kind": "AlertmanagerConfig",
        "metadata": bundle_metadata(f"rlobs-{bundle}", profile.workload.namespace, bundle),
        "spec": {
            "route": {
                "receiver": "null",
                "groupBy": ["alertname", "rl_run_id"],
                "groupWait": "30s",
                "groupInterval": "5m",
                "repeatInterval": "12h",
                "matchers": [_cr((BUNDLE_LABEL, "=", bundle))],
                "routes": [
                    {"receiver": r.name, "matchers": [_cr(_severities(r)), *rl_only[r.alerts]], "continue": True}
                    for r in receivers
                ],
            },
            "receivers": [{"name": "null"}, *(_receiver(r, cr=True) for r in receivers)],
            # The operator adds a matcher on the namespace to both sides of each inhibition rule.
            "inhibitRules": [
                {"sourceMatch": [_cr(source)], "targetMatch": [_cr(target)], "equal": [BUNDLE_LABEL, on]}
                for source, target, on in _inhibitions(slos=profile.slos is not None)
            ],
        },
    }
