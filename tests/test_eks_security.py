"""The OpenSearch security config the README builds (rlobs mode): the admin keeps all_access, and the Ray log
sidecar's user may only create and write the index the sidecar ships to."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from rlobs.targets.eks import security
from rlobs.targets.eks.stack import stack
from testing.eks import EKS_PROFILES, bundle, objects
from testing.helpers import eks_profile

# A bcrypt hash as the README's bcrypt_hash prints it (the shell expands it into the heredoc).
_HASH = "$2a$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"
_ALLOWED_INDEX_ACTIONS = {"create_index", "index"}  # default action groups without read or delete
_ALLOWED_CLUSTER_ACTIONS = {"indices:data/write/bulk"}


def _ray_rlobs_profiles() -> list[str]:
    names = []
    for name in EKS_PROFILES:
        eks = eks_profile(name).eks
        if eks.mode == "rlobs" and "workload/ray-logs-patch.yaml" in bundle(name):
            names.append(name)
    return names


def readme_files(readme: str) -> dict[str, Any]:
    """The files the README's `cat > <file> <<EOF` heredocs write, with the hash variables expanded, parsed."""
    found = {}
    for file, body in re.findall(r"^cat > (\S+) <<EOF\n(.*?)^EOF$", readme, flags=re.S | re.M):
        for var in (security.ADMIN_HASH_VAR, security.LOG_WRITER_HASH_VAR):
            body = body.replace(f"${{{var}}}", _HASH)
        assert "$" not in body.replace(_HASH, ""), f"{file}: an unexpanded shell variable"
        found[file] = yaml.safe_load(body)
    return found


def sidecar_index(name: str) -> str:
    conf = objects(name, "workload/")["workload/fluentbit-config.yaml"]["data"]["fluent-bit.conf"]
    (index,) = re.findall(r"^\s*Index\s+(\S+)$", conf, flags=re.M)
    return str(index)


def log_writer_problems(files: dict[str, Any], index: str) -> list[str]:
    """Ways the security config gives the log writer more than writing `index`, or takes all_access from admin."""
    user, role = security.LOG_WRITER_USER, security.LOG_WRITER_ROLE
    problems = []
    users, roles, mapping = files["internal_users.yml"], files["roles.yml"], files["roles_mapping.yml"]
    if users["admin"]["hash"] != _HASH or users[user]["hash"] != _HASH or "backend_roles" in users[user]:
        problems.append("internal_users.yml: hashes or backend roles")
    if set(roles) != {"_meta", role}:
        problems.append(f"roles.yml: roles {sorted(roles)}")
    definition = roles.get(role, {})
    if not set(definition.get("cluster_permissions", [])) <= _ALLOWED_CLUSTER_ACTIONS:
        problems.append(f"cluster permissions {definition['cluster_permissions']}")
    for grant in definition.get("index_permissions", []):
        if grant["index_patterns"] != [index] or not set(grant["allowed_actions"]) <= _ALLOWED_INDEX_ACTIONS:
            problems.append(f"index permission {grant}")
    mapped = {r for r, m in mapping.items() if r != "_meta" and user in m.get("users", [])}
    if mapped != {role}:
        problems.append(f"{user} mapped to {sorted(mapped)}")
    if mapping.get("all_access", {}).get("backend_roles") != ["admin"]:
        problems.append("all_access is not mapped to the admin backend role")
    return problems


@pytest.mark.parametrize("name", _ray_rlobs_profiles())
def test_readme_security_config_lets_the_log_writer_only_write_the_ray_log_index(name: str) -> None:
    readme = bundle(name)["README.md"]
    files = readme_files(readme)
    assert set(files) == {"internal_users.yml", "roles.yml", "roles_mapping.yml"}
    kinds = {"internal_users.yml": "internalusers", "roles.yml": "roles", "roles_mapping.yml": "rolesmapping"}
    for file, kind in kinds.items():
        assert files[file]["_meta"] == {"type": kind, "config_version": 2}
    assert log_writer_problems(files, sidecar_index(name)) == []
    # The Secret the operator reads holds all three files.
    eks = eks_profile(name).eks
    create = re.search(rf"create secret generic {eks.opensearch.security_config_secret} \\\n(.*)", readme)
    assert create and set(re.findall(r"--from-file=(\S+)", create[1])) == set(files)


def test_the_security_config_check_rejects_a_broader_log_writer() -> None:
    files = readme_files(bundle("eks-jark")["README.md"])
    role = files["roles.yml"][security.LOG_WRITER_ROLE]
    role["index_permissions"][0]["allowed_actions"].append("read")
    role["cluster_permissions"].append("cluster_all")
    files["roles_mapping.yml"]["all_access"]["users"] = [security.LOG_WRITER_USER]
    problems = log_writer_problems(files, "ray-logs")
    assert len(problems) == 3, problems
    assert log_writer_problems(readme_files(bundle("eks-jark")["README.md"]), "fluent-bit") != []


@pytest.mark.parametrize("name", EKS_PROFILES)
def test_the_admin_credentials_never_reach_the_workload_namespace(name: str) -> None:
    prof = eks_profile(name)
    st = stack(prof.eks)
    readme = bundle(name)["README.md"]
    ns = prof.workload.namespace
    assert f"-n {ns} create secret generic {st.opensearch_secret} " not in readme
    if "workload/ray-logs-patch.yaml" in bundle(name):
        assert re.search(
            rf"-n {ns} create secret generic {st.log_writer_secret} \\\n\s+"
            rf"--from-literal=username={security.LOG_WRITER_USER} ",
            readme,
        ), "the README creates the log writer Secret in the workload's namespace"
