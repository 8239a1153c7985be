"""A question interactive `init` asks, and the workload ones every target asks besides its own (Target.QUESTIONS)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import get_args

from rlobs.profile.model import WorkloadKind
from rlobs.profile.yamlsource import Path, get_at, load_yaml

KINDS: tuple[str, ...] = get_args(WorkloadKind)


@dataclass(frozen=True, slots=True)
class Question:
    path: Path  # the profile key the answer sets
    prompt: str
    choices: tuple[str, ...] = ()  # answered by name or by number
    many: bool = False  # a comma-separated list
    after: str | None = None  # where the key goes when the blueprint lacks it: the line after this sibling key
    when: Callable[[str], bool] = lambda _text: True  # asked only when the profile so far says so
    folder: bool = False  # the bundle's path in the Git repository: proposed from where init runs (profile.worktree)


WORKLOAD = (
    Question(("workload", "namespace"), "Namespace of the workload"),
    Question(("workload", "kind"), "Kind of the workload that runs the RL loop", choices=KINDS),
    Question(
        ("workload", "replicatedJobs"),
        "Replicated jobs of the JobSet that run the RL loop (comma-separated)",
        many=True,
        after="kind",
        when=lambda text: get_at(load_yaml(text), ("workload", "kind")) == "JobSet",
    ),
    Question(("workload", "name"), "Name of that workload object"),
)
