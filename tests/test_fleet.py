"""The fleet file: clusters expanded into effective profiles, validated as profiles, problems in the fleet file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlobs.errors import ProfileError
from rlobs.fleet.commands import parse_fleet
from rlobs.main import app
from rlobs.targets import parse_profile
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.gke.profile import GkeProfile
from testing.fleet import example, example_text


def _problems(text: str) -> list[str]:
    with pytest.raises(ProfileError) as exc:
        parse_fleet(text, "fleet.yaml")
    return exc.value.lines()


def _line_of(text: str, needle: str, nth: int = 0) -> int:
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return lines[nth]


def test_the_example_has_three_eks_and_two_gke_clusters_in_two_environments() -> None:
    fleet = example()
    targets = [m.cluster.target for m in fleet.members]
    assert targets.count("eks") == 3 and targets.count("gke") == 2
    assert {m.cluster.environment for m in fleet.members} == {"dev", "prod"}
    assert all(isinstance(m.profile, EksProfile | GkeProfile) for m in fleet.members)


def test_defaults_deep_merge_with_overrides() -> None:
    by_name = {m.name: m.profile for m in example().members}
    dev, prod_a, prod_b = by_name["dev-use2"], by_name["prod-usw2-a"], by_name["prod-usw2-b"]
    assert isinstance(dev, EksProfile) and isinstance(prod_a, EksProfile) and isinstance(prod_b, EksProfile)
    assert dev.eks.prometheus.retention == "7d"  # from defaults
    assert (prod_a.eks.prometheus.retention, prod_a.eks.prometheus.storage_size) == ("30d", "200Gi")
    assert prod_a.eks.metrics_pipeline == "otel-collector"  # a sibling key of the override stays
    assert prod_a.alerts.mfu_low.threshold == 0.3 and dev.alerts.mfu_low.threshold == 0.25
    assert prod_b.eks.mode == "ai-on-eks" and "prometheus" not in prod_b.eks.model_fields_set  # null removed it
    gke = by_name["prod-gke"]
    assert isinstance(gke, GkeProfile)
    assert gke.workload.kind == "JobSet"
    assert [j.name for j in gke.workload.replicated_jobs] == ["trainer"]
    assert (gke.gke.project, gke.gke.location, gke.gke.cluster) == ("rl-prod-project", "us-central1", "prod-gke")


def test_the_fleet_sets_names_paths_and_revisions() -> None:
    by_name = {m.name: m for m in example().members}
    prod = by_name["prod-usw2-a"].profile
    assert isinstance(prod, EksProfile)
    assert prod.metadata.name == prod.eks.cluster.name == "prod-usw2-a"
    assert prod.eks.gitops.path == "fleets/rl/clusters/prod-usw2-a"
    assert prod.eks.gitops.target_revision == "v1.4.0"
    dev = by_name["dev-use2"].profile
    assert isinstance(dev, EksProfile) and dev.eks.gitops.target_revision == "main"


def test_an_effective_profile_is_a_profile() -> None:
    """profiles/<name>.yaml of the fleet bundle loads as a single profile, equal to the fleet's member."""
    from rlobs.bundle.filters import to_yaml

    for m in example().members:
        assert parse_profile(to_yaml(m.data), f"{m.name}.yaml") == m.profile


def test_an_override_problem_points_at_its_line_in_the_fleet_file() -> None:
    text = example_text().replace("retention: 30d", "retention: 30 days")
    (line,) = _problems(text)
    assert line.startswith(f"fleet.yaml:{_line_of(text, 'retention: 30 days')}:")
    assert "clusters[1].overrides.eks.prometheus.retention: expected a duration" in line
    assert "got '30 days'" in line


def test_a_default_problem_is_reported_once_naming_its_clusters() -> None:
    text = example_text().replace("container: ray-head", "container: Ray_Head")
    (line,) = _problems(text)
    assert line.startswith(f"fleet.yaml:{_line_of(text, 'Ray_Head')}:")
    assert "defaults.workload.container: expected a Kubernetes name" in line
    # prod-gke overrides the container, so only the other four clusters have the problem.
    assert "(in clusters dev-use2, prod-usw2-a, prod-usw2-b, dev-gke)" in line


def test_defaults_that_are_no_mapping_are_one_located_problem() -> None:
    text = example_text().replace("defaults:                   #", "defaults: oops\nshared:  #", 1)
    lines = _problems(text)
    assert f"fleet.yaml:{_line_of(text, 'defaults: oops')}:11: defaults: expected a mapping, got 'oops'" in lines


def test_cluster_fields_are_validated_where_they_are_written() -> None:
    text = (
        example_text()
        .replace("region: us-east-2", "region: mars-1")
        .replace("project: rl-dev-project", "project: Google")
    )
    lines = _problems(text)
    assert len(lines) == 2
    assert lines[0].startswith(f"fleet.yaml:{_line_of(text, 'mars-1')}:") and "clusters[0].region" in lines[0]
    assert "expected an AWS region" in lines[0]
    assert lines[1].startswith(f"fleet.yaml:{_line_of(text, 'Google')}:") and "clusters[3].project" in lines[1]


