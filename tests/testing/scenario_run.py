"""Runs the scenarios through promtool with a bundle's own rules and reads back, per run and alert, how often it began
firing and when first: the scenario table (docs/scenarios.md, `make scenarios`)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rlobs.profile.fields import duration_seconds
from rlobs.rl import naming, panels, promrules, slos
from rlobs.rl.alerts.lifecycle import RECORDED
from rlobs.rl.facts import RlFacts
from rlobs.targets import parse_profile
from rlobs.targets.gke.monitoring import alert_policies
from testing.bundles import facts
from testing.helpers import all_profiles
from testing.scenario_cases import scenarios
from testing.scenarios import BUCKETS, MINUTES, Proc, Samples, Scenario, export, values

# Scenario key -> catalog metric and part (histograms: their sum and count only; the rules read nothing else).
_SERIES = {
    "run_state": ("run_state", ""),
    "state_since": ("state_since", ""),
    "progress_time": ("progress_time", ""),
    "step_interval": ("step_interval", ""),
    "run_restarts": ("run_restarts", ""),
    "train_steps": ("train_steps", ""),
    "train_loss": ("train_loss", ""),
    "loss_nonfinite": ("loss_nonfinite", ""),
    "reward_mean": ("reward_mean", ""),
    "train_mfu": ("train_mfu", ""),
    "loop_sum": ("loop_duration", "sum"),
    "loop_count": ("loop_duration", "count"),
    "sync_sum": ("sync_duration", "sum"),
    "sync_count": ("sync_duration", "count"),
}
COLLECTOR_UP = 'up{namespace="monitoring", endpoint="prom-exporter"}'


@dataclass(frozen=True)
class Fired:
    episodes: int
    first: float  # minute it first fired


def bundle(name: str, settings: dict[str, dict[str, str]], slos: str = "") -> RlFacts:
    """A shipped profile's facts, its `alerts:` replaced by the scenario's overrides (defaults otherwise) and, given
    `slos` (YAML), its `slos:` by them."""
    text = re.sub(r"(?ms)^alerts:\n(?:[ #].*\n?)*", "", all_profiles()[name])
    if slos:
        text = re.sub(r"(?ms)^slos:.*\n(?:[ #].*\n?)*", "", text) + f"slos:\n{slos}"
    if settings:
        text += "alerts:\n" + "".join(
            f"  {k}: {{{', '.join(f'{a}: {v}' for a, v in s.items())}}}\n" for k, s in settings.items()
        )
    return facts(parse_profile(text, f"{name}.yaml"))


def classic(promql: str) -> str:
    """GKE's PromQL with dotted names (gke-telemetry-api) in the classic form promtool 2.x parses: Cloud Monitoring
    quotes them (`{"rl.train.steps", "rl.run.id"="r"}`, `by ("rl.run.id")`), Prometheus before 3.0 cannot; each
    dotted name becomes the same name with underscores, in queries and input series alike (values stay quoted)."""
    promql = re.sub(r'\{"([\w.:]+)"(?![=!~])(?:, )?', lambda m: m[1].replace(".", "_") + "{", promql)
    return re.sub(r'(?<![=~])"([\w:]*\.[\w.:]*)"', lambda m: m[1].replace(".", "_"), promql)


def policy_rules(rl: RlFacts) -> list[dict[str, Any]]:
    """The GKE bundle's alert policies as one Prometheus rule group. Cloud Monitoring evaluates a PromQL condition as
    Prometheus evaluates an alerting rule (the query every evaluationInterval, `duration` as `for`, one incident per
    series); what differs is translated here: dotted names (`classic`), and a policy has no keep_firing_for (so none
    is set). Its series have no staleness markers either: `values(..., stale=False)`."""
    conditions = [p["conditions"][0]["conditionPrometheusQueryLanguage"] for _, p in alert_policies(rl, lambda s: [])]
    rules = [
        {"alert": c["alertRule"], "expr": classic(c["query"]), "for": c["duration"], "labels": c["labels"]}
        for c in conditions
    ]
    return [{"name": conditions[0]["ruleGroup"], "interval": conditions[0]["evaluationInterval"], "rules": rules}]


def _input(rl: RlFacts, sc: Scenario) -> list[dict[str, str]]:
    # Processes of one run in one pod (a container restart) write the same series: the newer one's points win.
    merged: dict[tuple[str, str], dict[str, Samples]] = {}
    st = rl.profile.alerts.stall
    stall = (
        duration_seconds(st.window) / 60,
        st.factor,
        duration_seconds(st.startup) / 60,
        duration_seconds(st.pause_limit) / 60,
    )
    for i, p in enumerate(sc.procs):
        key = (p.run, p.instance or f"{p.run}-{i}")
        new = export(p, rl.pipeline, sc.outage, stall)
        old = merged.get(key)
        merged[key] = (
            new
            if old is None
            else {k: [b if b is not None else a for a, b in zip(old[k], new[k], strict=True)] for k in new}
        )
    found = []
    push = rl.pipeline not in RECORDED  # pushed to Google: a policy reads Monarch, which has no staleness markers
    for (run_id, instance), samples in merged.items():
        labels = {**rl.scope, rl.catalog.attribute("run_id").name: run_id}
        plain = {naming.label(k, rl.pipeline): v for k, v in labels.items()}
        for name, (metric, part) in _SERIES.items():
            sel = classic(naming.selector(rl.catalog.metric(metric), rl.pipeline, part, labels))  # type: ignore[arg-type]
            found.append(
                {"series": sel[:-1] + f', instance="{instance}"}}', "values": values(samples[name], stale=not push)}
            )
        for bucket in BUCKETS:
            labelled = {**labels, rl.catalog.attribute("time_bucket").name: bucket}
            sel = classic(naming.selector(rl.catalog.metric("run_time"), rl.pipeline, "", labelled))
            found.append(
                {"series": sel[:-1] + f', instance="{instance}"}}', "values": values(samples[bucket], stale=not push)}
            )
        if rl.pipeline == "python-prometheus":
            found.append(
                {"series": f'up{{job="{plain["job"]}", instance="{instance}"}}', "values": values(samples["up"])}
            )
    if rl.pipeline == "otel-collector":
        up = [0.0 if sc.outage and sc.outage[0] <= t < sc.outage[1] else 1.0 for t in range(MINUTES + 1)]
        found.append({"series": COLLECTOR_UP, "values": values(up)})  # type: ignore[arg-type]
    return found


def _queries(*labels: str) -> list[dict[str, Any]]:
    by = ", ".join(["alertname", *labels])
    firing = 'ALERTS{alertstate="firing"}'
    began = f"({firing} unless {firing} offset 1m)"  # the minutes an alert began firing: its episodes
    return [
        {
            "expr": f"sum by ({by}) (sum_over_time({began}[{MINUTES}m:1m]))",
            "eval_time": f"{MINUTES}m",
            "exp_samples": [],
        },
        {
            "expr": f"min by ({by}) (min_over_time(timestamp({firing})[{MINUTES}m:1m]))",
            "eval_time": f"{MINUTES}m",
            "exp_samples": [],
        },
    ]


_GOT = re.compile(r"\{([^}]*)\} ([-+0-9.eE]+)")


def run(profile: str, names: frozenset[str] | None = None) -> dict[str, dict[str, dict[str, Fired]]]:
    """scenario -> run id -> alert -> Fired, evaluated by promtool with the profile's rules (EKS) or alert policies
    (GKE); `names`: only these scenarios."""
    cases = {n: sc for n, sc in scenarios().items() if names is None or n in names}
    groups: dict[str, list[str]] = {}
    for name, sc in cases.items():
        groups.setdefault(repr(sorted(sc.settings.items())), []).append(name)
    found: dict[str, dict[str, dict[str, Fired]]] = {name: {} for name in cases}
    for members in groups.values():
        rl = bundle(profile, cases[members[0]].settings)
        run_label = classic(naming.label_token(rl.catalog.attribute("run_id").name, rl.pipeline))
        tests = [
            {"name": n, "interval": "1m", "input_series": _input(rl, cases[n]), "promql_expr_test": _queries(run_label)}
            for n in members
        ]
        output = _promtool(tests, promrules.rule_groups(rl) if rl.pipeline in RECORDED else policy_rules(rl))
        owner = {p.run: n for n in members for p in cases[n].procs}
        kind = ""
        for line in output.splitlines():
            if "expr:" in line:
                kind = "episodes" if "sum_over_time" in line else "first"
            elif line.strip().startswith("got:"):
                for labels, value in _GOT.findall(line):
                    d = dict(re.findall(r'([\w.]+)="([^"]*)"', labels))
                    if run_label not in d:
                        continue  # a workload's SLO burn, not a run's alert: tests/test_slo.py judges those
                    r, alert = d[run_label], d["alertname"]
                    prev = found[owner[r]].setdefault(r, {}).get(alert, Fired(0, -1))
                    v = float(value)
                    found[owner[r]][r][alert] = (
                        Fired(int(v), prev.first) if kind == "episodes" else Fired(prev.episodes, v / 60)
                    )
    return found


def _promtool(tests: list[dict[str, Any]], rules: list[dict[str, Any]]) -> str:
    """What promtool printed for tests that expect nothing: the `got:` lines hold what the queries returned."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "rules.yaml").write_text(yaml.safe_dump({"groups": rules}), encoding="utf-8")
        test = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}
        (Path(tmp) / "s.test.yaml").write_text(yaml.safe_dump(test, width=1 << 20), encoding="utf-8")
        proc = subprocess.run(["promtool", "test", "rules", "s.test.yaml"], cwd=tmp, capture_output=True, text=True)
    output = proc.stdout + proc.stderr  # promtool prints its failures (here: what the queries returned) to stderr
    if "got:" not in output and proc.returncode != 0:
        raise RuntimeError(output[-3000:])
    return output


