"""The keys of a fleet file itself: those every fleet has, in a model assembled with what each target adds."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, Field, create_model, model_validator
from pydantic.alias_generators import to_camel

from rlobs.profile.fields import DnsLabel, Model, matching
from rlobs.profile.git import GitRevision, GitUrl, RepoPath
from rlobs.profile.kind import CLUSTERS_DIR
from rlobs.profile.model import Metadata, ProfileBase
from rlobs.profile.objectives import Budget
from rlobs.profile.problems import ProblemAt, article, raise_all, repeats
from rlobs.profile.worktree import DEFAULT_FOLDER
from rlobs.profile.yamlsource import Path

if TYPE_CHECKING:
    from rlobs.errors import Problem
    from rlobs.profile.yamlsource import Located

# Cluster names become Application names (`<cluster>-<component>`, the longest component being
# kube-prometheus-stack, 21 characters) and label values (63 characters at most:
# https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set).
# `in-cluster` is the name Argo CD gives its own cluster, which the fleet never targets.
ClusterName = Annotated[
    str,
    AfterValidator(
        matching(
            r"(?!in-cluster$)[a-z]([-a-z0-9]{0,38}[a-z0-9])?",
            "a cluster name (1-40 lowercase letters, digits and '-', starting with a letter, not `in-cluster`) "
            "like prod-use2-a",
        )
    ),
]

# (effective profile path, value, fleet-file path it comes from): what the fleet sets from a cluster's entry.
Layer = list[tuple[Path, Any, Path]]


@dataclass(frozen=True, slots=True)
class Region:
    """A target's regions, as a cluster entry's `region:` is checked before its effective profile is built."""

    pattern: str
    what: str  # e.g. "AWS region"
    example: str  # e.g. "us-west-2"


class FleetGitOps(Model):
    """The one Git repository the fleet's bundle is committed to; every cluster that syncs from Git syncs from it."""

    repo_url: GitUrl = Field(description="The Git repository this fleet bundle is committed to.")
    target_revision: GitRevision = Field(description="Branch, tag or commit every cluster syncs, unless it says.")
    path: RepoPath = Field(
        DEFAULT_FOLDER,
        description="Path of the rendered fleet bundle inside that repository; rendering into a folder of a git work "
        "tree sets it to that folder's path (a different one is refused).",
    )


class FleetCluster(Model):
    """The keys every cluster entry has; the assembled model adds each target's (read them with getattr)."""

    name: ClusterName
    target: str
    environment: DnsLabel = Field(description="e.g. dev, staging, prod: selects the values layer env/<environment>.")
    region: str
    overrides: dict[str, Any] = Field(
        default_factory=dict, description="Profile keys for this cluster only, merged over `defaults`."
    )


class FleetViews(Model):
    """How the fleet's clusters are looked at together."""


class FleetPlan(Model):
    budget: Budget = Field(Budget(), description="The fleet's totals `rlobs plan --check` fails above.")


class FleetSpec(Model):
    api_version: Literal["rlobs/v1alpha1"] = Field(description="Fleet format version.")
    kind: Literal["Fleet"]
    metadata: Metadata
    gitops: FleetGitOps | None = None
    defaults: dict[str, Any] = Field(default_factory=dict)
    clusters: tuple[FleetCluster, ...] = Field(min_length=1)
    views: FleetViews = Field(default_factory=FleetViews, description="Fleet-wide dashboards.")
    plan: FleetPlan = Field(FleetPlan(), description="Budgets for the fleet's totals (each cluster's: defaults.plan).")


@dataclass(frozen=True, slots=True)
class Member:
    """One cluster of the fleet and its effective profile (validated), with the plain data it was built from."""

    index: int
    cluster: FleetCluster
    profile: ProfileBase
    data: dict[str, Any]

    @property
    def name(self) -> str:
        return self.cluster.name


@dataclass(frozen=True, slots=True)
class Fleet:
    spec: FleetSpec
    members: tuple[Member, ...]

    @property
    def name(self) -> str:
        return self.spec.metadata.name


def bundle_path(spec: FleetSpec, cluster: str) -> str:
    assert spec.gitops is not None
    return f"{spec.gitops.path}/{CLUSTERS_DIR}/{cluster}"


class FleetTarget(Protocol):
    """What one target adds to the fleet file (rlobs.targets.Target.fleet_file gives it)."""

    NAME: str
    NOUN: str  # how the fleet's descriptions name its clusters, e.g. EKS
    REGION: Region
    NEEDS_GITOPS: bool  # its clusters sync from the fleet's `gitops:` repository
    FIELDS: dict[str, tuple[Any, Any]]  # cluster-entry key (snake_case) -> (annotation, Field)
    VIEWS: dict[str, tuple[Any, Any]]  # `views:` key (snake_case) -> (annotation, Field)
    FIXED: dict[Path, str]  # effective-profile keys the fleet sets from the entry -> from what

    def cluster_problems(self, cluster: FleetCluster) -> list[ProblemAt]:
        """Its rules for one of its clusters' entries (another target's keys are refused generically)."""

    def spec_problems(self, spec: FleetSpec) -> list[ProblemAt]:
        """Its rules across the fleet's entries (e.g. which cluster is a hub)."""

    def layer(self, spec: FleetSpec, index: int, cluster: FleetCluster, raw: list[Any]) -> Layer:
        """What the fleet sets in the effective profile of one of its clusters; `raw`: the entries as written."""

    def fleet_problems(self, spec: FleetSpec, members: list[Member], located: Located, display: str) -> list[Problem]:
        """Its rules across its clusters' effective profiles (e.g. one Terraform root per project)."""


