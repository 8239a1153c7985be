"""The project's documentation: docs/profile.md is what tools/profile_docs.py writes from the installed rlobs, the
README stays short, every relative link points to a file (and heading) that exists, and the pages that list
commands, alerts, metrics and frameworks list all of them."""

from __future__ import annotations

import json
import re
import runpy
import subprocess
import sys
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
README_MAX_LINES = 250


@cache
def _generator() -> dict[str, Any]:
    """tools/profile_docs.py's functions (a script, not a package: run by path, not imported)."""
    return runpy.run_path(str(REPO / "tools" / "profile_docs.py"))


def _rlobs(*argv: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "rlobs", *argv], capture_output=True, text=True, check=True, cwd=REPO, timeout=120
    )
    return result.stdout


def _tokens(page: Path) -> list[Token]:
    return MarkdownIt("commonmark").enable("table").parse(page.read_text(encoding="utf-8"))


def _inline(tokens: list[Token]) -> list[Token]:
    return [child for t in tokens if t.type == "inline" for child in t.children or []]


def _anchors(page: Path) -> set[str]:
    """The heading anchors GitHub gives a page: lower-cased text, punctuation dropped, spaces to hyphens."""
    tokens = _tokens(page)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_profile_reference_is_generated_from_the_installed_model() -> None:
    expected = _generator()["generate"]()
    assert (DOCS / "profile.md").read_text(encoding="utf-8") == expected, "docs/profile.md is stale: run `make docs`"


def test_profile_reference_lists_every_key_of_both_targets() -> None:
    text = (DOCS / "profile.md").read_text(encoding="utf-8")
    for key in ("workload.run.system", "alerts.stall.window", "eks.gitops.repoUrl", "gke.notificationChannels[].name"):
        assert f"| `{key}` |" in text
    assert "## `target: eks`" in text and "## `target: gke`" in text and "## The fleet file" in text


def test_readme_is_short() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_point_to_existing_files(page: Path) -> None:
    links = [t.attrGet("href") for t in _inline(_tokens(page)) if t.type == "link_open"]
    broken = []
    for href in (str(h) for h in links if h):
        if re.match(r"[a-z][a-z0-9+.-]*:", href):  # https:, mailto:
            continue
        path, _, anchor = href.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{href}: no file {target.relative_to(REPO)}")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{href}: no heading #{anchor} in {target.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_readme_lists_every_command() -> None:
    help_text = _rlobs("--help")
    commands = re.findall(r"^\s{2}([a-z][a-z-]*)\s", help_text.split("Commands:", 1)[1], re.MULTILINE)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert commands, "rlobs --help lists its commands"
    assert [c for c in commands if f"`rlobs {c}" not in readme] == []


def _alert_names() -> list[str]:
    rule = yaml.safe_load((REPO / "tests/golden/eks-jark/rl-layer/rl-prometheusrule.yaml").read_text(encoding="utf-8"))
    return [r["alert"] for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r]


def test_alerts_page_gives_every_alert_with_its_default_settings() -> None:
    """The thresholds table: one row per alert, naming its profile key and exactly that key's defaults."""
    alerts = _generator()["schema"]()["$defs"]["Alerts"]["properties"]
    rows = {}
    for line in (DOCS / "alerts.md").read_text(encoding="utf-8").splitlines():
        found = re.fullmatch(r"\| `(RL\w+)` \| `alerts\.(\w+)` \| (.+) \|", line)
        if found:
            name, key, settings = found.groups()
            rows[key] = name
            given = dict(re.findall(r"`(\w+): ([^`]+)`", settings))
            assert {k: yaml.safe_load(v) for k, v in given.items()} == alerts[key]["default"], f"alerts.{key}"
    assert set(rows) == {k for k, v in alerts.items() if "default" in v and isinstance(v["default"], dict)}
    assert sorted(rows.values()) == sorted(_alert_names())


def test_metrics_page_names_every_catalog_metric_and_pipeline() -> None:
    catalog = json.loads(_rlobs("signals", "--format", "json"))
    text = (DOCS / "metrics.md").read_text(encoding="utf-8")
    names = [m["name"] for m in catalog["metrics"]]
    pipelines = set(catalog["metrics"][0]["series"])
    assert [n for n in names if f"| `{n}` |" not in text] == []
    assert [p for p in sorted(pipelines) if f"| `{p}` |" not in text] == []


def test_frameworks_page_names_every_framework_and_its_systems() -> None:
    data = yaml.safe_load(files("rlobs").joinpath("data/frameworks.yaml").read_text(encoding="utf-8"))
    text = (DOCS / "frameworks.md").read_text(encoding="utf-8")
    for framework in data["frameworks"]:
        assert all(f"`{s}`" in text for s in framework["systems"]), framework["name"]
        repo, commit = framework["pinned"].split()[0].split("@")
        assert f"`{repo}@{commit[:7]}`" in text, framework["name"]
