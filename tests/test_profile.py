"""Profile loading: every problem at once, each as file:line:col: path: expected X, got Y."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlobs.errors import ProfileError
from rlobs.profile.load import load_profile, parse_profile
from rlobs.profile.model import GkeProfile
from testing.helpers import GOOD, all_profiles, write_tree


def _errors(text: str) -> list[str]:
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    return info.value.lines()


def test_good_profile_loads_into_frozen_objects() -> None:
    p = parse_profile(GOOD)
    assert p.workload.run_id == "trainer"
    assert isinstance(p, GkeProfile) and p.gke.naming == "telemetry-api"
    with pytest.raises(Exception, match="frozen"):
        p.workload.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize("name", sorted(all_profiles()))
def test_every_shipped_profile_is_valid(name: str) -> None:
    parse_profile(all_profiles()[name], name)


def test_bad_yaml_reports_position() -> None:
    assert _errors("apiVersion: rlobs/v1alpha1\nkind: [Profile\n") == [
        "p.yaml:3:1: invalid YAML: while parsing a flow sequence, did not find expected ',' or ']'"
    ]


def test_unknown_key_with_did_you_mean() -> None:
    text = GOOD.replace("  name: demo", "  name: demo\n  descripton: x")
    (line,) = _errors(text)
    assert line.startswith("p.yaml:6:3: metadata.descripton: unknown key (did you mean 'description'?)")
    assert "expected one of name, description" in line


def test_wrong_type_and_bad_value_are_all_reported() -> None:
    text = GOOD.replace("location: us-central1", "location: us central 1").replace("namespace: rl", "namespace: 42")
    assert _errors(text) == [
        "p.yaml:9:14: workload.namespace: expected a string, got 42",
        "p.yaml:14:13: gke.location: expected a GCP region or zone like us-central1 or us-central1-a, "
        "got 'us central 1'",
    ]


def test_missing_field_points_at_its_parent() -> None:
    text = GOOD.replace("  container: trainer\n", "")
    assert _errors(text) == ["p.yaml:8:3: workload.container: expected this required key, got nothing"]


def test_missing_target_section() -> None:
    text = GOOD[: GOOD.index("gke:")]
    assert _errors(text) == ["p.yaml:6:1: target: target is gke, so expected a `gke:` section, got none"]


def test_inline_password_is_refused_with_a_secret_hint() -> None:
    text = GOOD.replace("  cluster: rl-cluster", "  cluster: rl-cluster\n  grafanaPassword: hunter2")
    (line,) = _errors(text)
    assert line.startswith("p.yaml:16:3: gke.grafanaPassword: expected a reference to a Kubernetes Secret")
    assert "hunter2" not in line


def test_duplicate_keys_are_problems() -> None:
    text = GOOD.replace("kind: Profile", "kind: Profile\nkind: Profile")
    assert "p.yaml:4:1: kind: expected each key once, got it again" in _errors(text)


def test_wrong_api_version() -> None:
    (line,) = _errors(GOOD.replace("rlobs/v1alpha1", "rlobs/v2"))
    assert line == "p.yaml:2:13: apiVersion: expected one of 'rlobs/v1alpha1', got 'rlobs/v2'"


def test_not_a_mapping() -> None:
    assert _errors("- a\n- b\n") == ["p.yaml:1:1: expected a mapping with apiVersion: rlobs/v1alpha1, got list"]
    assert _errors("") == ["p.yaml:1:1: expected a mapping with apiVersion: rlobs/v1alpha1, got an empty file"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="no such file"):
        load_profile(tmp_path / "nope.yaml")


def test_load_from_disk_uses_the_path_in_messages(tmp_path: Path) -> None:
    write_tree(tmp_path, {"bad.yaml": GOOD.replace("kind: Profile", "kind: Profil")})
    with pytest.raises(ProfileError) as info:
        load_profile(tmp_path / "bad.yaml")
    assert info.value.lines()[0].startswith(f"{tmp_path / 'bad.yaml'}:2:7: kind: expected one of 'Profile'")


def test_nan_threshold_is_refused() -> None:
    text = GOOD + "alerts:\n  mfuLow:\n    threshold: .nan\n"
    (line,) = _errors(text)
    assert line.startswith("p.yaml:18:16: alerts.mfuLow.threshold: expected a finite number, got nan")


def test_non_string_key() -> None:
    text = GOOD.replace("metadata:\n  name: demo", "metadata:\n  name: demo\n  1: one")
    assert any("expected text keys" in line for line in _errors(text))


def test_other_targets_section_is_named() -> None:
    text = GOOD + "eks:\n  mode: rlobs\n"
    assert _errors(text) == ["p.yaml:16:1: eks: target is gke, so expected no `eks:` section, got one"]


def test_unknown_target_still_reports_the_common_keys() -> None:
    text = GOOD.replace("target: gke", "target: aks").replace("namespace: rl", "namespace: 42")
    assert _errors(text) == [
        "p.yaml:6:9: target: expected one of eks, gke, got 'aks'",
        "p.yaml:9:14: workload.namespace: expected a string, got 42",
    ]


def test_missing_target_is_named() -> None:
    text = GOOD.replace("target: gke\n", "")
    (line,) = _errors(text)
    assert line.startswith("p.yaml:") and "target: expected one of eks, gke, got nothing" in line


def test_a_validator_reports_every_problem_it_finds() -> None:
    # gke: the export interval and the namespace are both wrong; both are reported, each at its own key.
    text = GOOD.replace("namespace: rl", "namespace: kube-rl").replace(
        "  container: trainer", "  container: trainer\n  exportInterval: 1s"
    )
    assert _errors(text) == [
        "p.yaml:9:3: workload.namespace: expected a namespace of your own, not one Kubernetes or GKE manages "
        "(kube-*, gke-*, gmp-system, gmp-public), got 'kube-rl'",
        "p.yaml:11:3: workload.exportInterval: expected 5s to 5m on the gke target (Managed OpenTelemetry accepts "
        "5000-300000 ms), got '1s'",
    ]


def test_every_terraform_variable_problem_is_reported() -> None:
    eks = all_profiles()["eks-jark"]
    text = eks.replace("eks:\n", "eks:\n  terraformVariables:\n    enable_argocd: true\n    no_such_var: 1\n", 1)
    lines = _errors(text)
    assert [line.split(": ")[1] for line in lines] == [
        "eks.terraformVariables.enable_argocd",
        "eks.terraformVariables.no_such_var",
    ]


_DESCRIPTION = "  description: EKS JARK stack with pinned ArgoCD Applications, Grafana dashboards and PrometheusRules"


def _eks_with(old: str, new: str) -> str:
    text = all_profiles()["eks-jark"]
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    "url",
    [
        "https://user:tok3nValue@github.com/acme/gitops.git",
        "https://Zk3q9XbT2mLw8RvY4cNa@github.com/acme/gitops.git",
        "ssh://git:pass@github.com/acme/gitops.git",
        "https://github.com/acme/gitops.git?access_token=s3cr3t",
        "https://github.com/acme/gitops.git#s3cr3t",
        "https://github.com/acme/gitops{{.git",
        "https://github.com/acme/``x``",
    ],
)
def test_repo_url_refuses_credentials_query_fragment_and_templates_without_echoing(url: str) -> None:
    with pytest.raises(ProfileError) as err:
        parse_profile(_eks_with("https://github.com/acme/gitops.git", url), "p.yaml")
    lines = err.value.lines()
    assert len(lines) == 1 and "eks.gitops.repoUrl" in lines[0], lines
    for secret in ("tok3nValue", "Zk3q9XbT2mLw8RvY4cNa", "pass@", "s3cr3t"):
        assert secret not in lines[0]


def test_a_credential_in_any_free_text_value_or_key_is_refused_without_echoing_it() -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    text = _eks_with("  # terraformVariables:", f"  terraformVariables:\n    region_note: '{key}'\n  #")
    with pytest.raises(ProfileError) as err:
        parse_profile(text, "p.yaml")
    assert any("terraformVariables.region_note" in line for line in err.value.lines())
    assert key not in str(err.value)


def test_keys_with_control_characters_are_escaped_in_problems() -> None:
    with pytest.raises(ProfileError) as err:
        parse_profile(GOOD + '"bad\\x1b[31mkey\\nsplit": 1\n', "p.yaml")
    (line,) = err.value.lines()
    assert "\x1b" not in line and "\n" not in line and "\\x1b" in line


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ('channel: "#rl-alerts"', 'channel: "#rl-alerts{{"', "channel"),
        ('channel: "#rl-alerts"', 'channel: "#rl\\nalerts"', "channel"),
        ('channel: "#rl-alerts"', "channel: https://example.com/hook", "channel"),
        ("key: webhook-url}", "key: ..}", "secretRef.key"),
        ("- name: rl-oncall", "- name: 'null'", "alertmanagerReceivers[0].name"),
        ("path: clusters/jark-stack/rlobs", "path: ../../etc", "gitops.path"),
        ("path: clusters/jark-stack/rlobs", "path: a/./b", "gitops.path"),
        ("targetRevision: main", "targetRevision: a..b.lock", "gitops.targetRevision"),
        ("targetRevision: main", "targetRevision: rel.lock", "gitops.targetRevision"),
        # Free text, each by its consumer's rule (issue 10): the terminal table of `rlobs blueprints`,
        # ai-on-eks' AWS and Helm arguments.
        (_DESCRIPTION, '  description: "\\e[2JEKS"', "metadata.description"),
        (_DESCRIPTION, '  description: "EKS\\u202e"', "metadata.description"),
        ("  # terraformVariables:", '  terraformVariables: {vpc_cidr: "10.0.0.0/16\\n"}\n  #', "vpc_cidr"),
        (
            "  # terraformVariables:",
            '  terraformVariables: {kms_key_admin_roles: ["arn:aws:iam::1:role/a\\x1b"]}\n  #',
            "kms_key_admin_roles",
        ),
    ],
)
def test_values_their_consumers_refuse_are_refused_at_their_key(old: str, new: str, path: str) -> None:
    with pytest.raises(ProfileError) as err:
        parse_profile(_eks_with(old, new), "p.yaml")
    (line,) = err.value.lines()
    assert path in line and line.startswith("p.yaml:"), line


def test_receiver_names_are_unique() -> None:
    second = "    - name: rl-oncall\n      type: webhook\n      secretRef: {name: hook, key: url}\n"
    text = _eks_with("  # terraformVariables:", second + "  # terraformVariables:")
    with pytest.raises(ProfileError) as err:
        parse_profile(text, "p.yaml")
    (line,) = err.value.lines()
    assert "alertmanagerReceivers[1].name: expected a name no other receiver has" in line


@pytest.mark.parametrize("value", ["3651d", "200000d", "9999999999s"])
def test_durations_beyond_what_prometheus_accepts_are_refused(value: str) -> None:
    with pytest.raises(ProfileError, match="at most 3650d"):
        parse_profile(
            _eks_with(
                "metricsPipeline: otel-collector",
                f"metricsPipeline: otel-collector\n  prometheus: {{retention: {value}}}",
            ),
            "p.yaml",
        )
