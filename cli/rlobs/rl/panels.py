"""The RL dashboard's panels as backend-neutral data: sections, titles, units and PromQL built through naming."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rlobs.profile.fields import duration_seconds
from rlobs.rl import naming
from rlobs.rl.catalog import Catalog
from rlobs.rl.naming import Part, Pipeline

# selector(metric key, part) -> PromQL selector with the dashboard's filters applied.
Selector = Callable[[str, Part], str]


@dataclass(frozen=True, slots=True)
class Query:
    expr: str
    legend: str  # the series' name; `{run}` stands for the run label reference (Grafana legend format)
    unit: str = ""  # UCUM unit of this series where it differs from the panel's (drawn on a second axis)


@dataclass(frozen=True, slots=True)
class Panel:
    section: str
    title: str
    grafana_unit: str  # Grafana unit id
    unit: str  # UCUM, for Cloud Monitoring unitOverride
    queries: tuple[Query, ...]
    description: str
    stacked: bool = False  # series stacked (their sum means something: the time accounting)


SECTIONS = ("Goodput", "Latency", "Throughput", "Training health", "Saturation")
# Time accounting (the module's run_time buckets; `down` is computed here). Goodput is train time over wall time,
# goodput including rollout (sample + reward + train) over wall time; every other bucket is badput, by cause.
PRODUCTIVE = ("sample", "reward", "train")
BADPUT = ("sync", "checkpoint", "evaluation", "other", "idle", "stalled", "starting")
LOST_WINDOW = "24h"  # the GPU-hours lost panel sums the last day (a fixed range: Cloud Monitoring has no $__range)


def goodput(catalog: Catalog) -> dict[str, str]:
    """The names the README's goodput section uses."""
    names = {k: catalog.metric(k).name for k in ("run_time", "run_gpus")}
    return {**names, "bucket": catalog.attribute("time_bucket").name, "lost_window": LOST_WINDOW}


def bucket_selector(catalog: Catalog, pipeline: Pipeline, sel: Selector, buckets: Sequence[str]) -> str:
    bucket = naming.label_token(catalog.attribute("time_bucket").name, pipeline)
    matcher = f"{bucket}=~{naming.quote('|'.join(buckets))}"
    found = sel("run_time", "")
    return found[:-1] + ", " + matcher + "}" if found.endswith("}") else found + "{" + matcher + "}"


def down(catalog: Catalog, pipeline: Pipeline, sel: Selector, window: str, keep: Sequence[str] = ()) -> str:
    """Seconds of the last `window` a live run had no process: known once it reports again, none while down or ended."""
    by = f"({', '.join([naming.label_token(catalog.attribute('run_id').name, pipeline), *keep])})"
    start = f"min by {by} (min_over_time({sel('state_since', '')}[{window}]))"
    live = f"sum by {by} (increase({sel('run_time', '')}[{window}]))"
    alive = f"(max by {by} ({sel('run_state', '')}) > 0 < 4)"
    return f"(clamp_min(clamp_max(time() - {start}, {duration_seconds(window)}) - {live}, 0) and on {by} {alive})"


