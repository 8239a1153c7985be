"""The framework adapter the bundle ships for the profile's workload.run.system, its wiring and its docs rows."""

from __future__ import annotations

import textwrap
from typing import Any

from pydantic.alias_generators import to_camel

from rlobs.bundle.filters import py_str
from rlobs.bundle.spec import FileSpec, TemplateFile
from rlobs.profile.model import ProfileBase
from rlobs.rl.catalog import BY_THE_MODULE, FOLLOWS, Catalog, Framework
from rlobs.rl.facts import RlFacts

ADAPTER_FILE = "app/rlobs_adapter.py"
SITECUSTOMIZE_FILE = "app/sitecustomize.py"
SIGNALS_DOC = "docs/signals.md"
# The env var that starts a no-code adapter from app/sitecustomize.py.
ADAPTER_ENV = "RLOBS_ADAPTER"
# verl's `file` backend opens VERL_FILE_LOGGER_PATH without making its folder (verl/utils/tracking.py:424-431): so /tmp.
VERL_LOG_PATH = "/tmp/rlobs-verl-metrics.jsonl"

# Standard-library modules each adapter uses beyond the common part (kept sorted in the file for ruff's isort).
_COMMON_IMPORTS = ("math", "threading", "time", "warnings")
_EXTRA_IMPORTS: dict[str, tuple[str, ...]] = {
    "verl": ("atexit", "contextlib", "json", "os", "stat"),
    "roll": ("os",),
    "openrlhf": ("importlib",),
    "prime-rl": ("inspect",),
    "trl": ("sys",),
}
# Adapters that wrap a framework function when its module is imported: framework -> (module, the adapter's wrap
# function, what app/sitecustomize.py does, for the bundle README). They start with no code change: sitecustomize
# adds the import hook when ADAPTER_ENV names the framework.
IMPORT_HOOKS: dict[str, tuple[str, str, str]] = {
    "verl": (
        "verl.utils.tracking",
        "wrap_tracking",
        "Wraps verl's Tracking and FileLogger in the process that imports them (the TaskRunner Ray actor, on any "
        "pod): the tailer runs where the metrics file is written,",
    ),
    "openrlhf": (
        "openrlhf.trainer.ppo_trainer",
        "wrap_openrlhf",
        "Wraps the logging of OpenRLHF's PPO trainer, in the process that imports it,",
    ),
    "prime-rl": (
        "prime_rl.utils.metrics_server",
        "wrap_prime_rl",
        "Wraps prime-rl's trainer metrics server updates, in the process that imports it,",
    ),
}

# The one line (or setting) a user adds, per framework; verl needs none beyond a logger setting.
ONE_LINE: dict[str, str] = {
    "verl": "add `file` to `trainer.logger` (e.g. `trainer.logger='[console,wandb,file]'`); the workload env "
    f"(`{ADAPTER_ENV}=verl`, `VERL_FILE_LOGGER_PATH`) starts the tailer in the process that writes the file (without "
    "`file`, each Tracking.log call is fed in-process)",
    "trl": "`trainer.add_callback(rlobs_adapter.RlobsCallback())`",
    "skyrl": "`trainer.add_callback(rlobs_adapter.RlobsSkyRLCallback())`",
    "nemo-rl": "`rlobs_adapter.attach_nemo_rl(logger)` after NeMo-RL builds its `Logger`",
    "rllib": "`config.callbacks(rlobs_adapter.RlobsRLlibCallback)`",
    "openrlhf": f"none: the workload env (`{ADAPTER_ENV}=openrlhf`) wraps the PPO trainer's "
    "`save_logs_and_checkpoints` in the process that imports it",
    "prime-rl": "enable the trainer's `metrics_server` (its `/metrics`); the workload env "
    f"(`{ADAPTER_ENV}=prime-rl`) wraps its updates in the trainer process",
    "roll": "`rlobs_adapter.register_roll()` before the pipeline is built, and `track_with: rlobs` in its config "
    "(`RLOBS_ROLL_TRACKER=wandb` keeps logging to W&B)",
}


# How the app module supplies each metric it records or derives itself (the mapping table's note).
_MODULE_NOTES = {**BY_THE_MODULE, **{key: how for key, (_, how) in FOLLOWS.items()}}


def _context(framework: Framework) -> dict[str, Any]:
    keys = [f"{py_str(k.key)}: Key({py_str(k.metric)}, {py_str(k.value)}, {k.factor!r})," for k in framework.keys]
    derived = [f"{py_str(d.metric)}: ({py_str(d.op)}, {_tuple(d.sources)})," for d in framework.derived]
    imports = sorted({*_COMMON_IMPORTS, *_EXTRA_IMPORTS.get(framework.name, ())})
    return {
        "framework": framework,
        "keys": keys,
        "derived": derived,
        "imports": imports,
        "hook": textwrap.fill(framework.hook, 116),
        "about": textwrap.fill(
            f"Mapping: {framework.name} at {framework.pinned} ({SIGNALS_DOC} lists every key). Only the keys in KEYS "
            "are read; values are converted (seconds to ms, running totals to increases) before they reach the "
            "catalog metrics, and nothing from a payload ever becomes a metric attribute. No function here raises "
            "into the training loop.",
            116,
        ),
    }


