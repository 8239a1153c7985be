"""Runs the scenarios through promtool with a bundle's own rules and reads back, per run and alert, how often it began
firing and when first: the scenario table (docs/scenarios.md, `make scenarios`)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping
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


def _series(rl: RlFacts, name: str, sc: Scenario, runs: Mapping[str, str]) -> list[dict[str, str]]:
    """The input series of a scenario's processes, each run labelled `runs[run]`; instances are the scenario's own
    (`<scenario>/<instance>`), so no two scenarios of one test write one series or share a scrape target."""
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
    for (run_id, own), samples in merged.items():
        instance = f"{name}/{own}"
        labels = {**rl.scope, rl.catalog.attribute("run_id").name: runs[run_id]}
        plain = {naming.label(k, rl.pipeline): v for k, v in labels.items()}
        for series, (metric, part) in _SERIES.items():
            sel = classic(naming.selector(rl.catalog.metric(metric), rl.pipeline, part, labels))  # type: ignore[arg-type]
            found.append(
                {"series": sel[:-1] + f', instance="{instance}"}}', "values": values(samples[series], stale=not push)}
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
    return found


@dataclass(frozen=True)
class Merged:
    """Scenarios as few promtool tests as their series allow; `owner`: a run id as the tests label it -> the
    scenario and its own run id."""

    inputs: list[list[dict[str, str]]]  # each test's input series
    owner: dict[str, tuple[str, str]]

    def tests(self, queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {"name": f"batch {i}", "interval": "1m", "input_series": s, "promql_expr_test": queries}
            for i, s in enumerate(self.inputs)
        ]


def merge(rl: RlFacts, cases: Mapping[str, Scenario]) -> Merged:
    """The scenarios' series in shared tests: every rule and query groups by run (the pipeline's scrape health joins
    on the instance), so scenarios meet only where a run id or an instance repeats, and both are made unique (a run id
    another scenario has too becomes `<scenario>/<run>`). What every run shares is the collector's `up`: through it a
    scenario shares a test only with those of the same outage."""
    shared = rl.pipeline == "otel-collector"
    runs = Counter(r for sc in cases.values() for r in {p.run for p in sc.procs})
    by_outage: dict[tuple[float, float] | None, list[dict[str, str]]] = {}
    owner: dict[str, tuple[str, str]] = {}
    for name, sc in cases.items():
        label = {r: r if runs[r] == 1 else f"{name}/{r}" for r in dict.fromkeys(p.run for p in sc.procs)}
        owner |= {tagged: (name, r) for r, tagged in label.items()}
        by_outage.setdefault(sc.outage if shared else None, []).extend(_series(rl, name, sc, label))
    if shared:
        for outage, series in by_outage.items():
            up = [0.0 if outage and outage[0] <= t < outage[1] else 1.0 for t in range(MINUTES + 1)]
            series.append({"series": COLLECTOR_UP, "values": values(up)})  # type: ignore[arg-type]
    return Merged(list(by_outage.values()), owner)


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


def _samples(output: str) -> Iterator[tuple[str, dict[str, str], float]]:
    """(expression, labels, value) of every sample the queries returned, as promtool printed them (`got:`)."""
    expr = ""
    for line in output.splitlines():
        if "expr:" in line:
            expr = line
        elif line.strip().startswith("got:"):
            for labels, value in _GOT.findall(line):
                yield expr, dict(re.findall(r'([\w.]+)="([^"]*)"', labels)), float(value)


def _fired(output: str, by: str) -> dict[str, dict[str, Fired]]:
    """label `by`'s value -> alert -> Fired, from the samples of _queries (samples without the label skipped)."""
    found: dict[str, dict[str, Fired]] = {}
    for expr, labels, v in _samples(output):
        if by not in labels:
            continue
        alerts, alert = found.setdefault(labels[by], {}), labels["alertname"]
        prev = alerts.get(alert, Fired(0, -1))
        alerts[alert] = Fired(int(v), prev.first) if "sum_over_time" in expr else Fired(prev.episodes, v / 60)
    return found


def run(profile: str, names: frozenset[str] | None = None) -> dict[str, dict[str, dict[str, Fired]]]:
    """scenario -> run id -> alert -> Fired, evaluated by promtool with the profile's rules (EKS) or alert policies
    (GKE); `names`: only these scenarios. The scenarios of one profile `alerts:` share their tests (merge)."""
    cases = {n: sc for n, sc in scenarios().items() if names is None or n in names}
    groups: dict[str, dict[str, Scenario]] = {}
    for name, sc in cases.items():
        groups.setdefault(repr(sorted(sc.settings.items())), {})[name] = sc
    found: dict[str, dict[str, dict[str, Fired]]] = {name: {} for name in cases}
    for members in groups.values():
        rl = bundle(profile, next(iter(members.values())).settings)
        run_label = classic(naming.label_token(rl.catalog.attribute("run_id").name, rl.pipeline))
        merged = merge(rl, members)
        # A run's alerts: a workload's SLO burns sum every run of it (burns() and tests/test_slo.py judge those), so
        # the SLO rules are left out, and a GKE burn policy's sample (it has no run) is skipped.
        slo = slos.rule_group(rl)
        rules = [g for g in promrules.rule_groups(rl) if g != slo] if rl.pipeline in RECORDED else policy_rules(rl)
        for tagged, fired in _fired(_promtool(merged.tests(_queries(run_label)), rules), run_label).items():
            name, run_id = merged.owner[tagged]
            found[name][run_id] = fired
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
    merged = merge(rl, cases)
    found: dict[str, dict[str, float]] = {n: {} for n in cases}
    for _, d, value in _samples(_promtool(merged.tests(queries), [])):
        got, bucket = found[merged.owner[d[run_label]][0]], d.get(bucket_label, "down")
        got[bucket] = got.get(bucket, 0.0) + value / 60  # a scenario's runs summed
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
    """scenario -> SLO alert -> Fired: each scenario alone (an SLO is its workload's: its rules sum every run of it,
    by no label a scenario could own), with the SLO rules only, on the series they read (the time accounting)."""
    cases = scenarios()
    rl = bundle(profile, {}, SLOS)
    group = slos.rule_group(rl)
    assert group is not None
    accounted = naming.selector(rl.catalog.metric("run_time"), rl.pipeline, "", {}).split("{")[0]
    tests = []
    for name, sc in cases.items():
        (series,) = merge(rl, {name: sc}).inputs
        queries = [{**q, "expr": f'label_replace({q["expr"]}, "scenario", "{name}", "", "")'} for q in _queries()]
        read = [s for s in series if s["series"].startswith(accounted + "{")]
        tests.append({"name": name, "interval": "1m", "input_series": read, "promql_expr_test": queries})
    found: dict[str, dict[str, Fired]] = {name: {} for name in cases}
    return found | _fired(_promtool(tests, [group]), "scenario")