def accounting(profile: str) -> dict[str, dict[str, float]]:
    """scenario -> bucket -> minutes, as Prometheus reads them at the end: each bucket's increase over the whole
    run summed over the scenario's processes, and down by the dashboard's own expression."""
    cases = scenarios()
    rl = bundle(profile, {})
    run_label = naming.label(rl.catalog.attribute("run_id").name, rl.pipeline)
    bucket_label = naming.label(rl.catalog.attribute("time_bucket").name, rl.pipeline)

    def sel(key: str, part: naming.Part) -> str:
        return naming.selector(rl.catalog.metric(key), rl.pipeline, part, rl.scope)

    window = f"{MINUTES + 1}m"
    live = f"sum by ({run_label}, {bucket_label}) (increase({sel('run_time', '')}[{window}]))"
    queries = [
        {"expr": q, "eval_time": f"{MINUTES}m", "exp_samples": []}
        for q in (live, panels.down(rl.catalog, rl.pipeline, sel, window))
    ]
    tests = [
        {"name": n, "interval": "1m", "input_series": _input(rl, sc), "promql_expr_test": queries}
        for n, sc in cases.items()
    ]
    owner = {p.run: n for n, sc in cases.items() for p in sc.procs}
    found: dict[str, dict[str, float]] = {n: {} for n in cases}
    for line in _promtool(tests, []).splitlines():
        if line.strip().startswith("got:"):
            for labels, value in _GOT.findall(line):
                d = dict(re.findall(r'([\w.]+)="([^"]*)"', labels))
                got, bucket = found[owner[d[run_label]]], d.get(bucket_label, "down")
                got[bucket] = got.get(bucket, 0.0) + float(value) / 60  # a scenario's runs summed
    return found


