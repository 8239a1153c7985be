"""eks.helmValues: checked against the pinned charts' own keys, keys rlobs owns refused, merged over the values."""

from __future__ import annotations

import importlib.util
import textwrap
from typing import Any

import pytest
import yaml

from rlobs.errors import ProfileError
from rlobs.targets import parse_profile
from rlobs.targets.eks.helmvalues import CHARTS_BY_MODE, OWNED, deep_merge, index
from rlobs.targets.eks.versions import CHARTS
from testing.eks import bundle
from testing.helpers import REPO, all_profiles, shared


def _with(block: str, mode: str = "rlobs") -> str:
    text = all_profiles()["eks-jark"].replace("  mode: rlobs ", f"  mode: {mode} ")
    if mode == "ai-on-eks":
        text = text.replace("  grafana:\n    adminSecret: grafana-admin", "")
        text = "\n".join(line for line in text.splitlines() if "credentialsSecret:" not in line) + "\n"
    body = textwrap.indent(textwrap.dedent(block).strip("\n"), "    ")
    return text.rstrip("\n") + "\n  helmValues:\n" + body + "\n"


def _problems(block: str, mode: str = "rlobs") -> list[str]:
    with pytest.raises(ProfileError) as info:
        parse_profile(_with(block, mode), "p.yaml")
    return [f"{p.line}:{p.path}: {p.message}" for p in info.value.problems]


def test_the_index_covers_every_pinned_chart_at_its_version() -> None:
    assert {c: i["version"] for c, i in index().items()} == {c: chart.version for c, chart in CHARTS.items()}
    assert set(CHARTS_BY_MODE["rlobs"]) == set(CHARTS) >= set(CHARTS_BY_MODE["ai-on-eks"])


def test_every_owned_key_is_a_key_of_its_chart() -> None:
    # A refusal for a key the chart does not have would never match (and hide a rename upstream).
    for chart, owned in OWNED.items():
        for path in owned:
            node: Any = index()[chart]["keys"]
            for key in path:
                assert (isinstance(node, dict) and key in node) or node == "*", (chart, path)
                node = node[key] if isinstance(node, dict) else node


def test_the_packaged_index_is_built_from_the_shared_charts() -> None:
    spec = importlib.util.spec_from_file_location("helm_keys", REPO / "tools" / "helm_keys.py")
    assert spec and spec.loader
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.build(shared("upstream/helm-charts").parent.parent) == index()


def test_index_knows_keys_teams_set() -> None:
    kps = index()["kube-prometheus-stack"]["keys"]
    assert kps["grafana"]["ingress"]["hosts"] == ""
    assert kps["grafana"]["serviceAccount"]["annotations"] == "*"  # documented only in a comment upstream
    assert kps["prometheus"]["prometheusSpec"]["nodeSelector"] == "*"
    assert kps["alertmanager"]["templateFiles"] == "*"
    assert index()["opentelemetry-collector"]["keys"]["config"] == "*"  # the schema leaves it open


@pytest.mark.parametrize(
    ("block", "path", "expected"),
    [
        ("kube-prometheus-stack: {grafana: {ingres: {enabled: true}}}", "grafana.ingres", "did you mean 'ingress'"),
        ("opentelemetry-collector: {replicas: 2}", "replicas", "did you mean 'replicaCount'"),
        ("opentelemetry-collector: {zzqqxx: 2}", "zzqqxx", "expected a key of opentelemetry-collector"),
        ("kube-prometheus-stack: {grafana: {adminPassword: x}}", "grafana.adminPassword", "eks.grafana.adminSecret"),
        (
            "kube-prometheus-stack: {prometheus: {prometheusSpec: {ruleSelector: {}}}}",
            "ruleSelector",
            "release: kube-prometheus-stack",
        ),
        ("kube-prometheus-stack: {alertmanager: {config: {}}}", "alertmanager.config", "eks.alertmanagerReceivers"),
        ("kube-prometheus-stack: {kubeScheduler: {enabled: true}}", "kubeScheduler.enabled", "EKS does not expose"),
        (
            "opentelemetry-collector: {config: {exporters: {prometheus: {endpoint: x}}}}",
            "config.exporters.prometheus",
            "rlobs owns",
        ),
        ("opentelemetry-collector: {extraEnvs: []}", "extraEnvs", "extraEnvsFrom"),
        ("kube-prometheus-stack: {grafana: {smtp: {password: hunter2}}}", "smtp.password", "never writes credentials"),
        ("kube-prometheus-stack: {grafana: {env: {apiKey: abc}}}", "env.apiKey", "never writes credentials"),
        (
            "kube-prometheus-stack: {prometheus: {prometheusSpec: {remoteWrite: [{basicAuth: {password: x}}]}}}",
            "remoteWrite[0].basicAuth.password",
            "never writes credentials",
        ),
        ("dcgm-exporter: {}", "helmValues.dcgm-exporter", "a chart this bundle deploys"),
    ],
)
def test_bad_overrides_are_refused_at_their_line(block: str, path: str, expected: str) -> None:
    (problem,) = _problems(block)
    assert expected in problem, problem
    assert f"eks.helmValues.{path}" in problem or path in problem, problem
    assert int(problem.split(":")[0]) > 40  # points at the key, not the file's first line


