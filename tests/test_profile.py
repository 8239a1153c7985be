"""Profile loading: every problem at once, each as file:line:col: path: expected X, got Y."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rlobs.profile.load
from rlobs.errors import ProfileError
from rlobs.targets import load_profile, parse_profile
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.gke.profile import GkeProfile
from testing.helpers import GOOD, all_profiles, write_tree


def _errors(text: str) -> list[str]:
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    return info.value.lines()


def test_good_profile_loads_into_frozen_objects() -> None:
    p = parse_profile(GOOD)
    assert p.workload.run.id is None  # never the workload name: the app picks one per run
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
        "p.yaml:9:14: workload.namespace: expected a Kubernetes name (RFC 1123 label: at most 63 lowercase letters, "
        "digits and '-', starting and ending with a letter or digit) like rl-trainer, got the number 42 "
        '(quote it: "42")',
        "p.yaml:14:13: gke.location: expected a GCP region or zone like us-central1 or us-central1-a, "
        "got 'us central 1': did you mean us-central1? (the regions and zones gcping 85ed7a9 + skypilot-catalog "
        "006059e lists, 2026-12-03)",
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
        "p.yaml:9:14: workload.namespace: expected a Kubernetes name (RFC 1123 label: at most 63 lowercase letters, "
        "digits and '-', starting and ending with a letter or digit) like rl-trainer, got the number 42 "
        '(quote it: "42")',
    ]


@pytest.mark.parametrize(("value", "got"), [("{a: 1}", "a mapping"), ("[eks]", "a list"), ("1", "1")])
def test_a_target_that_is_not_a_name_is_one_located_problem(value: str, got: str) -> None:
    (line,) = _errors(GOOD.replace("target: gke", f"target: {value}"))
    assert line == f"p.yaml:6:9: target: expected one of eks, gke, got {got}"


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
        ("path: observability", "path: ../../etc", "gitops.path"),
        ("path: observability", "path: a/./b", "gitops.path"),
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


def test_a_receiver_named_null_is_refused_once_per_receiver() -> None:
    null = "    - name: 'null'\n      type: webhook\n      secretRef: {name: hook, key: url}\n"
    text = _eks_with("  # terraformVariables:", null + null + "  # terraformVariables:")
    with pytest.raises(ProfileError) as err:
        parse_profile(text, "p.yaml")
    lines = err.value.lines()
    assert len(lines) == 2 and all("expected a name other than null" in line for line in lines), lines


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


def test_an_inline_grafana_password_suggests_the_key_grafana_has() -> None:
    (line,) = _errors(_eks_with("    adminSecret: grafana-admin", "    adminPassword: hunter2"))
    assert "eks.grafana.adminPassword:" in line and "`adminSecret: grafana-admin`" in line
    assert "secretRef" not in line and "hunter2" not in line


def test_an_inline_secret_in_a_receiver_suggests_its_secret_ref() -> None:
    (line,) = _errors(_eks_with("      type: slack\n", "      type: slack\n      webhookUrl: hunter2\n"))
    assert "eks.alertmanagerReceivers[0].webhookUrl:" in line
    assert "`secretRef: {name: my-secret, key: password}`" in line


def test_a_section_without_secret_references_says_so() -> None:
    (line,) = _errors(GOOD.replace("  cluster: rl-cluster", "  cluster: rl-cluster\n  apiToken: hunter2"))
    assert "`gke:` takes no Secret reference" in line


def _sections(model: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every object in the profile model and its key path (list items under their list's key)."""
    from rlobs.profile.load import _model_of

    yield path, model
    for name, field in model.model_fields.items():
        sub = _model_of(field.annotation)
        if sub is not None:
            yield from _sections(sub, (*path, field.alias or name))


