"""The OpenSearch security plugin files the README has the user load into the securityconfig Secret (rlobs mode)."""

from __future__ import annotations

from typing import Any

from rlobs.targets.eks.workload import RAY_LOGS_INDEX

# The internal user the Ray log sidecar writes as, and its role: it may create and index into the Ray log index
# and nothing else (no read, no delete, no other index), so the Secret in the workload's namespace is not a
# superuser credential.
LOG_WRITER_USER = "ray-log-writer"
LOG_WRITER_ROLE = "rlobs_ray_log_writer"
# Shell variables the README's heredoc expands into the bcrypt hashes (the files never hold a password).
ADMIN_HASH_VAR = "OPENSEARCH_HASH"
LOG_WRITER_HASH_VAR = "LOG_WRITER_HASH"


def _meta(kind: str) -> dict[str, Any]:
    return {"_meta": {"type": kind, "config_version": 2}}


def security_config(*, log_writer: bool) -> dict[str, dict[str, Any]]:
    """file name -> content of the Secret's files (docs.opensearch.org/docs/latest/security/configuration/yaml/)."""
    users: dict[str, Any] = {
        **_meta("internalusers"),
        "admin": {
            "hash": f"${{{ADMIN_HASH_VAR}}}",
            "reserved": True,
            "backend_roles": ["admin"],
            "description": "Cluster admin: opensearch-operator, Dashboards, Grafana, the collector, FluentBit",
        },
    }
    if not log_writer:
        return {"internal_users.yml": users}
    users[LOG_WRITER_USER] = {
        "hash": f"${{{LOG_WRITER_HASH_VAR}}}",
        "reserved": False,
        "description": f"Ray log sidecar: writes index {RAY_LOGS_INDEX} only",
    }
    roles = {**_meta("roles"), **log_writer_role()}
    # opensearch-operator mounts each Secret key over the image's file of that name (pkg/reconcilers/securityconfig.go),
    # so this roles_mapping.yml replaces the defaults: it maps all_access to admin again, as the reference stack does.
    mapping = {
        **_meta("rolesmapping"),
        "all_access": {"reserved": False, "backend_roles": ["admin"], "description": "Maps admin to all_access"},
        LOG_WRITER_ROLE: {"reserved": False, "users": [LOG_WRITER_USER]},
    }
    return {"internal_users.yml": users, "roles.yml": roles, "roles_mapping.yml": mapping}


def log_writer_role() -> dict[str, Any]:
    return {
        LOG_WRITER_ROLE: {
            "reserved": False,
            "description": f"Create and write documents of index {RAY_LOGS_INDEX}; nothing else",
            # _bulk is authorised first as this cluster-level action, then per index
            # (docs.opensearch.org/docs/latest/security/access-control/permissions/).
            "cluster_permissions": ["indices:data/write/bulk"],
            "index_permissions": [
                {
                    "index_patterns": [RAY_LOGS_INDEX],
                    # Default action groups: create_index = indices:admin/create (+ mapping/put); index = index and
                    # update documents (+ bulk shard actions, mapping/put). No read, no delete.
                    "allowed_actions": ["create_index", "index"],
                }
            ],
        },
    }
