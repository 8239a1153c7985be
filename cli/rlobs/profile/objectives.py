"""What a run is held to: its SLOs (error budgets and burn-rate alerts) and rlobs plan's counts and budgets."""

# No `from __future__ import annotations`, as in rlobs.profile.model: pydantic would eval() each annotation.

from functools import cache
from typing import Annotated

from pydantic import Field

from rlobs.profile.fields import Duration, Model, Positive
from rlobs.profile.yamlsource import load_yaml
from rlobs.resources import read_text

# Objectives below 1: an objective of 1 leaves no error budget to burn.
Objective = Annotated[float, Field(gt=0, lt=1)]


class GoodputSlo(Model):
    objective: Objective = Field(
        description="Least share of the workload's wall time spent training: the `train` bucket of the "
        "time-accounting counter over all its buckets, e.g. 0.9."
    )


class StepsPerHourSlo(Model):
    min: Positive = Field(
        description="Least optimizer steps an hour (the step counter) while a run trains; an hour counts "
        "once a run has trained for a whole hour since it started, resumed or ended a pause."
    )
    objective: Objective = Field(0.99, description="Share of the training minutes that must meet `min`.")


class FirstStepSlo(Model):
    max: Duration = Field("30m", description="Most time from a run's start to its first completed step.")
    objective: Objective = Field(
        0.99, description="Share of the workload's run minutes not spent waiting past `max` for a first step."
    )


class Slos(Model):
    """RL-run SLOs with error budgets: multi-window multi-burn-rate alerts (eks rules; gke PromQL policies, and a Cloud
    Monitoring SLO for goodput)."""

    window_days: int = Field(
        7, ge=1, le=30, description="The rolling period the error budget covers, in days (Cloud Monitoring: 1-30)."
    )
    goodput: GoodputSlo | None = Field(None, description="Goodput SLO (eks and gke).")
    steps_per_hour: StepsPerHourSlo | None = Field(None, description="Training pace SLO, per workload.")
    time_to_first_step: FirstStepSlo | None = Field(
        None, description="Start-up SLO: each start, restart included, must reach a first step in time."
    )


class Budget(Model):
    """What `rlobs plan --check` fails above (and `validate` and `render` warn about): unset, no limit."""

    series: int | None = Field(None, gt=0, description="Active series in total (RL and third-party).")
    samples_per_second: Positive | None = Field(None, description="Samples ingested per second in total.")
    money_per_month: Positive | None = Field(None, description="USD per month on every backend at list prices.")


class PlanSettings(Model):
    """What `rlobs plan` multiplies the catalog by; it counts what no other key says (only rank 0 of a run reports)."""

    budget: Budget = Budget()
    runs: int = Field(1, ge=1, description="RL runs in parallel on the cluster (each its own rl.run.id).")
    nodes: int = Field(1, ge=1, description="GPU nodes the runs use (node exporter, Ray and DCGM series).")
    gpus_per_node: int = Field(8, ge=0, description="GPUs per node (DCGM series are per GPU).")
    engines: int = Field(1, ge=0, description="Rollout engine servers (vLLM or SGLang) per run.")


@cache
def droppable_attributes() -> tuple[str, ...]:
    """Catalog attribute keys no dashboard, rule or SLO reads (not via rlobs.rl.catalog: the profile sits below it)."""
    raw = load_yaml(read_text("data", "signals.yaml"))
    return tuple(a["key"] for a in raw["attributes"] if a.get("droppable"))
