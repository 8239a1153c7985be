"""Every free-text profile field through every output format (hypothesis): a value the profile accepts comes back
exactly from each rendered file that holds it, read by that format's own parser (YAML, JSON, python-hcl2, `ast`,
POSIX shell words, CommonMark), and, marked slow, promtool and amtool accept the alerting it feeds and expand its
templates back to the intended text.

Each generated value carries a sentinel (PRE ... POST); a file whose text holds PRE must yield, once parsed, a string
holding the whole value. Hypothesis runs through its plain `@given` API (the pytest plugin is off, see pyproject)."""

from __future__ import annotations

import ast
import json
import subprocess
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hcl2
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from rlobs.bundle.check import hcl_for_parser
from rlobs.bundle.spec import Rendered
from rlobs.errors import ProfileError
from rlobs.targets import parse_profile
from testing import expansion
from testing.bundles import build
from testing.helpers import all_profiles, tool

PRE, POST = "qzx", "xzq"

# What breaks formats and template languages, plus anything at all.
_NASTY = [*"aZ09 -_./:@+%#?&=!*,;~$'\"`\\{}[]()<>|^\n\t\r\x00\x1b\x7f\u202e\u2028\x85é", "{{", "${", "%{", "$(", "[["]
MIDDLE = st.one_of(
    st.lists(st.sampled_from(_NASTY), max_size=12).map("".join),
    st.text(alphabet="az09-_.:/@+%", max_size=12),  # mostly accepted, so the round trips run often
    st.text(max_size=12),
)


@dataclass(frozen=True)
class Field:
    """A free-text field: the blueprint it is set in, how a value is placed, and the value's fixed frame."""

    blueprint: str
    put: Callable[[dict[str, Any], str], None]
    frame: tuple[str, str] = ("", "")
    in_bundle: bool = True  # metadata.description is shown by `rlobs blueprints` only


def _tracker(kind: str, key: str) -> Callable[[dict[str, Any], str], None]:
    def put(data: dict[str, Any], value: str) -> None:
        base = {
            "wandb": {"entity": "rl-team", "project": "grpo"},
            "mlflow": {"url": "https://mlflow.example", "experiment": "7"},
        }
        data["workload"]["tracker"] = {"kind": kind, **base[kind], key: value}

    return put


def _set(*path: str) -> Callable[[dict[str, Any], str], None]:
    def put(data: dict[str, Any], value: str) -> None:
        node = data
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value

    return put


def _channel(data: dict[str, Any], value: str) -> None:
    data["eks"]["alertmanagerReceivers"][0]["channel"] = value


FIELDS = {
    "metadata.description": Field("eks-jark", _set("metadata", "description"), in_bundle=False),
    "workload.tracker.url (eks)": Field("eks-jark", _tracker("mlflow", "url"), ("https://mlflow.example/", "")),
    "workload.tracker.url (gke)": Field("gke-managed-otel", _tracker("mlflow", "url"), ("https://mlflow.example/", "")),
    "workload.tracker.project": Field("eks-jark", _tracker("wandb", "project")),
    "workload.tracker.entity (gke)": Field("gke-managed-otel", _tracker("wandb", "entity")),
    "workload.run.algorithm": Field("eks-jark", _set("workload", "run", "algorithm")),
    "eks.gitops.repoUrl": Field("eks-jark", _set("eks", "gitops", "repoUrl"), ("https://github.com/acme/", "")),
    "eks.alertmanagerReceivers[].channel": Field("eks-jark", _channel, ("#", "")),
    "eks.terraformVariables (string)": Field("eks-jark", _set("eks", "terraformVariables", "solution_description")),
    "eks.helmValues (open string)": Field(
        "eks-jark",
        _set("eks", "helmValues", "kube-prometheus-stack", "prometheus", "prometheusSpec", "nodeSelector", "pool"),
    ),
    "gke.userLabels (value)": Field("gke-managed-otel", _set("gke", "userLabels", "team")),
    "gke.userLabels (terraform)": Field("gke-autopilot-jobset", _set("gke", "userLabels", "team")),
    # An identifier rather than free text, here for the shell scripts it reaches (gcloud argv).
    "gke.project": Field("gke-managed-otel", _set("gke", "project"), ("rl-", "")),
}


