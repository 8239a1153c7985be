"""Web links into a Git repository from its clone URL (https, ssh:// or scp-like), for the forges rlobs knows."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A file at a revision, per forge, after https://<host>/<owner>/<repo>:
# - GitHub (and GitHub Enterprise): /blob/<rev>/<path>
# - GitLab (and self-managed GitLab): /-/blob/<rev>/<path>; `/-/` separates the project from the page since subgroups
#   made paths ambiguous (gitlab.com/gitlab-org/gitlab/-/issues/214217), and its redirects from the old form are
#   going away.
# - Bitbucket Cloud: /src/<rev>/<path> (Bitbucket Server/Data Center uses /projects/.../browse?at=, not known here).
_FILE_AT: dict[str, str] = {
    "github": "/blob/{rev}/{path}",
    "gitlab": "/-/blob/{rev}/{path}",
    "bitbucket": "/src/{rev}/{path}",
}
# Hosts known by name, then by a host label (github.example.com, gitlab.internal.example): self-hosted forges.
_HOSTS = {"github.com": "github", "gitlab.com": "gitlab", "bitbucket.org": "bitbucket"}
_LABELS = ("github", "gitlab")

_URL = re.compile(
    r"(?:https://(?P<https>[^/:]+)(?::[0-9]+)?/"  # https keeps its port in the web link
    r"|ssh://(?:[^@/]+@)?(?P<ssh>[^/:]+)(?::[0-9]+)?/"  # an SSH port is not the web server's
    r"|[^@/]+@(?P<scp>[^/:]+):)"
    r"(?P<path>.+?)(?:\.git)?/?$"
)


@dataclass(frozen=True, slots=True)
class WebRepo:
    base: str  # https://<host>/<owner>/<repo>
    forge: str | None  # a key of _FILE_AT, or None for a host rlobs does not know


def web_repo(repo_url: str) -> WebRepo | None:
    found = _URL.fullmatch(repo_url)
    if found is None:
        return None
    host = found["https"] or found["ssh"] or found["scp"]
    base = repo_url.removesuffix("/").removesuffix(".git") if found["https"] else f"https://{host}/{found['path']}"
    return WebRepo(base, forge(host))


def forge(host: str) -> str | None:
    host = host.lower()
    return _HOSTS.get(host) or next((label for label in host.split(".") if label in _LABELS), None)


def file_link(repo_url: str, rev: str, path: str) -> str | None:
    """For a host rlobs does not know: GitHub's form over https (most forges take it), None over ssh (no web URL)."""
    repo = web_repo(repo_url)
    if repo is None or (repo.forge is None and not repo_url.startswith("https://")):
        return None
    return repo.base + _FILE_AT[repo.forge or "github"].format(rev=rev, path=path)


def link_problem(repo_url: str) -> str | None:
    repo = web_repo(repo_url)
    if repo is not None and repo.forge is not None:
        return None
    known = ", ".join(sorted(_HOSTS))
    want = f"expected a Git host rlobs knows ({known}, or a github or gitlab host name) for the alerts' runbook links"
    if repo_url.startswith("https://"):
        return f"{want}, got another: they use GitHub's /blob/<rev>/<path> form; check that one opens"
    return (
        f"{want}, got another over ssh: its web address is unknown, so they link docs/runbook.md relative to the bundle"
    )
