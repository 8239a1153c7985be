"""The hostile-profile corpus (tests/hostile_corpus.py): every profile is refused with located one-line problems, or
accepted and renders a bundle that passes its parse-back check and holds no credential shape. Never a crash."""

from __future__ import annotations

import re

import pytest

from hostile_corpus import corpus
from rlobs.errors import ProfileError, RlobsError
from rlobs.targets import parse_profile
from testing.bundles import build
from testing.helpers import all_profiles


@pytest.mark.slow
def test_every_hostile_profile_is_refused_in_located_lines_or_renders_cleanly() -> None:
    refused = accepted = 0
    for name, text in corpus(all_profiles()):
        try:
            profile = parse_profile(text, f"{name}.yaml")
        except ProfileError as exc:
            refused += 1
            for line in exc.lines():
                assert re.match(rf"{re.escape(name)}\.yaml:\d+:\d+: ", line), line
                assert line.isprintable(), line
            continue
        accepted += 1
        try:
            build(profile)
        except RlobsError as exc:  # pragma: no cover - the failure message names the profile
            pytest.fail(f"{name}: accepted, but its bundle failed: {exc}")
    print(f"hostile corpus: {refused + accepted} profiles, {refused} refused, {accepted} accepted and rendered")
    assert refused > 1000 and accepted > 0