@dataclass
class Tally:
    accepted: int = 0
    refused: int = 0
    formats: set[str] = field(default_factory=set)  # the formats the value was read back from


TALLY: dict[str, Tally] = {name: Tally() for name in FIELDS}


def _profile_text(field: Field, value: str) -> str:
    data = yaml.safe_load(all_profiles()[field.blueprint])
    field.put(data, value)
    # JSON is YAML, and its escapes are exact: PyYAML's pure-Python emitter writes a NEL (U+0085) raw inside a quoted
    # scalar, which its reader then folds into a space.
    return json.dumps(data)


def _accepted(name: str, middle: str) -> tuple[str, tuple[Rendered, ...]] | None:
    """(value, bundle) when the profile accepts the value, else None (a refusal: one located line per problem)."""
    field = FIELDS[name]
    value = f"{field.frame[0]}{PRE}{middle}{POST}{field.frame[1]}"
    try:
        profile = parse_profile(_profile_text(field, value), "fuzz.yaml")
    except ProfileError as exc:
        TALLY[name].refused += 1
        assert all(line.startswith("fuzz.yaml:") and line.isprintable() for line in exc.lines()), exc.lines()
        return None
    TALLY[name].accepted += 1
    return value, (build(profile) if field.in_bundle else ())


# ---- each format's own parser, down to its strings ---------------------------------------------------------------


