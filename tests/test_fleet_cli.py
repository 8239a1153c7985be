"""`rlobs init --fleet`, `render` and `validate` of a fleet file, and what the fleet bundle holds per cluster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from rlobs.bundle.request import RenderRequest
from rlobs.main import app
from testing.bundles import build
from testing.fleet import example, example_build, example_text
from testing.helpers import GOOD, REPO, module, tool

# Runs the installed rlobs in subprocesses; still run by make test and CI.
pytestmark = pytest.mark.slow

runner = CliRunner()


def _fleet_file(tmp_path: Path) -> Path:
    path = tmp_path / "fleet.yaml"
    result = runner.invoke(app, ["init", "--fleet", "-o", str(path)])
    assert result.exit_code == 0, result.output
    return path


def test_init_fleet_writes_the_example_and_never_overwrites(tmp_path: Path) -> None:
    path = _fleet_file(tmp_path)
    modeline = "# yaml-language-server: $schema=./rlobs-fleet.schema.json\n"
    assert path.read_text(encoding="utf-8") == modeline + example_text()
    module("jsonschema", "checks the example against the fleet's JSON Schema")
    import jsonschema

    schema = json.loads((tmp_path / "rlobs-fleet.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(yaml.safe_load(example_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**yaml.safe_load(example_text()), "clusterz": []}, schema)
    again = runner.invoke(app, ["init", "--fleet", "-o", str(path)])
    assert again.exit_code == 2 and "exists" in again.output


def test_render_then_check_then_validate(tmp_path: Path) -> None:
    path, out = _fleet_file(tmp_path), tmp_path / "out"
    first = runner.invoke(app, ["render", str(path), "-o", str(out)])
    assert first.exit_code == 0, first.output
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == sorted([".gitignore", ".rlobs-manifest.json", *(r.path for r in example_build().files)])
    check = runner.invoke(app, ["render", str(path), "-o", str(out), "--check"])
    assert check.exit_code == 0, check.output
    ok = runner.invoke(app, ["validate", str(path), "--format", "json"])
    assert ok.exit_code == 0
    (entry,) = json.loads(ok.output)
    warnings = entry.pop("warnings")
    assert entry == {"profile": str(path), "name": "rl-fleet", "valid": True, "errors": []}
    assert [w["path"] for w in warnings] == ["gitops.repoUrl"]  # the starter fleet's placeholder repository


def test_bad_fleet_exits_2_with_located_lines_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(example_text().replace("region: us-east-2", "region: nowhere"), encoding="utf-8")
    result = runner.invoke(app, ["render", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert not (tmp_path / "out").exists()
    assert "Traceback" not in result.output
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert line.startswith(f"error: {path}:") and "clusters[0].region: expected an AWS region" in line


def test_a_fleet_is_rendered_alone(tmp_path: Path) -> None:
    path = _fleet_file(tmp_path)
    (tmp_path / "p.yaml").write_text(GOOD, encoding="utf-8")
    result = runner.invoke(app, ["validate", str(path), str(tmp_path / "p.yaml")])
    assert result.exit_code == 2 and "is a fleet: expected it as the only file" in result.output


def test_preview_needs_a_fleet(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(GOOD, encoding="utf-8")
    result = runner.invoke(app, ["render", str(tmp_path / "p.yaml"), "--preview"])
    assert result.exit_code == 2 and "expected a fleet file" in result.output


def test_each_cluster_folder_is_its_single_cluster_bundle() -> None:
    """GKE clusters: the whole bundle; EKS clusters: all but argocd/, values/ and the README, which the
    ApplicationSets, the values layers and the fleet README replace."""
    files = {r.path: r.text for r in example_build().files}
    for m in example().members:
        single = {r.path: r.text for r in build(m.profile)}
        if m.cluster.target == "eks":
            single = {p: t for p, t in single.items() if not p.startswith(("argocd/", "values/", "README.md"))}
        prefix = f"clusters/{m.name}/"
        assert {p.removeprefix(prefix): t for p, t in files.items() if p.startswith(prefix)} == single, m.name
        assert yaml.safe_load(files[f"profiles/{m.name}.yaml"]) == m.data


def test_a_project_script_runs_each_of_its_clusters_setup(tmp_path: Path) -> None:
    import subprocess

    from rlobs.fleet.commands import parse_fleet
    from rlobs.fleet.plan import build_fleet

    text = example_text().replace("project: rl-prod-project", "project: rl-dev-project")
    text = text.replace("projects/rl-prod-project/", "projects/rl-dev-project/")
    files = {r.path: r for r in build_fleet(parse_fleet(text, "fleet.yaml")).files}
    script = files["gke/rl-dev-project/setup.sh"]
    assert script.executable and "for cluster in dev-gke prod-gke; do" in script.text
    assert not any(p.startswith("gke/rl-prod-project/") for p in files)
    # Run it against stand-in cluster scripts: each cluster's setup runs once, in order, --dry-run passed on.
    for name in ("dev-gke", "prod-gke"):
        stub = tmp_path / "clusters" / name / "scripts" / "setup.sh"
        stub.parent.mkdir(parents=True)
        stub.write_text(f'#!/usr/bin/env bash\necho "{name} $*"\n', encoding="utf-8")
        stub.chmod(0o755)
    path = tmp_path / "gke" / "rl-dev-project" / "setup.sh"
    path.parent.mkdir(parents=True)
    path.write_text(script.text, encoding="utf-8")
    proc = subprocess.run(["bash", str(path), "--dry-run"], capture_output=True, text=True, check=True)
    assert [ln for ln in proc.stdout.splitlines() if not ln.startswith("#")] == [
        "dev-gke --dry-run",
        "prod-gke --dry-run",
    ]


def _live_secrets(drop: tuple[str, str] | None = None) -> str:
    """The hub's cluster Secrets as kubectl prints them, labelled and annotated from the contract (credentials in
    `config` stand in for what a real Secret holds and must never be read)."""
    import base64

    items = []
    for name, meta in example_build().contracts.items():
        annotations = {k: v for k, v in meta.annotations.items() if (name, k) != drop}
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {
                    "name": f"{name}-cluster",
                    "namespace": "argocd",
                    "labels": {"argocd.argoproj.io/secret-type": "cluster", **meta.labels},
                    "annotations": annotations,
                },
                "data": {
                    "name": base64.b64encode(name.encode()).decode(),
                    "server": base64.b64encode(b"https://example.eks.amazonaws.com").decode(),
                    "config": base64.b64encode(b'{"bearerToken": "not-a-real-token"}').decode(),
                },
            }
        )
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})


def test_validate_checks_the_live_cluster_secrets(tmp_path: Path) -> None:
    path = _fleet_file(tmp_path)
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(_live_secrets(), encoding="utf-8")
    ok = runner.invoke(app, ["validate", str(path), "--cluster-secrets", str(secrets)])
    assert ok.exit_code == 0, ok.output
    # Remove one annotation a template needs from one cluster's Secret: validate names the cluster, key, template.
    secrets.write_text(_live_secrets(drop=("prod-usw2-a", "rlobs.io/revision")), encoding="utf-8")
    bad = runner.invoke(app, ["validate", str(path), "--cluster-secrets", str(secrets)])
    assert bad.exit_code == 2
    assert (
        "cluster prod-usw2-a: annotation rlobs.io/revision is missing (read by applicationsets/rl-layer.yaml)"
        in bad.output
    )
    assert "prod-usw2-b" not in bad.output and "not-a-real-token" not in bad.output


def test_validate_finds_clusters_the_selectors_miss_or_wrongly_match(tmp_path: Path) -> None:
    path = _fleet_file(tmp_path)
    data = yaml.safe_load(_live_secrets())
    data["items"][0]["metadata"]["labels"]["rlobs.io/enabled"] = "false"  # dev-use2
    data["items"][2]["metadata"]["labels"]["rlobs.io/stack"] = "rlobs"  # prod-usw2-b runs ai-on-eks
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = runner.invoke(app, ["validate", str(path), "--cluster-secrets", str(secrets)])
    assert result.exit_code == 2
    assert "cluster dev-use2: no cluster Secret of it is selected by applicationsets/rl-layer.yaml" in (result.output)
    assert (
        "cluster prod-usw2-b: its cluster Secret is selected by applicationsets/kube-prometheus-stack.yaml, but the "
        "fleet does not give it that component" in result.output
    )


def test_validate_reads_only_cluster_secrets_and_names_an_invalid_value(tmp_path: Path) -> None:
    path = _fleet_file(tmp_path)
    data = yaml.safe_load(_live_secrets())
    first = data["items"][0]["metadata"]
    first["annotations"]["rlobs.io/revision"] = "HEAD"
    # A repository Secret beside them, even one carrying a cluster's labels, is not that cluster's Secret.
    other = data["items"][1]["metadata"]["labels"]
    labels = {**other, "argocd.argoproj.io/secret-type": "repository"}
    data["items"].append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "gitops-repo", "labels": labels}})
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = runner.invoke(app, ["validate", str(path), "--cluster-secrets", str(secrets)])
    assert result.exit_code == 2
    cluster = first["labels"]["rlobs.io/cluster"]
    expected = "annotation rlobs.io/revision expected a pinned branch, tag or commit (not HEAD), got 'HEAD'"
    assert f"cluster {cluster}: {expected}" in result.output
    assert f"cluster {other['rlobs.io/cluster']}" not in result.output


@pytest.mark.slow
def test_metadata_printed_by_kubectls_jsonpath_validates(tmp_path: Path) -> None:
    """The README's command prints each Secret's `.metadata` with kubectl's JSONPath; real kubectl prints it as
    JSON (run offline here with `label --local`, one Secret at a time), which loads as YAML without any data."""
    import subprocess

    kubectl = tool("kubectl", "prints the cluster Secrets' metadata the way the fleet README says")
    path = _fleet_file(tmp_path)
    out = []
    for n, item in enumerate(yaml.safe_load(_live_secrets())["items"]):
        one = tmp_path / f"secret-{n}.yaml"
        one.write_text(yaml.safe_dump(item), encoding="utf-8")
        template = '{"---\\nkind: Secret\\nmetadata: "}{.metadata}{"\\n"}'
        proc = subprocess.run(
            [kubectl, "label", "--local", "-f", str(one), "checked=1", "-o", f"jsonpath={template}"],
            capture_output=True,
            text=True,
            check=True,
        )
        out.append(proc.stdout)
    secrets = tmp_path / "cluster-secrets.yaml"
    secrets.write_text("".join(out), encoding="utf-8")
    assert "config" not in secrets.read_text(encoding="utf-8")
    ok = runner.invoke(app, ["validate", str(path), "--cluster-secrets", str(secrets)])
    assert ok.exit_code == 0, ok.output


def test_unreadable_cluster_secrets_are_bad_input(tmp_path: Path) -> None:
    path = _fleet_file(tmp_path)
    for n, text in enumerate(["a: [", "kind: List\nitems: 5\n", "- 1\n- kind: Secret\n  metadata: 3\n"]):
        secrets = tmp_path / f"s{n}.yaml"
        secrets.write_text(text, encoding="utf-8")
        result = runner.invoke(app, ["validate", str(path), "--cluster-secrets", str(secrets)])
        assert result.exit_code == 2, result.output
        assert ("Traceback" not in result.output and result.exception is None) or isinstance(
            result.exception, SystemExit
        )
    missing = runner.invoke(app, ["validate", str(path), "--cluster-secrets", str(tmp_path / "none.yaml")])
    assert missing.exit_code == 2 and "expected the cluster Secrets' metadata as YAML" in missing.output
    profile = tmp_path / "p.yaml"
    profile.write_text(GOOD, encoding="utf-8")
    alone = runner.invoke(app, ["validate", str(profile), "--cluster-secrets", str(tmp_path / "s0.yaml")])
    assert alone.exit_code == 2 and "expected a fleet file" in alone.output


def test_schema_fleet_is_what_init_writes(tmp_path: Path) -> None:
    _fleet_file(tmp_path)
    result = runner.invoke(app, ["schema", "--fleet"])
    assert result.exit_code == 0
    assert result.output == (tmp_path / "rlobs-fleet.schema.json").read_text(encoding="utf-8")
    assert json.loads(result.output)["$id"].endswith("fleet.json")


def test_a_fleet_render_failing_midway_leaves_the_old_bundle_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlobs.errors import RlobsError
    from rlobs.fleet import commands as fleets
    from rlobs.fleet import plan
    from testing.trees import snapshot

    path = _fleet_file(tmp_path)
    out = tmp_path / "out"
    fleets.render(path, RenderRequest(out))
    before = snapshot(out)
    path.write_text(path.read_text().replace("threshold: 0.25", "threshold: 0.3"))  # every cluster's rules change
    third = fleets.load_fleet(path).members[2].profile.metadata.name
    real = plan.render

    def failing(built: plan.Plan, env: Any = None) -> tuple[plan.Rendered, ...]:
        if built.name == third:  # two clusters already built (by name: the clusters build in forked workers)
            raise RlobsError("planted")
        return real(built, env)

    monkeypatch.setattr(plan, "render", failing)
    with pytest.raises(RlobsError, match="planted"):
        fleets.render(path, RenderRequest(out))
    assert snapshot(out) == before  # no staging folder, no journal, the old bundle byte for byte
    with pytest.raises(RlobsError, match="planted"):
        fleets.render(path, RenderRequest(tmp_path / "new" / "out"))
    assert not (tmp_path / "new").exists()  # the folders the render created are gone again


@pytest.mark.parametrize("first", ["profile", "fleet"])
def test_a_render_taking_over_the_other_kinds_folder_leaves_none_of_its_files(tmp_path: Path, first: str) -> None:
    # One path rule for every render (rlobs.fleet.paths): the bundle taken over is removed, not left beside.
    from testing.trees import snapshot

    renders = {"profile": str(REPO / "blueprints" / "eks-jark.yaml"), "fleet": str(_fleet_file(tmp_path))}
    second = "fleet" if first == "profile" else "profile"
    alone = tmp_path / "alone"
    assert runner.invoke(app, ["render", renders[second], "-o", str(alone)]).exit_code == 0
    out = tmp_path / "out"
    assert runner.invoke(app, ["render", renders[first], "-o", str(out)]).exit_code == 0
    took = runner.invoke(app, ["render", renders[second], "-o", str(out), "--force"])
    assert took.exit_code == 0, took.output
    assert snapshot(out) == snapshot(alone)
