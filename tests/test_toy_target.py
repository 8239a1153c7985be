"""A target is one package plus one registry line: the toy target (tests/testing/toytarget/), added to the registry
by this test alone, works through every command with no edit anywhere else: interactive init with its question,
validate with its warning, render, its section in the schema, and a fleet of toy clusters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import rlobs.main
from rlobs import targets
from rlobs.main import app

runner = CliRunner()

FLEET = """\
apiVersion: rlobs/v1alpha1
kind: Fleet
metadata:
  name: toys
defaults:
  workload:
    name: trainer
    namespace: rl
    container: trainer
    run: {system: verl, algorithm: grpo, environment: gsm8k, model: Qwen2.5-7B-Instruct}
  toy:
    owner: ml-team
clusters:
  - {name: toy-a, target: toy, environment: dev, region: toy-1, rack: r1}
  - {name: toy-b, target: toy, environment: prod, region: toy-2, rack: r2}
"""


@pytest.fixture(autouse=True)
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(targets.PACKAGES, "toy", "testing.toytarget")


def _init(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(rlobs.main, "_interactive", lambda: True)
    out = tmp_path / "toy.yaml"
    # target (by number: eks, gke, toy), the toy's own question, then the workload's: namespace, kind, name.
    answers = "3\nlab-7\nrl-jobs\nDeployment\ngrpo\n"
    result = runner.invoke(app, ["init", "-o", str(out)], input=answers)
    assert result.exit_code == 0, result.output
    assert "Toy cluster name" in result.output
    return out


def test_init_asks_the_toys_question_and_writes_its_starter_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _init(tmp_path, monkeypatch)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["target"] == "toy"
    assert data["toy"]["cluster"] == "lab-7"
    assert (data["workload"]["namespace"], data["workload"]["name"]) == ("rl-jobs", "grpo")
    assert "# change to your team" in path.read_text(encoding="utf-8")  # the starter text's comments kept
    schema = json.loads((tmp_path / "rlobs.schema.json").read_text(encoding="utf-8"))
    assert "ToySpec" in schema["$defs"]


def test_validate_warns_about_the_toys_placeholder_and_its_own_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _init(tmp_path, monkeypatch)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "toy.owner: expected your own team, got the blueprint's placeholder 'my-team'" in result.output
    assert "toy.cluster: expected a rack (toy.rack), got none" in result.output
    bad = path.read_text(encoding="utf-8").replace("owner: my-team", "owner: my-team\n  scrapeInterval: 2m")
    path.write_text(bad, encoding="utf-8")
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code != 0
    line = next(n for n, text in enumerate(bad.splitlines(), 1) if "scrapeInterval" in text)
    assert f"{path}:{line}:" in result.output and "expected one of 15s, 30s, 1m, got '2m'" in result.output


def test_render_builds_its_configmap_and_prometheusrule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _init(tmp_path, monkeypatch)
    out = tmp_path / "out"
    result = runner.invoke(app, ["render", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yaml"))
    assert "toy/config.yaml" in written and "toy/rules.yaml" in written
    config = yaml.safe_load((out / "toy/config.yaml").read_text(encoding="utf-8"))
    assert (config["kind"], config["data"]) == ("ConfigMap", {"cluster": "lab-7"})
    rules = yaml.safe_load((out / "toy/rules.yaml").read_text(encoding="utf-8"))
    assert rules["kind"] == "PrometheusRule"
    alerts = [r["alert"] for g in rules["spec"]["groups"] for r in g["rules"] if "alert" in r]
    assert alerts and all(
        r["labels"]["cluster"] == "lab-7" for g in rules["spec"]["groups"] for r in g["rules"] if "alert" in r
    )


def test_the_schema_has_the_toy_section_and_its_rule() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.output)
    assert {"eks", "gke", "toy"} == set(schema["discriminator"]["mapping"])
    toy = schema["$defs"]["ToySpec"]
    assert {"cluster", "owner", "scrapeInterval", "rack"} <= set(toy["properties"])
    assert {"properties": {"scrapeInterval": {"enum": ["15s", "30s", "1m"]}}} in toy["allOf"]
    fleet = json.loads(runner.invoke(app, ["schema", "--fleet"]).output)
    cluster = fleet["$defs"]["FleetCluster"]
    assert "toy" in cluster["properties"]["target"]["enum"] and "rack" in cluster["properties"]


def test_a_fleet_of_toy_clusters_renders_each_cluster_with_its_fleet_field(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET, encoding="utf-8")
    assert runner.invoke(app, ["validate", str(path)]).exit_code == 0
    out = tmp_path / "out"
    result = runner.invoke(app, ["render", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    for name, rack in (("toy-a", "r1"), ("toy-b", "r2")):
        profile = yaml.safe_load((out / f"profiles/{name}.yaml").read_text(encoding="utf-8"))
        assert profile["toy"] == {"owner": "ml-team", "cluster": name, "rack": rack}
        assert (out / f"clusters/{name}/toy/rules.yaml").is_file()
    assert "`toy-a` | toy | `dev` | `toy-1`" in (out / "README.md").read_text(encoding="utf-8")


def test_a_toy_cluster_without_its_fleet_field_is_refused_at_its_entry(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    text = FLEET.replace(", rack: r2}", "}").replace("region: toy-1,", "region: toy-1, project: rl-toy-project,")
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code != 0
    assert f"{path}:15:19: clusters[1].target: target is toy, so expected `rack:`, got none" in result.output
    assert "clusters[0].project: expected no project on a toy cluster, got one" in result.output
