"""Interactive init's questions: each answer lands in the blueprint's text and is checked by the real loader."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import rlobs.main
from rlobs.blueprints import load_blueprints
from rlobs.main import app
from rlobs.profile.yamlsource import load_located
from rlobs.questions import Question, answer, asked, choose, default, set_value, start, targets
from rlobs.targets import parse_profile
from rlobs.targets import warnings as find
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.gke.profile import GkeProfile

runner = CliRunner()


def _question(target: str, *path: str) -> Question:
    return next(q for q in asked(target) if q.path == path)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("gke", "gke"), ("2", "gke"), (" 1 ", "eks"), ("EKS", "eks"), ("Gke", "gke"), ("3", None), ("aks", None)],
)
def test_a_target_is_chosen_by_name_or_number(raw: str, expected: str | None) -> None:
    assert choose(raw, targets(load_blueprints())) == expected


@pytest.mark.parametrize("target", ["eks", "gke"])
def test_every_question_names_a_key_of_its_targets_profile(target: str) -> None:
    from rlobs.profile.load import _walk

    root = EksProfile if target == "eks" else GkeProfile
    for q in asked(target):
        model = _walk(root, q.path[:-1])[0]
        assert model is not None and q.path[-1] in {f.alias for f in model.model_fields.values()}, q.path


def test_an_answer_replaces_the_value_and_keeps_the_comment_in_its_column() -> None:
    text = start(load_blueprints(), "gke")
    new, problems = answer(text, _question("gke", "gke", "project"), "rl-prod-1")
    assert problems == []
    changed = [(a, b) for a, b in zip(text.splitlines(), new.splitlines(), strict=True) if a != b]
    assert changed == [
        (
            "  project: my-rl-project    # change to your project ID",
            "  project: rl-prod-1        # change to your project ID",
        )
    ]


def test_a_bad_answer_is_refused_in_validates_words_and_leaves_the_text_alone() -> None:
    text = start(load_blueprints(), "eks")
    new, problems = answer(text, _question("eks", "eks", "cluster", "region"), "us west 2")
    assert new == text
    assert problems == [
        "eks.cluster.region: expected an AWS region like us-west-2, got 'us west 2': did you mean us-west-2? "
        "(the regions botocore 1.43.11 lists, 2026-12-03)"
    ]
    _, problems = answer(text, _question("eks", "workload", "namespace"), "RL")
    assert problems and problems[0].startswith("workload.namespace: expected a Kubernetes name")


def test_an_answer_that_yaml_would_read_as_another_type_is_quoted() -> None:
    text = start(load_blueprints(), "eks")
    new = set_value(text, ("workload", "namespace"), "1234")
    assert "  namespace: " + '"1234"' in new
    assert parse_profile(new).workload.namespace == "1234"


def test_a_jobset_gets_its_replicated_jobs_question_and_a_valid_profile_meanwhile() -> None:
    text = start(load_blueprints(), "gke")
    kind = _question("gke", "workload", "kind")
    jobs = _question("gke", "workload", "replicatedJobs")
    assert not jobs.when(text)
    text, problems = answer(text, kind, "4")
    assert problems == [] and jobs.when(text)
    assert default(text, jobs) == "trainer"
    text, problems = answer(text, jobs, "trainer, rollout")
    assert problems == []
    assert parse_profile(text).workload.jobs == (("trainer", "trainer"), ("rollout", "trainer"))


def test_placeholders_are_never_suggested() -> None:
    eks, gke = start(load_blueprints(), "eks"), start(load_blueprints(), "gke")
    assert default(eks, _question("eks", "eks", "gitops", "repoUrl")) is None
    assert default(gke, _question("gke", "gke", "project")) is None
    assert default(eks, _question("eks", "eks", "cluster", "name")) == "jark-stack"


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rlobs.main, "_interactive", lambda: True)


@pytest.mark.usefixtures("terminal")
def test_interactive_init_asks_again_until_each_answer_passes(tmp_path: Path) -> None:
    out = tmp_path / "p.yaml"
    answers = [
        "aks",  # not a target
        "1",  # eks
        "bad cluster!",
        "rl-prod",
        "us-east-1",
        "RL",  # not a Kubernetes name
        "rl",
        "Pod",  # not a kind
        "rayjob",  # RayJob: a choice in any case
        "grpo",
        "https://user:pw@github.com/rl-team/gitops.git",  # credentials in the URL
        "git@github.com:rl-team/gitops.git",
        "clusters/../x",  # leaves the repository
        "",  # the proposed folder: the blueprint's, outside a git work tree
    ]
    result = runner.invoke(app, ["init", "-o", str(out)], input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert [e.split(": ")[1] for e in errors] == [
        "expected one of eks, gke or 1-2, got 'aks'",
        "eks.cluster.name",
        "workload.namespace",
        "workload.kind",
        "eks.gitops.repoUrl",
        "eks.gitops.path",
    ]
    assert "pw@" not in result.stderr  # the refusal never echoes the credentials
    profile = parse_profile(out.read_text(encoding="utf-8"))
    assert isinstance(profile, EksProfile)
    assert (profile.eks.cluster.name, profile.eks.cluster.region) == ("rl-prod", "us-east-1")
    assert (profile.workload.namespace, profile.workload.kind, profile.workload.name) == ("rl", "RayJob", "grpo")
    assert profile.eks.gitops.repo_url == "git@github.com:rl-team/gitops.git"
    assert profile.eks.gitops.path == "observability"
    assert "`rlobs render " + str(out) + " -o observability`" in result.stdout
    assert find(load_located(out.read_text(encoding="utf-8")), "p") == []  # no placeholder left
    assert (tmp_path / "rlobs.schema.json").exists()


@pytest.mark.usefixtures("terminal")
def test_interactive_init_takes_the_suggested_values_on_enter(tmp_path: Path) -> None:
    out = tmp_path / "p.yaml"
    result = runner.invoke(app, ["init", "-o", str(out)], input="gke\nrl-prod-1\n\n\n\n\n\n")
    assert result.exit_code == 0, result.output
    assert "Region or zone of the GKE cluster [us-central1]:" in result.stdout
    profile = parse_profile(out.read_text(encoding="utf-8"))
    assert isinstance(profile, GkeProfile) and profile.gke.project == "rl-prod-1"
    assert profile.gke.location == "us-central1"
    assert (profile.gke.cluster, profile.workload.kind, profile.workload.name) == (
        "rl-cluster",
        "Deployment",
        "grpo-trainer",
    )


@pytest.mark.usefixtures("terminal")
def test_interactive_init_suggests_the_first_target(tmp_path: Path) -> None:
    out = tmp_path / "p.yaml"
    result = runner.invoke(app, ["init", "-o", str(out)], input="\n" * 6 + "git@github.com:rl-team/gitops.git\n\n")
    assert result.exit_code == 0, result.output
    assert "Target (name or number) [eks]:" in result.stdout
    assert isinstance(parse_profile(out.read_text(encoding="utf-8")), EksProfile)


@pytest.mark.usefixtures("terminal")
def test_interactive_init_checks_the_output_file_before_asking(tmp_path: Path) -> None:
    out = tmp_path / "p.yaml"
    out.write_text("mine\n")
    result = runner.invoke(app, ["init", "-o", str(out)], input="gke\n")
    assert result.exit_code == 2
    assert "pass --force" in result.stderr
    assert "Target" not in result.stdout
    assert out.read_text() == "mine\n"
