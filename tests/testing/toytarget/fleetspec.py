"""The toy target's part of the fleet file: a cluster's rack, and its name and rack set in its effective profile."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from rlobs.errors import Problem
from rlobs.profile.fields import DnsLabel
from rlobs.profile.fleet import Member
from rlobs.profile.fleetspec import FleetCluster, FleetSpec, Layer, Region
from rlobs.profile.problems import ProblemAt
from rlobs.profile.yamlsource import Located, Path

NAME = "toy"
NOUN = "toy"
REGION = Region(r"toy-[0-9]", "toy region", "toy-1")
NEEDS_GITOPS = False
FIELDS: dict[str, tuple[Any, Any]] = {"rack": (DnsLabel | None, Field(None, description="toy: the cluster's rack."))}
VIEWS: dict[str, tuple[Any, Any]] = {}
FIXED: dict[Path, str] = {("toy", "cluster"): "the cluster's name", ("toy", "rack"): "the cluster's rack"}


def cluster_problems(cluster: FleetCluster) -> list[ProblemAt]:
    if getattr(cluster, "rack", None) is None:
        return [ProblemAt(("target",), "target is toy, so expected `rack:`, got none")]
    return []


def spec_problems(spec: FleetSpec) -> list[ProblemAt]:
    del spec
    return []


def layer(spec: FleetSpec, index: int, cluster: FleetCluster, raw: list[Any]) -> Layer:
    del spec, raw
    at: Path = ("clusters", index)
    return [
        (("toy", "cluster"), cluster.name, (*at, "name")),
        (("toy", "rack"), getattr(cluster, "rack", None), (*at, "rack")),
    ]


def fleet_problems(spec: FleetSpec, members: list[Member], located: Located, display: str) -> list[Problem]:
    del spec, members, located, display
    return []