@pytest.mark.parametrize(("root", "refs"), [(EksProfile, 7), (GkeProfile, 0)], ids=["eks", "gke"])
def test_every_secret_hint_names_a_key_of_its_own_section(root: Any, refs: int) -> None:
    from rlobs.profile.load import secret_hint

    checked = 0
    for path, model in _sections(root):
        hint = secret_hint(model, (*path, "password"))
        keys = {f.alias or n for n, f in model.model_fields.items()}
        named = re.findall(r"`(\w+): ", hint)
        assert set(named) <= keys, (path, hint)
        assert named or "takes no Secret reference" in hint, (path, hint)
        checked += len(named)
    assert checked == refs  # eks: grafana's, opensearch's three, a receiver's secretRef, a remote Prometheus's two


# Words in backticks that are not profile keys: YAML's own `key: value`, the helm chart field `release:`, the
# rollout engines' metric prefixes (`vllm:*`, `sglang:*`).
_NOT_PROFILE_KEYS = {"key", "release", "vllm", "sglang"}


def test_every_key_a_message_names_exists_in_the_model() -> None:
    """Walk every string in the profile package's messages: each dotted profile path (eks.cluster.name) resolves in
    the model, and each `key:` in backticks is a key of some section."""
    from rlobs.profile.load import _walk

    keys = {"eks", "gke"} | {
        f.alias or n for root in (EksProfile, GkeProfile) for _, m in _sections(root) for n, f in m.model_fields.items()
    }
    named: list[tuple[str, str]] = []
    package = Path(rlobs.profile.load.__file__).parent.parent
    # The profile package's messages, and each target's profile sections and rules.
    sections = [
        package / "targets" / t / f"{m}.py" for t in ("eks", "gke") for m in ("profile", "helmvalues", "terraform")
    ]
    for source in sorted([*package.joinpath("profile").glob("*.py"), *(p for p in sections if p.exists())]):
        if source.name in ("fleet.py", "fleetspec.py"):  # the fleet file's own keys (tests/test_fleet.py)
            continue
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named += [(source.name, m) for m in _DOTTED.findall(node.value)]
                named += [(source.name, f"`{m}") for m in re.findall(r"`(\w+):", node.value)]
    assert len(named) > 20
    for where, name in named:
        if name.startswith("`"):
            assert name[1:] in keys | _NOT_PROFILE_KEYS, (where, name)
            continue
        root = EksProfile if name.startswith("eks.") else GkeProfile
        *parents, leaf = name.split(".")
        model = _walk(root, tuple(parents))[0]
        assert model is not None and leaf in {f.alias for f in model.model_fields.values()}, (where, name)


_DOTTED = re.compile(r"(?<![\w/.-])(?:workload|eks|gke|alerts|metadata)\.[A-Za-z][A-Za-z.]*[A-Za-z]")


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ('availability_zones_count: "three"', "expected a number (Terraform type number), got 'three'"),
        ("availability_zones_count: [1, 2]", "expected a number (Terraform type number), got a list"),
        ("enable_nvidia_gpu_operator: null", "expected true or false (Terraform type bool), got null"),
    ],
)
def test_a_terraform_variable_of_the_wrong_type_is_one_line_at_its_own_key(block: str, expected: str) -> None:
    text = all_profiles()["eks-jark"].replace("eks:\n", f"eks:\n  terraformVariables:\n    {block}\n", 1)
    (line,) = _errors(text)
    assert line.split(": ", 1)[1] == f"eks.terraformVariables.{block.split(':')[0]}: {expected}"


def test_every_bad_terraform_variable_is_reported_with_a_union_typed_value_among_them() -> None:
    block = "    availability_zones_count: [1]\n    ami_family: ubuntu\n    no_such_var: 1\n"
    lines = _errors(all_profiles()["eks-jark"].replace("eks:\n", f"eks:\n  terraformVariables:\n{block}", 1))
    assert [line.split(": ")[1] for line in lines] == [
        "eks.terraformVariables.availability_zones_count",
        "eks.terraformVariables.ami_family",
        "eks.terraformVariables.no_such_var",
    ]