def test_every_problem_at_once_and_unknown_keys_with_a_hint() -> None:
    text = example_text().replace("    revision: v1.4.0        # prod", "    revison: v1.4.0        # prod")
    text = text.replace("  description: RL training", "  descripton: RL training")
    text = text.replace("region: us-east-2", "region: us-east-2x")
    lines = _problems(text)
    assert any("clusters[1].revison: unknown key (did you mean 'revision'?)" in ln for ln in lines), lines
    assert any("metadata.descripton: unknown key (did you mean 'description'?)" in ln for ln in lines), lines
    # Clusters whose own entries are valid are still expanded and validated in the same run.
    assert any("clusters[0].region: expected an AWS region" in ln for ln in lines), lines
    text = example_text().replace("        mfuLow: {threshold: 0.3}", "        mfuLo: {threshold: 0.3}")
    text = text.replace("    region: us-east-2", "    region: us-east-2x")
    lines = _problems(text)
    assert any("clusters[1].overrides.alerts.mfuLo: unknown key (did you mean 'mfuLow'?)" in ln for ln in lines)
    assert any("clusters[0].region: expected an AWS region" in ln for ln in lines), lines


def test_keys_the_fleet_sets_are_refused_in_defaults_and_overrides() -> None:
    text = example_text().replace(
        "    metricsPipeline: otel-collector", "    metricsPipeline: otel-collector\n    gitops: {path: x}"
    )
    text = text.replace("        replicatedJobs: [trainer]\n", "        replicatedJobs: [trainer]\n      target: eks\n")
    lines = _problems(text)
    assert any(
        ln.startswith(f"fleet.yaml:{_line_of(text, 'gitops: {path')}:") and "defaults.eks.gitops" in ln for ln in lines
    )
    assert any("clusters[4].overrides.target: expected no target here" in ln for ln in lines), lines


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("  - name: prod-usw2-b\n", "  - name: prod-usw2-a\n", "clusters[2].name: expected each cluster name once"),
        ("  - name: dev-use2\n", "  - name: in-cluster\n", "clusters[0].name: expected a cluster name"),
        ("    project: rl-dev-project\n", "", "clusters[3].target: target is gke, so expected `project:`"),
        (
            "    project: rl-dev-project\n",
            "    project: rl-dev-project\n    revision: main\n",
            "clusters[3].revision: expected no revision on a gke cluster (nothing syncs it)",
        ),
        ("kind: Fleet", "kind: Fleets", "kind: expected one of 'Fleet', got 'Fleets'"),
    ],
)
def test_fleet_rules(old: str, new: str, expected: str) -> None:
    text = example_text().replace(old, new, 1)
    assert any(expected in line for line in _problems(text)), _problems(text)


def test_eks_clusters_need_the_gitops_section() -> None:
    text = re.sub(r"^gitops:.*\n(  .*\n)+", "", example_text(), flags=re.MULTILINE)
    expected = "fleet.yaml:3:1: kind: the fleet has eks clusters, so expected a `gitops:` section, got nothing"
    assert expected in _problems(text), _problems(text)


def test_a_fleet_file_that_is_no_yaml_gets_the_located_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text("kind: Fleet\nclusters: [\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and f"{path}:3:1: invalid YAML" in result.output, result.output


def test_a_missing_required_key_names_the_cluster() -> None:
    text = example_text().replace("    container: ray-head\n", "")
    lines = _problems(text)
    assert any("clusters[0](dev-use2).workload.container: expected this required key" in ln for ln in lines), lines


def test_yaml_errors_and_duplicates_have_positions(tmp_path: Path) -> None:
    assert _problems("kind: Fleet\nclusters: [\n")[0].startswith("fleet.yaml:")
    text = example_text().replace("  name: rl-fleet\n", "  name: rl-fleet\n  name: again\n")
    assert any("metadata.name: expected each key once" in ln for ln in _problems(text))


def test_terraform_clusters_of_one_project_share_one_root() -> None:
    """Two gke.manage: terraform clusters in one project are one Terraform root (fleet/gketf.py), so they load."""
    text = example_text().replace("project: rl-prod-project", "project: rl-dev-project")
    text = text.replace(
        "    clusterMode: existing\n    manage: scripts", "    clusterMode: existing\n    manage: terraform"
    )
    assert [m.name for m in parse_fleet(text, "fleet.yaml").members if m.cluster.target == "gke"] == [
        "dev-gke",
        "prod-gke",
    ]


def test_one_terraform_root_needs_one_shape_per_project() -> None:
    text = example_text().replace("project: rl-prod-project", "project: rl-dev-project")
    text = text.replace(
        "    clusterMode: existing\n    manage: scripts", "    clusterMode: existing\n    manage: terraform"
    )
    text = text.replace(
        "      gke:\n        notificationChannels",
        "      gke:\n        workloadIdentity: {kubernetesServiceAccount: rl}\n        notificationChannels",
    )
    lines = _problems(text)
    assert len(lines) == 2, lines
    assert all("terraform clusters of project rl-dev-project (one Terraform root) to share" in ln for ln in lines)
    assert "dev-gke (existing, namespace), prod-gke (existing, ksa)" in lines[0]
    assert lines[0].startswith(f"fleet.yaml:{_line_of(text, 'project: rl-dev-project')}:")


@pytest.mark.parametrize("region", ["'us-east-2`[x](https://evil.example)`'", '"us-east-2\\n| x |"'])
def test_a_region_with_markup_or_a_newline_is_one_located_problem(region: str) -> None:
    text = example_text().replace("region: us-east-2", f"region: {region}", 1)
    (line,) = _problems(text)
    assert line.startswith(f"fleet.yaml:{_line_of(text, f'region: {region}')}:"), line
    assert "clusters[0].region" in line and line.isprintable(), line
