"""The `gke:` profile rules: what GCP or Kubernetes would reject is refused at render time, with the rule."""

from __future__ import annotations

import pytest

from rlobs.errors import ProfileError
from rlobs.targets import parse_profile
from testing.helpers import all_profiles

BASE = all_profiles()["gke-managed-otel"]


def _load(old: str, new: str) -> list[str]:
    assert old in BASE, old
    try:
        parse_profile(BASE.replace(old, new, 1), "p.yaml")
    except ProfileError as exc:
        return exc.lines()
    return []


@pytest.mark.parametrize("value", ["rl-obs-dev", "abcdef", "a" * 30, "my-project-123"])
def test_good_project_ids(value: str) -> None:
    assert _load("project: my-rl-project", f"project: {value}") == []


@pytest.mark.parametrize(
    "value",
    ["short", "a" * 31, "1project", "my-project-", "My-Project", "my_project", "my-google-proj", "ssl-project"],
)
def test_bad_project_ids(value: str) -> None:
    (line,) = _load("project: my-rl-project", f"project: {value}")
    assert "gke.project: expected a GCP project ID" in line and repr(value) in line


@pytest.mark.parametrize("value", ["us-central1", "us-central1-a", "northamerica-northeast2", "europe-west4-b"])
def test_good_locations(value: str) -> None:
    assert _load("location: us-central1", f"location: {value}") == []


@pytest.mark.parametrize(
    "value", ["us-central", "uscentral1", "us-central1-ab", "US-CENTRAL1", "global", "us-central1a"]
)
def test_bad_locations(value: str) -> None:
    (line,) = _load("location: us-central1", f"location: {value}")
    assert "gke.location: expected a GCP region or zone like us-central1 or us-central1-a" in line


@pytest.mark.parametrize("value", ["rl-cluster", "a", "a" * 40, "c1"])
def test_good_cluster_names(value: str) -> None:
    assert _load("cluster: rl-cluster", f"cluster: {value}") == []


@pytest.mark.parametrize("value", ["a" * 41, "1cluster", "rl-cluster-", "RL", "rl_cluster"])
def test_bad_cluster_names(value: str) -> None:
    (line,) = _load("cluster: rl-cluster", f"cluster: {value}")
    assert "gke.cluster: expected a GKE cluster name" in line


@pytest.mark.parametrize("value", ["kube-system", "kube-public", "gke-managed-otel", "gke-gmp-system", "gmp-system"])
def test_system_namespaces_are_refused(value: str) -> None:
    (line,) = _load("namespace: rl", f"namespace: {value}")
    assert line.startswith("p.yaml:10:3:") and "workload.namespace: expected a namespace of your own" in line


@pytest.mark.parametrize("value", ["Rl", "rl_ns", "-rl", "a" * 64])
def test_invalid_namespaces_are_refused(value: str) -> None:
    (line,) = _load("namespace: rl", f"namespace: {value}")
    assert "workload.namespace: expected a Kubernetes name" in line


@pytest.mark.parametrize("value, ok", [("5s", True), ("5m", True), ("4s", False), ("6m", False), ("1h", False)])
def test_export_interval_range(value: str, ok: bool) -> None:
    problems = _load("exportInterval: 30s", f"exportInterval: {value}")
    if ok:
        assert problems == []
    else:
        (line,) = problems
        assert "workload.exportInterval: expected 5s to 5m on the gke target" in line and repr(value) in line


def test_autopilot_needs_a_region() -> None:
    (line,) = _load(
        "location: us-central1\n  cluster: rl-cluster\n  clusterMode: existing",
        "location: us-central1-a\n  cluster: rl-cluster\n  clusterMode: create-autopilot",
    )
    assert line.startswith("p.yaml:22:3:") and "gke.location: expected a region like us-central1" in line


@pytest.mark.parametrize(
    "value, ok",
    [
        ("projects/my-rl-project/notificationChannels/123", True),
        ("projects/123456/notificationChannels/42", True),
        ("my-rl-project/notificationChannels/123", False),
        ("projects/my-rl-project/notificationChannels/abc", False),
    ],
)
def test_notification_channels(value: str, ok: bool) -> None:
    problems = _load("notificationChannels: []", f"notificationChannels: [{value}]")
    assert (problems == []) is ok
    if not ok:
        assert "gke.notificationChannels[0].name: expected a notification channel name" in problems[0]


