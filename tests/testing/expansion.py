"""promtool checks of one alert annotation, as Prometheus expands it, on the bundle's own rule-test series.

The bundle's rule tests compare the firing `ALERTS` series only (the descriptions carry the measured value, which no
test can know in advance). To see what Prometheus makes of one annotation, the alerting rules are copied with that
annotation alone, and each firing expectation becomes an `alert_rule_test` whose expected annotation is the text
as written, with the run's labels filled in: promtool passes only if Prometheus expands it to exactly that.

The copies fire on a constant expression with the expectation's own labels, not on the bundle's expressions, and a
test's evaluation times become its first minutes in order (1m, 2m, ...): expansion depends on the annotation and the
alert's labels only, and the bundle's expressions over its hours of series cost promtool tens of seconds per file
(they are evaluated on their series by the bundle's own rule tests).
"""

from __future__ import annotations

import json
import re
from typing import Any

_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
_ALERT = re.compile(r'^ALERTS\{alertname="(\w+)", alertstate="firing"\}$')
_REFERENCE = re.compile(r'\{\{ (?:\$labels\.(\w+)|index \$labels "([^"]+)") \}\}')
_BRACES = '{{ "{{" }}'
_CASE = "rlobs_expansion_case"  # which test of the file is being evaluated


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


def _seconds(duration: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)([smh])", duration))


def _firing(samples: list[tuple[int, str, dict[str, str]]]) -> str:
    """An expression that returns exactly these label sets, each in its own test (the case series) at its own
    eval_time, and nothing otherwise."""
    parts = []
    for case, when, labels in samples:
        inner = "vector(1)"
        for k, v in sorted(labels.items()):
            inner = f'label_replace({inner}, "{k}", {json.dumps(v, ensure_ascii=False)}, "", "")'
        parts.append(f"({inner} and on () (vector(time()) == {_seconds(when)}) and on () ({_CASE} == {case}))")
    return " or ".join(parts) or "vector(1) == 0"


def one_annotation(rules: dict[str, Any], tests: dict[str, Any], name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(rules, tests) for promtool: the alerting rules keep only annotation `name` and fire on a constant expression,
    and every firing expectation of the bundle's tests expects it expanded. Raises when no alert carries it."""
    alerts = {r["alert"]: r for g in rules["groups"] for r in g["rules"] if "alert" in r}
    texts = {a: r["annotations"][name] for a, r in alerts.items() if name in r.get("annotations", {})}
    if not texts:
        raise AssertionError(f"no alert carries the annotation {name}")
    firing: dict[str, list[tuple[int, str, dict[str, str]]]] = {a: [] for a in alerts}
    out = []
    for case, test in enumerate(tests["tests"]):
        checks = []
        times = sorted({_seconds(t["eval_time"]) for t in test.get("promql_expr_test", [])})
        for t in test.get("promql_expr_test", []):
            match = _ALERT.match(t["expr"])
            if match is None:
                continue
            alert = match.group(1)
            when = f"{times.index(_seconds(t['eval_time'])) + 1}m"
            exp = []
            for sample in t["exp_samples"]:
                labels = {k: v for k, v in _labels(sample["labels"]).items() if k not in ("alertname", "alertstate")}
                own = {k: v for k, v in labels.items() if k not in alerts[alert].get("labels", {})}
                firing[alert].append((case, when, own))
                annotations = {name: expanded(texts[alert], labels)} if alert in texts else {}
                exp.append({"exp_labels": labels, "exp_annotations": annotations})
            checks.append({"eval_time": when, "alertname": alert, "exp_alerts": exp})
        end = max((_seconds(c["eval_time"]) for c in checks), default=0) // 60
        series = [{"series": _CASE, "values": f"{case}+0x{end}"}]
        out.append({"name": test["name"], "interval": "1m", "input_series": series, "alert_rule_test": checks})
    kept = [
        {
            "alert": a,
            "expr": _firing(firing[a]),
            "labels": r.get("labels", {}),
            "annotations": {name: texts[a]} if a in texts else {},
        }
        for a, r in alerts.items()
    ]
    return {"groups": [{"name": "expansion", "rules": kept}]}, {**tests, "tests": out}


def expected(tests: dict[str, Any], name: str) -> list[str]:
    """The expanded texts of annotation `name` a test file from one_annotation() expects."""
    return [
        e["exp_annotations"][name]
        for t in tests["tests"]
        for c in t.get("alert_rule_test", [])
        for e in c["exp_alerts"]
        if name in e["exp_annotations"]
    ]
