"""The EKS bundle as a whole: no credential or unpinned revision anywhere, every referenced Secret explained, the
README's shell snippets pass shellcheck, and profiles that inline a secret are rejected with a way out."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlobs.errors import ProfileError
from rlobs.targets import parse_profile
from testing.eks import EKS_PROFILES, bundle, objects
from testing.helpers import all_profiles, profile, tool

FORBIDDEN = ("prom-operator", "admin123")  # the reference stack's default Grafana / OpenSearch passwords
_PASSWORD_KEY = re.compile(r"(?i)(passw(or)?d|passwd|secret[-_]?key|token|api[-_]?key)$")


def _walk(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield f"{path}.{k}", v
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{path}[{i}]")


def literal_secrets(files: dict[str, str]) -> list[str]:
    """Places where a credential-named key holds a literal value (a `${VAR}` reference is fine)."""
    found = []
    for path, text in files.items():
        if path.endswith(".yaml"):
            for doc in yaml.safe_load_all(text):
                for where, value in _walk(doc):
                    key = where.rsplit(".", 1)[-1]
                    if _PASSWORD_KEY.search(key) and isinstance(value, str | int) and not str(value).startswith("$"):
                        found.append(f"{path}:{where}")
        if path.endswith(".md"):
            continue  # prose ("the password from its Secret"); its shell snippets read values at a prompt
        # `key: value`, `key = value` and fluent-bit's `Key  value` forms, inside any file (embedded configs too).
        for m in re.finditer(r"(?im)^[ \t]*([\w.]*pass(?:word|wd)\w*)(?:[ \t]*[:=][ \t]*|[ \t]+)(\S+)", text):
            # passwordKey & co. name a key inside a Secret; values starting with $ are environment references.
            if not m.group(1).endswith("Key") and not m.group(2).startswith(("$", "{", "|")):
                found.append(f"{path}: {m.group(0).strip()}")
    return found


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_no_default_password_or_literal_credential_anywhere(name: str) -> None:
    files = bundle(name)
    for path, text in files.items():
        for word in FORBIDDEN:
            assert word not in text, f"{path} contains {word}"
    assert literal_secrets(files) == []


def test_the_secret_scan_finds_a_planted_password() -> None:
    files = dict(bundle("eks-jark"))
    values = yaml.safe_load(files["values/kube-prometheus-stack.yaml"])
    values["grafana"]["adminPassword"] = "changeme"
    files["values/kube-prometheus-stack.yaml"] = yaml.safe_dump(values)
    files["workload/fluentbit-config.yaml"] = files["workload/fluentbit-config.yaml"].replace(
        "${OPENSEARCH_PASSWORD}", "hunter2"
    )
    found = literal_secrets(files)
    assert any("grafana.adminPassword" in f for f in found)
    assert any("HTTP_Passwd" in f for f in found)


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_no_target_revision_is_head(name: str) -> None:
    for path, obj in objects(name).items():
        for where, value in _walk(obj):
            if where.endswith(".targetRevision"):
                assert value != "HEAD", f"{path}:{where}"


def _secret_names(name: str) -> set[str]:
    names: set[str] = set()
    for obj in objects(name).values():
        for where, value in _walk(obj):
            key = where.rsplit(".", 1)[-1]
            if key == "secretKeyRef":
                names.add(value["name"])
            elif key in ("existingSecret", "adminCredentialsSecret", "securityConfigSecret") and value:
                names.add(value if isinstance(value, str) else value["name"])
            elif key == "secrets" and isinstance(value, list) and where.endswith("alertmanagerSpec.secrets"):
                names.update(value)
    return names


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_readme_says_how_to_create_every_referenced_secret(name: str) -> None:
    readme = bundle(name)["README.md"]
    created = set(re.findall(r"create secret generic (\S+)", readme))
    referenced = _secret_names(name)
    assert referenced
    missing = referenced - created
    if "admin-credentials-secret" in missing:
        # ai-on-eks mode: the reference chart creates it; the README reads it instead.
        assert "get secret admin-credentials-secret" in readme
        missing.discard("admin-credentials-secret")
    assert missing == set()


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_readme_covers_apply_order_access_and_files(name: str) -> None:
    readme = bundle(name)["README.md"]
    assert "kubectl port-forward -n monitoring svc/kube-prometheus-stack-grafana 3000:80" in readme
    assert "kubectl apply -f argocd/root-app.yaml" in readme
    assert readme.index("install.sh") < readme.index("kubectl apply -f argocd/root-app.yaml")
    assert "jsonpath='{.data.admin-password}'" in readme
    for path in bundle(name):
        assert f"`{path}`" in readme, path


def _sh_blocks(markdown: str) -> str:
    return "\n".join(re.findall(r"```sh\n(.*?)```", markdown, flags=re.S))


@pytest.mark.slow
@pytest.mark.parametrize("name", EKS_PROFILES)
def test_readme_shell_passes_shellcheck(name: str, tmp_path: Path) -> None:
    script = tmp_path / "readme.sh"
    script.write_text("#!/usr/bin/env bash\nset -euo pipefail\n" + _sh_blocks(bundle(name)["README.md"]))
    shellcheck = tool("shellcheck", "lints the README's shell snippets")
    proc = subprocess.run([shellcheck, "-s", "bash", str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.slow
def test_shellcheck_rejects_a_broken_snippet(tmp_path: Path) -> None:
    script = tmp_path / "broken.sh"
    script.write_text("#!/usr/bin/env bash\nread NAME\nkubectl create secret generic $NAME\n")
    shellcheck = tool("shellcheck", "lints the README's shell snippets")
    assert subprocess.run([shellcheck, str(script)], capture_output=True, check=False).returncode != 0


@pytest.mark.parametrize(
    ("section", "line"),
    [
        ("grafana", "adminPassword: s3cret"),
        ("opensearch", "password: s3cret"),
        ("opensearch", "credentials: admin:s3cret"),
    ],
)
def test_profile_rejects_inline_credentials_with_a_secret_hint(section: str, line: str) -> None:
    text = all_profiles()["eks-jark"]
    anchor = f"  {section}:\n"
    assert anchor in text
    text = text.replace(anchor, f"{anchor}    {line}\n", 1)
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    (problem,) = info.value.problems
    assert "reference to a Kubernetes Secret" in problem.message
    assert problem.path.startswith(f"eks.{section}.")


def test_profile_rejects_an_inline_receiver_url() -> None:
    text = all_profiles()["eks-jark"].replace(
        "      secretRef: {name: alertmanager-slack, key: webhook-url}",
        "      webhookUrl: https://hooks.slack.com/services/T000/B000/XXXX",
    )
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    messages = " ".join(p.message for p in info.value.problems)
    assert "reference to a Kubernetes Secret" in messages


def test_profile_rejects_a_head_gitops_revision() -> None:
    text = all_profiles()["eks-jark"].replace("targetRevision: main", "targetRevision: HEAD")
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    (problem,) = info.value.problems
    assert problem.path == "eks.gitops.targetRevision" and "not HEAD" in problem.message


def test_ai_on_eks_mode_rejects_stack_settings_it_would_ignore() -> None:
    text = all_profiles()["eks-ai-on-eks"].replace(
        "  metricsPipeline:", "  prometheus: {retention: 30d}\n  metricsPipeline:"
    )
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    (problem,) = info.value.problems
    assert problem.path == "eks.prometheus" and "eks.mode: ai-on-eks" in problem.message


def test_ai_on_eks_mode_accepts_the_log_writer_secret_only() -> None:
    anchor = "  metricsPipeline:"
    text = all_profiles()["eks-ai-on-eks"].replace(anchor, "  opensearch: {logWriterSecret: ray-logs-user}\n" + anchor)
    eks = parse_profile(text, "p.yaml").eks
    assert eks is not None and eks.opensearch.log_writer_secret == "ray-logs-user"
    text = text.replace("{logWriterSecret: ray-logs-user}", "{logWriterSecret: ray-logs-user, replicas: 5}")
    with pytest.raises(ProfileError) as info:
        parse_profile(text, "p.yaml")
    (problem,) = info.value.problems
    assert problem.path == "eks.opensearch" and "eks.mode: ai-on-eks" in problem.message


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_readme_security_notes_say_tls_is_not_verified_and_how_to_verify(name: str) -> None:
    readme = bundle(name)["README.md"]
    notes = readme.split("## Security notes\n", 1)[1].split("\n## ", 1)[0]
    assert "encrypted but not verified" in notes
    # How to verify: the operator's CA Secret and the setting of each client that skips verification today.
    for word in ("opensearch-http-cert", "ca.crt", "tls.ca_file", "ca_file", "tlsCACert"):
        assert word in notes, word
    values = "\n".join(t for p, t in bundle(name).items() if p.startswith(("values/", "stack/", "workload/")))
    for skip in ("tlsSkipVerify", "insecure_skip_verify", "tls.verify"):
        assert skip not in values or skip in notes, skip


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_every_object_carries_the_bundle_label(name: str) -> None:
    """`kubectl get -l rlobs.io/bundle=<name>` finds every object the bundle applies itself (not the charts')."""
    p = profile(name)
    for path, doc in objects(name).items():
        if path.startswith("workload/") and not path.endswith("fluentbit-config.yaml"):
            continue  # the Component and its patches merge into the user's own objects
        if not (isinstance(doc, dict) and "kind" in doc and "apiVersion" in doc):
            continue  # Helm values and promtool files are not Kubernetes objects
        labels = doc.get("metadata", {}).get("labels", {})
        assert labels.get("rlobs.io/bundle") == p.metadata.name, path