def _leaves(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(key)
            yield from _leaves(value)
    elif isinstance(node, list | tuple):
        for value in node:
            yield from _leaves(value)
    elif isinstance(node, str):
        yield node


def _hcl_string(text: str) -> str:
    # python-hcl2 keeps a string's quotes and escapes; the escapes are JSON's, plus $${ / %%{ (done by hcl_for_parser).
    # It also keeps an interpolation as its text, so a `${` or `%{` left in the raw string would read back as the
    # value although Terraform evaluates it: none may be left.
    if PRE in text:
        assert "${" not in text and "%{" not in text, f"a template sequence Terraform would evaluate: {text}"
    return str(json.loads(text)) if text.startswith('"') and text.endswith('"') else text


def _shell_words(text: str) -> Iterator[str]:
    """The words of each line holding the sentinel, as bash itself splits them: bash runs `set -- <line>` restricted,
    with an empty environment and no PATH, so only builtins could run if quoting broke."""
    for line in text.replace("\\\n", " ").splitlines():
        if PRE not in line:
            continue
        script = f"set -f; set -- {line}\nprintf '%s\\0' \"$@\""
        proc = subprocess.run(
            ["/bin/bash", "--noprofile", "--norc", "-r", "-c", script], env={}, capture_output=True, check=False
        )
        yield from proc.stdout.decode("utf-8", "replace").split("\0")


def _markdown(text: str) -> Iterator[str]:
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        if token.type == "fence":
            yield from _shell_words(token.content) if token.info in ("sh", "bash") else [token.content]
        for child in token.children or []:
            yield child.content
            if child.type == "link_open":
                assert PRE not in str(child.attrGet("href")), f"a link made of a profile value: {child.attrGet('href')}"


def _strings(r: Rendered) -> Iterator[str]:
    if r.fmt == "yaml":
        for doc in yaml.safe_load_all(r.text):
            yield from _leaves(doc)
    elif r.fmt == "json":
        yield from _leaves(json.loads(r.text))
    elif r.fmt == "hcl":
        yield from (_hcl_string(s) for s in _leaves(hcl2.loads(hcl_for_parser(r.text))))
    elif r.fmt == "py":
        yield from (
            n.value for n in ast.walk(ast.parse(r.text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        )
    elif r.fmt == "sh":
        yield from _shell_words(r.text)
    elif r.fmt == "md":
        yield from _markdown(r.text)
    else:
        yield from r.text.splitlines()


def _holds(strings: Iterator[str], value: str) -> bool:
    """Some string holds the value; a string holding only part of it may be an embedded document (a dashboard's JSON
    in a ConfigMap, a collector config), read in turn."""
    for text in strings:
        if value in text:
            return True
        if PRE in text:
            for parse in (json.loads, yaml.safe_load):
                try:
                    inner = parse(text)
                except (ValueError, yaml.YAMLError):
                    continue
                if not isinstance(inner, str) and _holds(_leaves(inner), value):
                    return True
    return False


def _round_trips(name: str, middle: str) -> None:
    found = _accepted(name, middle)
    if found is None:
        return
    value, files = found
    if not FIELDS[name].in_bundle:
        # Printed in a terminal table: no control, line-separator or (BMP) format character.
        bad = [
            c
            for c in value
            if unicodedata.category(c) in ("Cc", "Zl", "Zp") or (unicodedata.category(c) == "Cf" and ord(c) < 0x10000)
        ]
        assert not bad and len(value) <= 200, f"metadata.description accepted with {bad!r}"
        return
    holding = [r for r in files if PRE in r.text]
    assert holding, f"{name}: the value reaches no file"
    for r in holding:
        assert _holds(_strings(r), value), f"{name}: {r.path} ({r.fmt}) does not give back {value!r}"
        TALLY[name].formats.add(r.fmt)


def _run(name: str, examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(MIDDLE)
    def check(middle: str) -> None:
        _round_trips(name, middle)

    check()
    tally = TALLY[name]
    formats = ", ".join(sorted(tally.formats)) or "none"
    print(f"{name}: {tally.accepted} accepted and round-tripped ({formats}), {tally.refused} refused")


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_every_accepted_value_round_trips_through_every_format(name: str) -> None:
    _run(name, 12)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIELDS))
def test_every_accepted_value_round_trips_through_every_format_at_length(name: str) -> None:
    _run(name, 150)


# ---- the alerting the values feed, by promtool and amtool --------------------------------------------------------

# libyaml where PyYAML has it, for the bundle files the alerting checks pass on to promtool and amtool (the files'
# own round trips are the fuzz above, by PyYAML's reader).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_DUMPER)


# The files the alerting checks read, kept from each accepted value's bundle until promtool and amtool read them all.
_ALERTING_FILES = (
    "tests/rl-alerts.rules.yaml",
    "tests/rl-alerts.test.yaml",
    "rl-layer/rl-prometheusrule.yaml",
    "values/kube-prometheus-stack.yaml",
)
ALERTING = (
    "workload.tracker.url (eks)",
    "workload.tracker.project",
    "eks.gitops.repoUrl",
    "eks.alertmanagerReceivers[].channel",
)


def _promtool(accepted: list[tuple[str, dict[str, str]]], tmp: Path) -> None:
    """Every accepted value's PrometheusRule checked, and each annotation holding it expanded, in one promtool run of
    each kind (a folder per value; a test file's rule_files are read from its own folder)."""
    promtool = tool("promtool", "checks the PrometheusRules and expands their annotations in rule unit tests")
    checks, tests_run, values = [], [], {}
    for index, (value, files) in enumerate(accepted):
        folder = tmp / f"v{index}"
        folder.mkdir()
        values[folder.name] = value
        (folder / "rl-alerts.rules.yaml").write_text(files["tests/rl-alerts.rules.yaml"], encoding="utf-8")
        (folder / "rl-alerts.test.yaml").write_text(files["tests/rl-alerts.test.yaml"], encoding="utf-8")
        rule = _load(files["rl-layer/rl-prometheusrule.yaml"])
        (folder / "cr.rules.yaml").write_text(_dump(rule["spec"]), encoding="utf-8")
        checks.append(f"{folder.name}/cr.rules.yaml")
        rules = _load(files["tests/rl-alerts.rules.yaml"])
        tests = _load(files["tests/rl-alerts.test.yaml"])
        holding = sorted(
            {k for g in rules["groups"] for r in g["rules"] for k, v in r.get("annotations", {}).items() if PRE in v}
        )
        expected: list[str] = []
        for name in holding:
            # Each annotation holding the value, expected as promtool must expand it (see testing.expansion).
            one_rules, one_tests = expansion.one_annotation(rules, tests, name)
            (folder / f"{name}.rules.yaml").write_text(_dump(one_rules), encoding="utf-8")
            one_tests["rule_files"] = [f"{name}.rules.yaml"]
            (folder / f"{name}.test.yaml").write_text(_dump(one_tests), encoding="utf-8")
            tests_run.append(f"{folder.name}/{name}.test.yaml")
            expected += expansion.expected(one_tests, name)
        if not holding and PRE in files["tests/rl-alerts.rules.yaml"]:
            # The value reaches the rules outside an annotation (a label, an expression): the bundle's own rule tests.
            tests_run.append(f"{folder.name}/rl-alerts.test.yaml")
        if holding:
            assert any(value in a for a in expected), f"the annotation holding {value!r} is not checked by promtool"
    for args in (["check", "rules", *checks], ["test", "rules", *tests_run]):
        if args[2:]:
            proc = subprocess.run([promtool, *args], cwd=tmp, capture_output=True, text=True, check=False)
            assert proc.returncode == 0, (proc.stdout + proc.stderr, values)


def _amtool(accepted: list[tuple[str, dict[str, str]]], tmp: Path) -> None:
    """Every accepted value's Alertmanager config checked in one amtool run, and each field Alertmanager expands as a
    template rendered back to itself (slack_config: channel; the rest are Alertmanager's defaults, which hold no
    profile value)."""
    amtool = tool("amtool", "checks the Alertmanager config and renders its notification template fields")
    configs, texts = [], []
    for index, (value, files) in enumerate(accepted):
        config = _load(files["values/kube-prometheus-stack.yaml"])["alertmanager"]["config"]
        (tmp / f"alertmanager-{index}.yaml").write_text(_dump(config), encoding="utf-8")
        configs.append(str(tmp / f"alertmanager-{index}.yaml"))
        fields = [c[k] for r in config["receivers"] for c in r.get("slack_configs", []) for k in ("channel",) if k in c]
        texts += fields
        if PRE in json.dumps(config):
            assert value in fields
    proc = subprocess.run([amtool, "check-config", *configs], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # All the fields as one template, each on lines of its own: it renders to exactly itself.
    text = "\n<rlobs-field>\n".join(texts)
    proc = subprocess.run(
        [amtool, "template", "render", f"--template.glob={tmp / 'none.tmpl'}", f"--template.text={text}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout == text, (proc.stdout + proc.stderr, texts)


@pytest.mark.slow
@pytest.mark.parametrize("name", ALERTING)
def test_promtool_and_amtool_accept_the_alerting_and_expand_the_value_back(name: str, tmp_path: Path) -> None:
    accepted: dict[str, dict[str, str]] = {}

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(MIDDLE)
    def check(middle: str) -> None:
        found = _accepted(name, middle)
        if found is not None:
            accepted[found[0]] = {r.path: r.text for r in found[1] if r.path in _ALERTING_FILES}

    check()
    (tmp_path / "none.tmpl").write_text("", encoding="utf-8")
    _promtool(list(accepted.items()), tmp_path)
    _amtool(list(accepted.items()), tmp_path)
    print(f"{name}: {len(accepted)} accepted values checked by promtool and amtool")
    assert accepted