def bound(rl: RlFacts, sc: Scenario, proc: Proc | None, alert: str) -> float | None:
    """The time-to-fire bound (minutes from onset) the issue sets for the scenario's kind of fault."""
    a = rl.profile.alerts
    if sc.bound == "hang":
        return max(10.0, 3 * (proc.interval if proc else 1.0))
    if sc.bound == "startup":
        return duration_seconds(a.stall.startup) / 60 + 5
    if sc.bound == "pause":
        return duration_seconds(a.stall.pause_limit) / 60 + 5
    if sc.bound == "quality":
        rule = a.loss_spike if alert == "RLLossSpike" else a.reward_collapse
        f = duration_seconds(rule.for_) / 60  # 3 iterations plus the rule's own `for`
        return 3 * (proc.interval if proc else 1.0) + f
    return None


# The goodput SLO the scenarios are judged against: training (the train bucket) at least a fifth of the judged time. A
# healthy loop of the scenarios trains 0.3 of what its sync leaves (0.28), the rank-imbalanced one 0.19: a platform team
# sets its objective under what healthy runs reach after sync, checkpoints and evaluations (0.9 asks for a run that
# almost never rolls out). The page fires where a window of it holds no training at all (14.4 and 6 times the 0.8
# budget exceed 1).
SLOS = "  goodput: {objective: 0.2}\n"


def burns(profile: str) -> dict[str, dict[str, Fired]]:
    """scenario -> SLO alert -> Fired: each scenario alone (an SLO is its workload's: every run of it summed), with the
    SLO rules only, on the series they read (the time accounting)."""
    cases = scenarios()
    rl = bundle(profile, {}, SLOS)
    group = slos.rule_group(rl)
    assert group is not None
    accounted = naming.selector(rl.catalog.metric("run_time"), rl.pipeline, "", {}).split("{")[0]
    tests = []
    for name, sc in cases.items():
        series = [s for s in _input(rl, sc) if s["series"].startswith(accounted + "{")]
        queries = [{**q, "expr": f'label_replace({q["expr"]}, "scenario", "{name}", "", "")'} for q in _queries()]
        tests.append({"name": name, "interval": "1m", "input_series": series, "promql_expr_test": queries})
    found: dict[str, dict[str, Fired]] = {name: {} for name in cases}
    kind = ""
    for line in _promtool(tests, [group]).splitlines():
        if "expr:" in line:
            kind = "episodes" if "sum_over_time" in line else "first"
        elif line.strip().startswith("got:"):
            for labels, value in _GOT.findall(line):
                d = dict(re.findall(r'([\w.]+)="([^"]*)"', labels))
                prev = found[d["scenario"]].get(d["alertname"], Fired(0, -1))
                v = float(value)
                found[d["scenario"]][d["alertname"]] = (
                    Fired(int(v), prev.first) if kind == "episodes" else Fired(prev.episodes, v / 60)
                )
    return found