def _tuple(items: tuple[str, ...]) -> str:
    """A tuple literal as `ruff format` writes it."""
    inner = ", ".join(py_str(i) for i in items)
    return f"({inner},)" if len(items) == 1 else f"({inner})"


def adapter_files(profile: ProfileBase, catalog: Catalog) -> tuple[FileSpec, ...]:
    framework = catalog.framework(profile.workload.run.system)
    if framework is None:
        return ()
    files: list[FileSpec] = [
        TemplateFile(
            ADAPTER_FILE,
            "py",
            "common/rlobs_adapter.py.j2",
            f"Feeds what {framework.name} logs into `rlobs_telemetry.py` (mapping in `{SIGNALS_DOC}`); "
            f"to use it: {ONE_LINE[framework.name]}.",
            _context(framework),
        )
    ]
    if framework.name in IMPORT_HOOKS:
        module, wrap, what = IMPORT_HOOKS[framework.name]
        files.append(
            TemplateFile(
                SITECUSTOMIZE_FILE,
                "py",
                "common/sitecustomize.py.j2",
                f"{what} when `{ADAPTER_ENV}={framework.name}` (Python imports it at start-up from the PYTHONPATH).",
                {"env": ADAPTER_ENV, "framework": framework.name, "module": module, "wrap": wrap},
            )
        )
    return tuple(files)


def adapter_env(profile: ProfileBase, catalog: Catalog) -> list[dict[str, str]]:
    framework = catalog.framework(profile.workload.run.system)
    if framework is None or framework.name not in IMPORT_HOOKS:
        return []
    out = [{"name": "VERL_FILE_LOGGER_PATH", "value": VERL_LOG_PATH}] if framework.name == "verl" else []
    return [*out, {"name": ADAPTER_ENV, "value": framework.name}]


def readme(profile: ProfileBase, catalog: Catalog) -> dict[str, str] | None:
    framework = catalog.framework(profile.workload.run.system)
    if framework is None:
        return None
    return {"framework": framework.name, "line": ONE_LINE[framework.name], "file": ADAPTER_FILE}


def time_buckets(framework: Framework, catalog: Catalog) -> str:
    """Which time-accounting buckets the framework's own timers fill (the rest come from the run's lifecycle)."""
    timed = {k.metric for k in framework.keys} | {d.metric for d in framework.derived}
    phases = [s.key for s in catalog.spans if s.key != "loop" and s.metric in timed]
    own = f"{', '.join(phases)} from {framework.name}'s own timers" if phases else f"no phase timer of {framework.name}"
    return f"{own}; idle, starting, stalled and pauses (checkpoint, evaluation, other) from the lifecycle"


# The keys of a mapping row (rlobs signals --framework prints them as its columns).
MAPPING_COLUMNS = ("metric", "coverage", "source", "how", "phase", "note")


def mapping_rows(framework: Framework, catalog: Catalog) -> list[dict[str, str]]:
    rows = []
    for m in catalog.metrics:
        key = next((k for k in framework.keys if k.metric == m.key), None)
        derived = next((d for d in framework.derived if d.metric == m.key), None)
        coverage = framework.coverage(m.key)
        source, how, phase, note = "", "", "", ""
        if key is not None:
            how = key.value + (f", {key.unit} to {m.unit}" if key.unit else "")
            source, phase, note = key.key, key.phase, key.note
        elif derived is not None:
            rate = f"increase of {derived.sources[0]} per second"
            source = " / ".join(derived.sources) if derived.op == "divide" else rate
            how, phase = derived.op, derived.phase
        elif coverage == "derived":
            how = "by rlobs_telemetry"
            note = time_buckets(framework, catalog) if m.key == "run_time" else _MODULE_NOTES[m.key]
        rows.append(dict(zip(MAPPING_COLUMNS, (m.name, coverage, source, how, phase, note), strict=True)))
    return rows


# The call that records a catalog metric an adapter does not supply, in the training code (app/rlobs_telemetry.py).
RECORD_LINES = {
    "train_mfu": "rlobs_telemetry.record_mfu(mfu)  # model FLOPs utilisation, 0-1",
    "loop_duration": 'rlobs_telemetry.record_duration("loop", duration_ms)  # each RL iteration',
    "sync_duration": 'rlobs_telemetry.record_duration("sync", duration_ms)  # each weight sync',
    "reward_mean": "rlobs_telemetry.record_reward(mean_reward)",
    "train_loss": "rlobs_telemetry.record_loss(loss)",
}


def alert_coverage(rl: RlFacts) -> dict[str, Any] | None:
    framework = rl.catalog.framework(rl.profile.workload.run.system)
    if framework is None or not rl.profile.alerts.enabled:
        return None
    missing = {m for _, metrics in rl.left_out for m in metrics}
    return {
        "framework": framework.name,
        "rendered": [a.name for a in rl.alerts],
        "left_out": [
            {"name": a.name, "signals": [rl.catalog.metric(m).name for m in metrics], "setting": to_camel(a.key)}
            for a, metrics in rl.left_out
        ],
        "lines": [RECORD_LINES[m.key] for m in rl.catalog.metrics if m.key in missing and m.key in RECORD_LINES],
    }