def _either(words: list[str], *, both: bool = False) -> str:
    """`a`, `a and b` (`both a and b`), `a, b and c`."""
    if len(words) < 2:
        return "".join(words)
    head = ", ".join(words[:-1])
    return f"{'both ' if both and len(words) == 2 else ''}{head} and {words[-1]}"


@dataclass(frozen=True, slots=True)
class FleetModel:
    spec: type[FleetSpec]
    cluster: type[FleetCluster]


def fleet_model(targets: Mapping[str, FleetTarget]) -> FleetModel:
    return _assembled(tuple(targets.items()))


@cache
def _assembled(targets: tuple[tuple[str, FleetTarget], ...]) -> FleetModel:
    parts = dict(targets)
    region = Annotated[
        str,
        AfterValidator(
            matching(
                "|".join(t.REGION.pattern for t in parts.values()),
                " or ".join(
                    f"{article(t.REGION.what)} {t.REGION.what} like {t.REGION.example} ({n})" for n, t in targets
                ),
                40,
            )
        ),
    ]
    nouns = " or ".join(t.NOUN for t in parts.values())
    fields: dict[str, Any] = {
        "name": (ClusterName, Field(description=f"Cluster name: the {nouns} cluster and its bundle's name.")),
        "target": (Literal[tuple(parts)], ...),
        "region": (
            region,
            Field(description=" or ".join(f"{t.REGION.what} ({n})" for n, t in targets) + " of the cluster."),
        ),
        **{key: field for t in parts.values() for key, field in t.FIELDS.items()},
    }
    cluster = create_model(
        "FleetCluster",
        __base__=FleetCluster,
        __doc__=None,
        __validators__={"_target_fields": model_validator(mode="after")(_cluster_rules(parts))},  # type: ignore[dict-item]
        **fields,
    )
    views: dict[str, Any] = {key: field for t in parts.values() for key, field in t.VIEWS.items()}
    view_model = create_model("FleetViews", __base__=FleetViews, __doc__=FleetViews.__doc__, **views)
    synced = [n for n, t in targets if t.NEEDS_GITOPS]
    sections = _either([f"`{n}:`" for n in parts], both=True)
    needs = " or ".join(f"{article(n)} {n}" for n in synced)
    spec = create_model(
        "FleetSpec",
        __base__=FleetSpec,
        __doc__=None,
        __validators__={"_fleet_rules": model_validator(mode="after")(_spec_rules(parts))},  # type: ignore[dict-item]
        gitops=(FleetGitOps | None, Field(None, description=f"Required when the fleet has {needs} cluster.")),
        defaults=(
            dict[str, Any],
            Field(default_factory=dict, description=f"Profile keys shared by every cluster ({sections} may appear)."),
        ),
        clusters=(tuple[cluster, ...], Field(min_length=1)),
        views=(view_model, Field(default_factory=view_model, description="Fleet-wide dashboards.")),
    )
    return FleetModel(spec, cluster)


def _cluster_rules(parts: Mapping[str, FleetTarget]) -> Callable[[FleetCluster], FleetCluster]:
    def rules(self: FleetCluster) -> FleetCluster:
        problems = parts[self.target].cluster_problems(self)
        said, what = {p.path for p in problems}, f"{article(self.target)} {self.target} cluster"
        # Another target's key given on this cluster: nothing of this target reads it.
        for name, other in parts.items():
            for key, (_, info) in other.FIELDS.items() if name != self.target else ():
                alias = info.alias or to_camel(key)
                if getattr(self, key) is not None and (alias,) not in said:
                    problems.append(ProblemAt((alias,), f"expected no {alias} on {what}, got one"))
        raise_all(problems)
        return self

    return rules


def _spec_rules(parts: Mapping[str, FleetTarget]) -> Callable[[FleetSpec], FleetSpec]:
    def rules(self: FleetSpec) -> FleetSpec:
        problems = [
            ProblemAt(("clusters", i, "name"), f"expected each cluster name once, got {name!r}")
            for i, name in repeats(c.name for c in self.clusters)
        ]
        synced = sorted({c.target for c in self.clusters if parts[c.target].NEEDS_GITOPS}, key=list(parts).index)
        if self.gitops is None and synced:
            message = f"the fleet has {_either(synced)} clusters, so expected a `gitops:` section, got nothing"
            problems.append(ProblemAt(("kind",), message))
        for t in parts.values():
            problems += t.spec_problems(self)
        raise_all(problems)
        return self

    return rules