def test_a_number_for_a_duration_says_which_unit_to_add() -> None:
    (line,) = _errors(GOOD.replace("  container: trainer", "  container: trainer\n  exportInterval: 15"))
    assert line == (
        "p.yaml:11:19: workload.exportInterval: expected a duration like 15s (a number and a unit), got the number 15"
    )


@pytest.mark.parametrize(("typed", "shown"), [(".inf", "inf"), ("-.inf", "-inf"), (".nan", "nan")])
def test_an_infinite_or_nan_duration_is_one_line_not_a_traceback(typed: str, shown: str) -> None:
    (line,) = _errors(GOOD.replace("  container: trainer", f"  container: trainer\n  exportInterval: {typed}"))
    assert line == (
        "p.yaml:11:19: workload.exportInterval: expected a duration like 30s, 15m, 6h or 1d (a number and a unit), "
        f"got the number {shown}"
    )


def test_an_unquoted_version_says_what_yaml_made_of_it_and_to_quote_it() -> None:
    (line,) = _errors(_eks_with('kubernetesVersion: "1.35"', "kubernetesVersion: 1.30"))
    assert line.endswith(
        "eks.cluster.kubernetesVersion: expected a Kubernetes minor version like 1.34, got the number 1.3 "
        '(an unquoted 1.30 is a number in YAML: quote it, "1.30")'
    )


def test_an_unquoted_yes_is_named_as_yaml_reads_it() -> None:
    (line,) = _errors(GOOD.replace("system: verl", "system: yes"))
    assert line.endswith('got true (an unquoted yes is a boolean in YAML: quote it, "yes")'), line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "kind: Profile\nmetadata:\n\tname: x\n",
            "p.yaml:3:1: invalid YAML: a tab character: YAML indents with spaces",
        ),
        ("metadata:\n  name: x\n   description: y\n", "p.yaml:3:15: invalid YAML: unexpected ':' here: a key indented"),
        ("metadata:\n  name: x\n description: y\n", "p.yaml:3:2: invalid YAML: this line is indented less than"),
        ("metadata:\n  - x\n  name: y\n", "p.yaml:3:3: invalid YAML: a key among list items"),
        ("metadata:\n  name: x\n  descr\n", "p.yaml:3:3: invalid YAML: expected `key: value`"),
        ('metadata:\n  name: "x\n', "p.yaml:2:9: invalid YAML: a quoted value without its closing quote"),
        ("metadata:\n  name: 2026-02-30\n", "p.yaml:1:1: invalid YAML: day is out of range for month"),
    ],
)
def test_yaml_syntax_errors_get_a_hint_at_their_position(text: str, expected: str) -> None:
    (line,) = _errors(text)
    assert line.startswith(expected), line
    assert "while " not in line and "token" not in line


def test_a_nul_byte_is_one_problem_at_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"kind: Profile\nmetadata:\n  name: \xc3\xa9x\0\n")
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert info.value.lines() == [f"{path}:3:11: expected text, got a NUL byte"]


def _unions(annotation: Any) -> Iterator[Any]:
    """Every union of two or more non-None types inside an annotation (Optional[X] is not one: no member tags)."""
    import types
    import typing

    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(set(args) - {type(None)}) > 1:
        yield annotation
    for arg in args:
        yield from _unions(arg)


# Fields whose union type is checked first by a validator that reports one problem per value (pydantic would report a
# bad value once per union member, under key paths the profile does not have).
_CHECKED_UNIONS = {("EksSpec", "terraform_variables")}


def test_every_union_typed_field_reports_one_problem_per_bad_value() -> None:
    found = set()
    for root in (EksProfile, GkeProfile):
        for _, model in _sections(root):
            for name, field in model.model_fields.items():
                if name != "target" and any(True for _ in _unions(field.annotation)):
                    found.add((model.__name__, name))
    assert found == _CHECKED_UNIONS
