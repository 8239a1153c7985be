"""Regions are checked against pinned lists of real ones: AWS regions (cli/rlobs/data/aws_regions.json, built by
tools/aws_regions.py from botocore's partitions.json kept beside the tests) and GCP regions with their zones
(cli/rlobs/data/gcp_locations.json, built by tools/gcp_locations.py from the two lists in tests/upstream/gcp): a
location that does not exist is one located line with a did-you-mean, a real one loads unchanged."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from rlobs.errors import ProfileError
from rlobs.fleet.commands import parse_fleet
from rlobs.resources import read_text
from rlobs.targets import parse_profile
from rlobs.targets.eks.profile import EksProfile
from rlobs.targets.gke.profile import GkeProfile
from testing.fleet import example, example_text
from testing.helpers import REPO, all_profiles

SOURCE = REPO / "tests/upstream/botocore/partitions.json"
GCP = REPO / "tests/upstream/gcp"


def _tool(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    assert spec and spec.loader
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_the_packaged_list_is_built_from_its_pinned_source() -> None:
    tool = _tool("aws_regions")
    packaged = json.loads(read_text("data", "aws_regions.json"))
    assert tool.build(json.loads(SOURCE.read_text(encoding="utf-8"))) == packaged
    assert packaged["source"]["distribution"] == f"botocore {tool.VERSION}"
    assert tool.VERSION in (SOURCE.parent / "README.md").read_text(encoding="utf-8")


def _eks(region: str) -> str:
    return all_profiles()["eks-jark"].replace("region: us-west-2", f"region: {region}", 1)


@pytest.mark.parametrize(
    ("region", "hint"), [("us-west-9", "did you mean us-west-2?"), ("eu-centrall-1", "did you mean eu-central-1?")]
)
def test_a_region_that_does_not_exist_is_one_line_with_a_did_you_mean(region: str, hint: str) -> None:
    with pytest.raises(ProfileError) as err:
        parse_profile(_eks(region), "p.yaml")
    (line,) = err.value.lines()
    assert line.startswith("p.yaml:")
    assert f"eks.cluster.region: expected an AWS region like us-west-2, got {region!r}" in line
    assert hint in line and "botocore 1.43.11" in line


@pytest.mark.parametrize("region", ["us-west-2", "us-east-1", "mx-central-1", "us-gov-west-1", "cn-north-1"])
def test_a_real_region_loads_unchanged(region: str) -> None:
    profile = parse_profile(_eks(region))
    assert isinstance(profile, EksProfile) and profile.eks.cluster.region == region


def test_the_packaged_gcp_list_is_built_from_its_pinned_sources() -> None:
    tool = _tool("gcp_locations")
    gcping = json.loads((GCP / "gcping-regions.json").read_text(encoding="utf-8"))
    packaged = json.loads(read_text("data", "gcp_locations.json"))
    assert tool.build(gcping, (GCP / "skypilot-vms-e2-standard-8.csv").read_text(encoding="utf-8")) == packaged
    readme = (GCP / "README.md").read_text(encoding="utf-8")
    assert tool.GCPING in readme and tool.SKYPILOT in readme
    # Every region gcping lists is in, with the zones only the catalog names (Bangkok is too new for it).
    assert set(gcping) <= set(packaged["regions"]) and packaged["regions"]["asia-southeast3"] == []
    assert packaged["regions"]["us-central1"] == ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"]


def _gke(location: str) -> str:
    return all_profiles()["gke-managed-otel"].replace("location: us-central1", f"location: {location}", 1)


@pytest.mark.parametrize(
    ("location", "hint"),
    [
        ("europe-west99", "did you mean europe-west9?"),
        ("uscentral1", "did you mean us-central1?"),
        ("us-central1-z", "did you mean us-central1-f?"),  # one of us-central1's zones, not another region's
        ("europe-west1-a", "did you mean europe-west1-d?"),  # europe-west1 has b, c and d
        ("asia-southeast3-a", "did you mean asia-southeast3?"),  # no source lists Bangkok's zones: its region
    ],
)
def test_a_gcp_location_that_does_not_exist_is_one_line_with_a_did_you_mean(location: str, hint: str) -> None:
    with pytest.raises(ProfileError) as err:
        parse_profile(_gke(location), "p.yaml")
    (line,) = err.value.lines()
    assert line.startswith("p.yaml:")
    expected = "gke.location: expected a GCP region or zone like us-central1 or us-central1-a"
    assert f"{expected}, got {location!r}: {hint} (the regions and zones gcping 85ed7a9 + skypilot-catalog" in line


@pytest.mark.parametrize(
    "location", ["us-central1", "us-central1-f", "europe-west1-d", "africa-south1-a", "northamerica-south1-c"]
)
def test_a_real_gcp_location_loads_unchanged(location: str) -> None:
    profile = parse_profile(_gke(location))
    assert isinstance(profile, GkeProfile) and profile.gke.location == location


def test_every_blueprint_and_the_example_fleet_name_real_locations() -> None:
    for name, text in all_profiles().items():
        parse_profile(text, f"{name}.yaml")
    assert len(example().members) == 5


def test_a_fleet_clusters_gcp_region_is_checked_against_the_list_at_its_line() -> None:
    text = example_text().replace("region: us-central1", "region: europe-west99", 1)
    with pytest.raises(ProfileError) as err:
        parse_fleet(text, "fleet.yaml")
    (line,) = err.value.lines()
    number = text.splitlines().index("    region: europe-west99") + 1
    assert line.startswith(f"fleet.yaml:{number}:") and "did you mean europe-west9?" in line, line
