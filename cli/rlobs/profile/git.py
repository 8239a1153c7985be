"""Git repository fields: a repository URL, a pinned revision and a path inside it (a profile's or a fleet's)."""

# No `from __future__ import annotations`, as in rlobs.profile.model: pydantic would eval() each annotation.

from typing import Annotated

from pydantic import AfterValidator

from rlobs.profile.fields import compiled, matching, with_json_pattern


def _git_url(value: str) -> str:
    """Argo CD's repoURL; it takes credentials from repository Secrets (argo-cd.readthedocs.io: declarative setup)."""
    from rlobs.credentials import redact

    if len(value) > 2048:
        raise ValueError("expected a Git repository URL of at most 2048 characters")
    if "@" in value.split("//", 1)[-1].split("/", 1)[0] and value.startswith("https://"):
        raise ValueError(
            "expected a URL without credentials (add a repository Secret for Argo CD instead; see the "
            f"README), got {redact(value)!r}"
        )
    if any(c in value for c in "?#"):
        raise ValueError(f"expected a URL without query or fragment, got {redact(value)!r}")
    if ":" in value.split("://", 1)[-1].split("@", 1)[0] and value.startswith("ssh://") and "@" in value:
        raise ValueError(f"expected a URL without a password, got {redact(value)!r}")
    if not compiled(_GIT_URL).fullmatch(value):
        raise ValueError(
            "expected a Git repository URL like https://github.com/acme/gitops.git or git@github.com:acme/gitops.git, "
            f"got {redact(value)!r}"
        )
    return value


# Host per RFC 3986 reg-name (letters, digits, '.', '-'), an optional port, and a path of unreserved characters:
# nothing a Go template ({{), Markdown (`) or a shell could act on.
_HOST = r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?"
_PATH = r"[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*/?"
_GIT_URL = (
    rf"https://{_HOST}(:[0-9]{{1,5}})?/{_PATH}"
    rf"|ssh://([A-Za-z0-9._-]+@)?{_HOST}(:[0-9]{{1,5}})?/{_PATH}"
    rf"|[A-Za-z0-9._-]+@{_HOST}:{_PATH}"
)
GitUrl = Annotated[
    str,
    AfterValidator(
        with_json_pattern(
            _git_url, _GIT_URL, 2048, expected="a Git repository URL like https://github.com/acme/gitops.git"
        )
    ),
]
# HEAD follows whatever the repository's default branch is at sync time: the unpinned revision the issue is about.
GitRevision = Annotated[
    str,
    AfterValidator(
        matching(
            # git check-ref-format: no "..", no "//", no component starting with "." or ending with ".lock", not
            # ending with "/" or "." (Argo CD hands the revision to git).
            r"(?!HEAD$)(?!.*\.\.)(?!.*//)(?!.*/\.)(?!.*\.lock(/|$))(?!.*[/.]$)[A-Za-z0-9][A-Za-z0-9._/-]{0,199}",
            "a branch, tag or commit like main, v1.4.0 or a commit SHA (not HEAD: name the revision to sync)",
        )
    ),
]
RepoPath = Annotated[
    str,
    AfterValidator(
        matching(
            # No "." or ".." component: Argo CD refuses a path that leaves the repository.
            r"(?!\.\.?(/|$))(?!.*/\.\.?(/|$))[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*",
            "a relative path inside the repository like clusters/prod/rlobs (no . or .. parts)",
        )
    ),
]
