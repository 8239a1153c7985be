"""The `eks:` section's rules as plain functions, without pydantic (rlobs.profile.checks says why)."""

from __future__ import annotations

from typing import Any

from rlobs.credentials import redact
from rlobs.profile.checks import compiled
from rlobs.profile.problems import raise_all
from rlobs.profile.terraform import entry_problems


def git_url(value: str) -> str:
    """Argo CD's repoURL: https, ssh or scp-like, with no credentials, query or fragment. Argo CD takes repository
    credentials from repository Secrets (argo-cd.readthedocs.io, declarative setup: Repositories), and this URL
    is copied into the bundle and into every alert's runbook_url, which Prometheus expands as a Go template."""
    if "@" in value.split("//", 1)[-1].split("/", 1)[0] and value.startswith("https://"):
        raise ValueError(
            "expected a URL without credentials (add a repository Secret for Argo CD instead; see the "
            f"README), got {redact(value)!r}"
        )
    if any(c in value for c in "?#"):
        raise ValueError(f"expected a URL without query or fragment, got {redact(value)!r}")
    if ":" in value.split("://", 1)[-1].split("@", 1)[0] and value.startswith("ssh://") and "@" in value:
        raise ValueError(f"expected a URL without a password, got {redact(value)!r}")
    if not compiled(GIT_URL).fullmatch(value) or len(value) > 2048:
        raise ValueError(
            "expected a Git repository URL like https://github.com/acme/gitops.git or git@github.com:acme/gitops.git, "
            f"got {redact(value)!r}"
        )
    return value


# Host per RFC 3986 reg-name (letters, digits, '.', '-'), an optional port, and a path of unreserved characters:
# nothing a Go template ({{), Markdown (`) or a shell could act on.
HOST = r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?"
PATH = r"[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*/?"
GIT_URL = (
    rf"https://{HOST}(:[0-9]{{1,5}})?/{PATH}"
    rf"|ssh://([A-Za-z0-9._-]+@)?{HOST}(:[0-9]{{1,5}})?/{PATH}"
    rf"|[A-Za-z0-9._-]+@{HOST}:{PATH}"
)


def declared_variables(value: Any) -> Any:
    # Each entry is checked against the variable's declared Terraform type first: the TfValue union
    # (rlobs.profile.eks) would report a bad value once per member, at key paths the profile does not have, and stop
    # the other entries' checks.
    raise_all(entry_problems(value))
    return value