@pytest.mark.parametrize(
    "value, ok",
    [
        ("rl-trainer@my-rl-project.iam.gserviceaccount.com", True),
        ("rl@my-rl-project.iam.gserviceaccount.com", False),
        ("rl-trainer@my-rl-project.iam.example.com", False),
    ],
)
def test_gcp_service_account(value: str, ok: bool) -> None:
    old = "kubernetesServiceAccount: grpo-trainer"
    problems = _load(old, f"{old}\n    gcpServiceAccount: {value}")
    assert (problems == []) is ok
    if not ok:
        assert "gke.workloadIdentity.gcpServiceAccount: expected a service account email" in problems[0]


_MODES = "  clusterMode: existing     # or create-standard / create-autopilot\n  manage: scripts"


@pytest.mark.parametrize(
    ("mode", "manage", "protection", "problem"),
    [
        ("existing", "scripts", "", ""),
        ("existing", "terraform", "", ""),
        ("create-standard", "terraform", "\n  deletionProtection: false", ""),
        ("create-autopilot", "terraform", "\n  deletionProtection: true", ""),
        # Terraform creates the cluster: the choice must be made, not left to the provider's default (true).
        ("create-standard", "terraform", "", "expected true or false for a cluster Terraform creates"),
        # Elsewhere nothing reads it (gcloud has no such setting): dead input is refused.
        ("create-standard", "scripts", "\n  deletionProtection: true", "expected no deletionProtection"),
        ("existing", "terraform", "\n  deletionProtection: false", "expected no deletionProtection"),
    ],
)
def test_deletion_protection_is_an_explicit_choice(mode: str, manage: str, protection: str, problem: str) -> None:
    lines = _load(_MODES, f"  clusterMode: {mode}\n  manage: {manage}{protection}")
    if not problem:
        assert lines == []
        return
    (line,) = lines
    assert "gke.deletionProtection: " + problem in line and line.startswith("p.yaml:")


def test_manage_is_scripts_or_terraform() -> None:
    (line,) = _load("  manage: scripts", "  manage: both")
    assert "gke.manage" in line and "'scripts'" in line and "'terraform'" in line


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ("{Team: ml}", "expected a Cloud Monitoring label key"),
        ("{team: ML}", "expected a Cloud Monitoring label value"),
        ("{team: 42}", "expected a string"),
        ("{rlobs_bundle: x}", "step 4 finds and prunes"),
        ("{rl_alert: x}", "not one rlobs sets"),
    ],
)
def test_user_labels_follow_cloud_monitorings_rules(labels: str, expected: str) -> None:
    (line,) = _load("project: my-rl-project", f"project: my-rl-project\n  userLabels: {labels}")
    assert "gke.userLabels." in line and expected in line, line


def test_user_labels_within_the_limit() -> None:
    many = ", ".join(f"k{i}: v" for i in range(62))
    (line,) = _load("project: my-rl-project", f"project: my-rl-project\n  userLabels: {{{many}}}")
    assert "expected at most 61 labels" in line
    assert (
        _load("project: my-rl-project", "project: my-rl-project\n  userLabels: {team: rl, cost-center: '4711'}") == []
    )


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ("[{label: location, type: resource, value: us-central1}, {label: team}]", None),
        (
            "[{label: team}, {label: team}]",
            "p.yaml:28:38: gke.dashboardFilters[1].label: expected each metric label once",
        ),
        ("[{label: team}, {label: team, type: resource}]", None),
        ("[{label: 'team name'}]", "gke.dashboardFilters[0].label: expected a label key like namespace or team"),
        ("[{label: team, type: metadata}]", "gke.dashboardFilters[0].type: expected one of 'metric', 'resource'"),
        ("[{label: team, value: 'a b'}]", "gke.dashboardFilters[0].value: expected a short identifier"),
    ],
)
def test_dashboard_filters_are_checked(filters: str, expected: str | None) -> None:
    lines = _load("  logs: false", f"  dashboardFilters: {filters}\n  logs: false")
    if expected is None:
        assert lines == []
    else:
        (line,) = lines
        assert expected in line, line
