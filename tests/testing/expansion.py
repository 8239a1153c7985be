"""promtool checks of one alert annotation, as Prometheus expands it, on the bundle's own rule-test series.

The bundle's rule tests compare the firing `ALERTS` series only (the descriptions carry the measured value, which no
test can know in advance). To see what Prometheus makes of one annotation, the rules are copied with that
annotation alone, and each firing expectation becomes an `alert_rule_test` whose expected annotation is the text
as written, with the run's labels filled in: promtool passes only if Prometheus expands it to exactly that.
"""

from __future__ import annotations

import re
from typing import Any

_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
_ALERT = re.compile(r'^ALERTS\{alertname="(\w+)", alertstate="firing"\}$')
_REFERENCE = re.compile(r'\{\{ (?:\$labels\.(\w+)|index \$labels "([^"]+)") \}\}')
_BRACES = '{{ "{{" }}'


def expanded(text: str, labels: dict[str, str]) -> str:
    """The annotation text once Prometheus has filled in the labels (the only templating rlobs writes there)."""
    out = _REFERENCE.sub(lambda m: labels[m.group(1) or m.group(2)], text)
    parts = out.split(_BRACES)
    if any("{{" in p for p in parts):
        raise AssertionError(f"a template this oracle cannot predict: {text}")
    return "{{".join(parts)


def _labels(series: str) -> dict[str, str]:
    body = series[series.index("{") + 1 : -1]
    return {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LABEL.findall(body)}


def one_annotation(rules: dict[str, Any], tests: dict[str, Any], name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(rules, tests) for promtool: the alerting rules keep only annotation `name`, and every firing expectation of
    the bundle's tests expects it expanded. Raises when no alert carries the annotation."""
    texts: dict[str, str] = {}
    groups = []
    for group in rules["groups"]:
        kept = []
        for rule in group["rules"]:
            if "alert" in rule:
                text = rule.get("annotations", {}).get(name)
                rule = {**rule, "annotations": {} if text is None else {name: text}}
                if text is not None:
                    texts[rule["alert"]] = text
            kept.append(rule)
        groups.append({**group, "rules": kept})
    if not texts:
        raise AssertionError(f"no alert carries the annotation {name}")
    out = []
    for test in tests["tests"]:
        checks = []
        for t in test.get("promql_expr_test", []):
            match = _ALERT.match(t["expr"])
            if match is None:
                continue
            alert = match.group(1)
            exp = []
            for sample in t["exp_samples"]:
                labels = {k: v for k, v in _labels(sample["labels"]).items() if k not in ("alertname", "alertstate")}
                annotations = {name: expanded(texts[alert], labels)} if alert in texts else {}
                exp.append({"exp_labels": labels, "exp_annotations": annotations})
            checks.append({"eval_time": t["eval_time"], "alertname": alert, "exp_alerts": exp})
        out.append({**test, "alert_rule_test": checks})
    return {**rules, "groups": groups}, {**tests, "tests": out}


def expected(tests: dict[str, Any], name: str) -> list[str]:
    """The expanded texts of annotation `name` a test file from one_annotation() expects."""
    return [
        e["exp_annotations"][name]
        for t in tests["tests"]
        for c in t.get("alert_rule_test", [])
        for e in c["exp_alerts"]
        if name in e["exp_annotations"]
    ]