def two_per_row(index: int, top: int, width: int, height: int) -> tuple[int, int]:
    return width * (index % 2), top + height * (index // 2)


def rows_height(count: int, height: int) -> int:
    return height * ((count + 1) // 2)


QUANTILES = (0.5, 0.95, 0.99)


def panels(
    catalog: Catalog, pipeline: Pipeline, sel: Selector, window: str, keep: Sequence[str] = ()
) -> tuple[Panel, ...]:
    """`keep`: label tokens every aggregation keeps beside the run's, so a dashboard filter on them still matches."""
    run = naming.label_token(catalog.attribute("run_id").name, pipeline)

    def by(agg: str, inner: str, *extra: str) -> str:
        return f"{agg} by ({', '.join([run, *keep, *extra])}) ({inner})"

    def rate(key: str, part: Part = "") -> str:
        return by("sum", f"rate({sel(key, part)}[{window}])")

    def quantile(key: str, q: float) -> str:
        buckets = by("sum", f"rate({sel(key, 'bucket')}[{window}])", "le")
        return f"histogram_quantile({q:g}, {buckets})"

    def gauge(key: str) -> str:
        return by("avg", sel(key, ""))

    def single(section: str, title: str, key: str, grafana_unit: str = "none") -> Panel:
        return Panel(section, title, grafana_unit, "1", (Query(gauge(key), "{run}"),), catalog.metric(key).description)

    def share(buckets: Sequence[str]) -> str:
        return by("sum", f"rate({bucket_selector(catalog, pipeline, sel, buckets)}[{window}])")

    def since_start(buckets: Sequence[str]) -> str:
        total = by("sum", sel("run_time", ""))
        return f"{by('sum', bucket_selector(catalog, pipeline, sel, buckets))} / {total}"

    gpus = by("max", sel("run_gpus", ""))
    on = f"on ({', '.join([run, *keep])})"

    def lost(expr: str) -> str:
        return f"{expr} * {on} group_left () {gpus} / 3600"

    found = [
        Panel(
            "Goodput",
            "Time accounting",
            "percentunit",
            "1",
            tuple(Query(share((b,)), f"{{run}} {b}") for b in (*PRODUCTIVE, *BADPUT)),
            "Where each second of the run's wall time goes (stacked: they sum to 1 while a process of the run is "
            "alive; rank 0's view). Time between a failure and the restart is in GPU-hours lost, as down.",
            stacked=True,
        ),
        Panel(
            "Goodput",
            "Goodput",
            "percentunit",
            "1",
            (
                Query(since_start(("train",)), "{run} goodput (train)"),
                Query(since_start(PRODUCTIVE), "{run} incl. rollout (sample + reward + train)"),
            ),
            "Train time over wall time since the process started; and sample + reward + train time over it.",
        ),
        Panel(
            "Goodput",
            "Badput by cause",
            "percentunit",
            "1",
            tuple(Query(share((b,)), f"{{run}} {b}") for b in BADPUT),
            "Share of wall time lost to each cause: weight sync, checkpoints, evaluation, loop overhead, idle time "
            "between loops, stalls (past the stall alert's limit), start-up.",
        ),
        Panel(
            "Goodput",
            f"GPU-hours lost by cause ({LOST_WINDOW})",
            "none",
            "h",
            (
                *(
                    Query(
                        lost(by("sum", f"increase({bucket_selector(catalog, pipeline, sel, (b,))}[{LOST_WINDOW}])")),
                        f"{{run}} {b}",
                    )
                    for b in BADPUT
                ),
                Query(lost(down(catalog, pipeline, sel, LOST_WINDOW, keep)), "{run} down"),
            ),
            f"Badput seconds of the last {LOST_WINDOW} times the run's GPUs ({catalog.metric('run_gpus').name}, from "
            "RL_NUM_GPUS or init(gpus=...)), in hours; down is the gap between a failure and the restart.",
        ),
    ]
    found += [
        Panel(
            "Latency",
            title,
            "ms",
            "ms",
            tuple(Query(quantile(key, q), f"{{run}} p{round(q * 100)}") for q in QUANTILES),
            catalog.metric(key).description,
        )
        for key, title in (
            ("loop_duration", "Loop iteration duration"),
            ("step_duration", "Environment step latency"),
            ("train_step_duration", "Optimizer step duration"),
        )
    ]
    phases = [s for s in catalog.spans if s.key != "loop"]
    found += [
        Panel(
            "Latency",
            "Phase duration p95",
            "ms",
            "ms",
            tuple(Query(quantile(s.metric, 0.95), f"{{run}} {s.key}") for s in phases),
            "p95 duration of each loop phase: the slowest one bounds the iteration.",
        ),
        Panel(
            "Latency",
            "Phase share of the loop",
            "percentunit",
            "1",
            tuple(
                Query(f"{rate(s.metric, 'sum')} / {rate('loop_duration', 'sum')}", f"{{run}} {s.key}") for s in phases
            ),
            "Fraction of loop time spent in each phase (time-weighted).",
        ),
        Panel(
            "Throughput",
            "Samples and episodes per second",
            "ops",
            "{sample}/s",
            (
                Query(rate("sample_samples"), "{run} samples/s"),
                Query(rate("sample_episodes"), "{run} episodes/s", "{episode}/s"),
            ),
            "Counted by the rollout phase.",
        ),
        Panel(
            "Throughput",
            "Training tokens per second",
            "ops",
            "{token}/s",
            (Query(rate("train_tokens"), "{run} counted"), Query(gauge("tokens_rate"), "{run} per iteration")),
            "From the token counter, and as reported per loop iteration.",
        ),
        Panel(
            "Throughput",
            "Optimizer steps and samples per second",
            "ops",
            "{step}/s",
            (
                Query(rate("train_steps"), "{run} steps/s"),
                Query(gauge("samples_rate"), "{run} samples/s", "{sample}/s"),
            ),
            "Optimizer steps from the step counter; samples per second as reported per loop iteration.",
        ),
        single("Training health", "Mean reward", "reward_mean"),
        single("Training health", "Mean episode length", "episode_length_mean"),
        single("Training health", "Training loss", "train_loss"),
        Panel(
            "Training health",
            "Non-finite losses and dropped values",
            "ops",
            "1/s",
            (
                Query(rate("loss_nonfinite"), "{run} NaN/inf losses"),
                Query(rate("telemetry_dropped"), "{run} values dropped"),
            ),
            "NaN or infinite losses (the loss alert fires on them), and values the instrumentation refused "
            "(e.g. a string or a negative count) instead of raising into the loop.",
        ),
        Panel(
            "Training health",
            "Run state",
            "none",
            "1",
            (
                Query(by("max", sel("run_state", "")), "{run} state"),
                Query(by("max", sel("run_restarts", "")), "{run} restarts", "{restart}"),
            ),
            catalog.metric("run_state").description + "; and how often the run was restarted.",
        ),
        Panel(
            "Training health",
            "Progress",
            "s",
            "s",
            (
                Query(f"time() - {by('max', sel('progress_time', ''))}", "{run} since the last step"),
                Query(f"time() - {by('max', sel('state_since', ''))}", "{run} in this state"),
                Query(by("max", sel("step_interval", "")), "{run} normal step interval"),
            ),
            "Seconds since the last completed optimizer step and since the run entered its state, against the "
            "run's own normal time between steps (p95 of the last 20, pauses excluded): a stall is a gap much "
            "longer than normal.",
        ),
        single("Saturation", "Model FLOPs utilisation", "train_mfu", "percentunit"),
        Panel(
            "Saturation",
            "Per-GPU throughput",
            "ops",
            "{token}/s/{GPU}",
            (
                Query(gauge("tokens_rate_per_gpu"), "{run} tokens/s/GPU"),
                Query(gauge("samples_rate_per_gpu"), "{run} samples/s/GPU", "{sample}/s/{GPU}"),
            ),
            "Throughput per GPU as reported per loop iteration.",
        ),
    ]
    return tuple(found)
