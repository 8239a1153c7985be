"""Web links from a Git clone URL: https, ssh:// and scp-like forms of GitHub, GitLab and Bitbucket."""

from __future__ import annotations

import pytest

from rlobs.profile.gitweb import file_link, link_problem
from rlobs.profile.yamlsource import load_located
from rlobs.targets import parse_profile
from rlobs.targets import warnings as find
from rlobs.targets.eks.plan import runbook
from rlobs.targets.eks.profile import EksProfile
from testing.helpers import all_profiles

FILE = "clusters/prod/rlobs/docs/runbook.md"


@pytest.mark.parametrize(
    ("url", "link"),
    [
        ("https://github.com/acme/x.git", "https://github.com/acme/x/blob/main/" + FILE),
        ("https://github.com/acme/x", "https://github.com/acme/x/blob/main/" + FILE),
        ("git@github.com:acme/x.git", "https://github.com/acme/x/blob/main/" + FILE),
        ("ssh://git@github.com/acme/x.git", "https://github.com/acme/x/blob/main/" + FILE),
        ("ssh://git@github.com:2222/acme/x.git", "https://github.com/acme/x/blob/main/" + FILE),  # not the web port
        ("git@github.example.com:acme/x.git", "https://github.example.com/acme/x/blob/main/" + FILE),
        ("https://gitlab.com/acme/sub/x.git", "https://gitlab.com/acme/sub/x/-/blob/main/" + FILE),
        ("git@gitlab.com:acme/x.git", "https://gitlab.com/acme/x/-/blob/main/" + FILE),
        ("ssh://git@gitlab.internal.example/acme/x.git", "https://gitlab.internal.example/acme/x/-/blob/main/" + FILE),
        ("https://bitbucket.org/acme/x.git", "https://bitbucket.org/acme/x/src/main/" + FILE),
        ("git@bitbucket.org:acme/x.git", "https://bitbucket.org/acme/x/src/main/" + FILE),
        # Hosts rlobs does not know: https keeps GitHub's form (as before), ssh has no web address to link.
        ("https://git.example.com:8443/acme/x.git", "https://git.example.com:8443/acme/x/blob/main/" + FILE),
        ("git@git.example.com:acme/x.git", None),
    ],
)
def test_file_link_per_forge_and_url_form(url: str, link: str | None) -> None:
    assert file_link(url, "main", FILE) == link
    assert (link_problem(url) is None) == ("git.example.com" not in url)


def _eks(url: str) -> str:
    return all_profiles()["eks-jark"].replace("https://github.com/acme/gitops.git", url)


def test_runbook_links_of_an_ssh_repository_are_https_links() -> None:
    p = parse_profile(_eks("git@gitlab.com:rl-team/gitops.git"))
    assert isinstance(p, EksProfile)
    assert runbook(p.eks.gitops) == "https://gitlab.com/rl-team/gitops/-/blob/main/observability/docs/runbook.md"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://git.example.com/rl/gitops.git", "GitHub's /blob/<rev>/<path> form"),
        ("git@git.example.com:rl/gitops.git", "relative to the bundle"),
    ],
)
def test_a_host_rlobs_does_not_know_is_a_warning_at_the_repo_url(url: str, says: str) -> None:
    text = _eks(url)
    parse_profile(text)
    (warning,) = [str(w) for w in find(load_located(text), "p.yaml") if "runbook" in w.message]
    assert ": eks.gitops.repoUrl: expected a Git host rlobs knows" in warning and says in warning
