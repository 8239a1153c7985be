"""Credential shapes: each issuer's format is found, ordinary bundle text is not, and nothing is echoed."""

from __future__ import annotations

import pytest

from rlobs import credentials
from testing.bundles import build
from testing.helpers import all_profiles, profile

# Shapes only: made-up values of each issuer's format.
SECRETS = {
    "an AWS access key id": "AKIA" + "ABCDEFGHIJKLMNOP",
    "a GitHub token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "a GitLab token": "glpat-" + "abcdefghij1234567890",
    "a Slack token": "xoxb-" + "1234567890-abcdefghij",
    "a Slack webhook URL": "https://hooks.slack.com/services/" + "T000/B000/XXXXXXXX",
    "a private key": "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIE...",
    "a password in a URL": "https://deploy:hunter2@github.com/acme/gitops.git",
    "a token in a URL": "https://" + "Zk3q9XbT2mLw8RvY4cNa" + "@github.com/acme/gitops.git",
}


@pytest.mark.parametrize(("shape", "text"), SECRETS.items())
def test_each_shape_is_found_inside_other_text(shape: str, text: str) -> None:
    assert shape in credentials.found_in(f"note: {text} end")


@pytest.mark.parametrize(
    "text",
    ["ssh://git@github.com/acme/gitops.git", "git@github.com:acme/gitops.git", "#rl-alerts", "AKIA", "xoxb-short"],
)
def test_ordinary_values_are_not_credentials(text: str) -> None:
    assert credentials.found_in(text) == []


def test_no_shipped_bundle_looks_like_it_holds_a_credential() -> None:
    for name in all_profiles():
        assert [r.path for r in build(profile(name)) if credentials.found_in(r.text)] == [], name


def test_redact_hides_userinfo_query_and_fragment() -> None:
    assert credentials.redact("https://u:p@h/x?access_token=t#f") == "https://***@h/x?***"


def _plain_search(text: str) -> list[str]:
    """found_in without its shortcuts: every shape's regex over the whole text."""
    found = [name for name, _, regex in credentials._SHAPES if regex.search(text)]
    users = credentials._USERINFO.findall(text)
    if any(len(u) >= 16 and credentials._entropy(u) >= 3.0 for u in users):
        found.append("a token in a URL")
    return found


def test_the_shortcuts_find_exactly_what_a_plain_search_finds() -> None:
    import random

    from testing.helpers import REPO

    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO / "tests" / "golden").rglob("*")) if p.is_file()]
    pieces = [*SECRETS.values(), "://", "\n", " ", "@", ":", "x", "AKIA", "ghp_", "https://a:b", "é", "\r"]
    rng = random.Random(14)
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    texts += [f"{a}\n{b}" for a in SECRETS.values() for b in SECRETS.values()]
    assert texts
    for text in texts:
        assert credentials.found_in(text) == _plain_search(text), repr(text[:200])


def test_values_joined_by_newlines_hold_a_shape_exactly_when_one_of_them_does() -> None:
    # What the profile loader relies on to scan all of a profile's strings at once (profile/load.py).
    import random

    pieces = [*SECRETS.values(), "://", "\n", " ", "@", ":", "x", "AKIA", "ghp_", "xox", "b-", "https://a:b", "-----"]
    pieces += [s[:cut] for s in SECRETS.values() for cut in (3, 8, len(s) // 2)]
    pieces += [s[cut:] for s in SECRETS.values() for cut in (3, 8, len(s) // 2)]
    rng = random.Random(15)
    for _ in range(3000):
        values = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(1, 5))]
        joined = credentials.found_in("\n".join(values))
        assert bool(joined) == any(credentials.found_in(v) for v in values), values