def test_ai_on_eks_mode_takes_only_the_collector() -> None:
    (problem,) = _problems("kube-prometheus-stack: {grafana: {replicas: 2}}", mode="ai-on-eks")
    assert "reference stack deploys the others" in problem
    parse_profile(_with("opentelemetry-collector: {replicaCount: 2}", mode="ai-on-eks"), "p.yaml")


def test_references_to_secrets_are_not_secrets() -> None:
    block = "kube-prometheus-stack: {grafana: {smtp: {existingSecret: smtp, passwordKey: password, userKey: user}}}"
    parse_profile(_with(block), "p.yaml")


def test_every_problem_at_once() -> None:
    assert len(_problems("kube-prometheus-stack: {grafana: {ingres: {}, adminUser: x}, prometheuss: {}}")) == 3


def test_overrides_merge_over_the_rendered_values() -> None:
    base = yaml.safe_load(bundle("eks-jark")["values/kube-prometheus-stack.yaml"])
    tuned = yaml.safe_load(bundle("eks-helm-values")["values/kube-prometheus-stack.yaml"])
    assert tuned["grafana"]["ingress"]["hosts"] == ["grafana.rl.example.com"]
    assert tuned["prometheus"]["prometheusSpec"]["nodeSelector"] == {"karpenter.sh/nodepool": "monitoring"}
    # What rlobs renders is kept beside the override.
    assert tuned["prometheus"]["prometheusSpec"]["ruleSelector"] == base["prometheus"]["prometheusSpec"]["ruleSelector"]
    assert tuned["grafana"]["admin"] == base["grafana"]["admin"]
    collector = yaml.safe_load(bundle("eks-helm-values")["values/opentelemetry-collector.yaml"])
    assert collector["replicaCount"] == 2 and collector["resources"]["limits"] == {"memory": "2Gi"}


def test_deep_merge_merges_maps_and_replaces_the_rest() -> None:
    base = {"a": {"b": 1, "c": [1]}, "d": 1}
    assert deep_merge(base, {"a": {"c": (2,), "e": {"f": None}}}) == {"a": {"b": 1, "c": [2], "e": {"f": None}}, "d": 1}
    assert base == {"a": {"b": 1, "c": [1]}, "d": 1}


@pytest.mark.parametrize(
    ("block", "path", "where"),
    [
        (
            "opentelemetry-collector: {podAnnotations: {team: '{{ .Release.Name }}'}}",
            "podAnnotations.team",
            "templates/_helpers.tpl",
        ),
        (
            "opentelemetry-collector: {config: {processors: {batch: {x: 'a{{b'}}}}",
            "config.processors.batch.x",
            "templates/_config.tpl",
        ),
        (
            "kube-prometheus-stack: {prometheus: {prometheusSpec: {externalLabels: {cluster: '{{ .Values }}'}}}}",
            "externalLabels.cluster",
            "templates/prometheus/prometheus.yaml",
        ),
        (
            "kube-prometheus-stack: {grafana: {additionalDataSources: [{name: '{{x}}'}]}}",
            "additionalDataSources[0].name",
            "templates/grafana/configmaps-datasources.yaml",
        ),
    ],
)
def test_template_text_where_the_chart_runs_tpl_is_refused(block: str, path: str, where: str) -> None:
    (problem,) = _problems(block)
    assert path in problem and where in problem and "tpl" in problem, problem


def test_template_text_where_no_tpl_runs_is_data() -> None:
    # alertmanager.templateFiles are Alertmanager's own templates; the chart copies them as they are.
    parse_profile(
        _with("kube-prometheus-stack: {alertmanager: {templateFiles: {a.tmpl: '{{ define \"x\" }}{{ end }}'}}}"),
        "p.yaml",
    )


def test_every_tpl_path_names_keys_of_its_chart() -> None:
    from rlobs.targets.eks.helmvalues import TPL_VALUES

    for chart, files in TPL_VALUES.items():
        assert chart in index()
        for pattern in (p for patterns in files.values() for p in patterns):
            first = pattern.split(".")[0]
            assert first == "*" or first in index()[chart]["keys"], (chart, pattern)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("chart", "values", "kind"),
    [
        (
            "opentelemetry-collector-0.170.0",
            {
                "mode": "deployment",
                "image": {"repository": "otel/opentelemetry-collector-k8s"},
                "podAnnotations": {"probe": '{{ print "TPL-RAN" }}'},
            },
            "Deployment",
        ),
        (
            "kube-prometheus-stack-76.3.0",
            {"prometheus": {"prometheusSpec": {"externalLabels": {"probe": '{{ print "TPL-RAN" }}'}}}},
            "Prometheus",
        ),
    ],
)
def test_the_pinned_chart_really_runs_these_values_through_tpl(
    chart: str, values: dict[str, Any], kind: str, tmp_path: Any
) -> None:
    """The review's premise, checked with helm itself: `{{` at a TPL_VALUES path is executed by the chart."""
    from testing.helm import render

    docs = render(chart, chart.rsplit("-", 1)[0], values, tmp_path)
    text = yaml.safe_dump([d for d in docs if d.get("kind") == kind])
    assert "TPL-RAN" in text and "print" not in text
