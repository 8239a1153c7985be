"""Regions are checked against the pinned list of real AWS regions (cli/rlobs/data/aws_regions.json, built by
tools/aws_regions.py from botocore's partitions.json kept beside the tests): a region that does not exist is one
located line with a did-you-mean, a real one loads unchanged."""

from __future__ import annotations

import importlib.util
import json

import pytest

from rlobs.errors import ProfileError
from rlobs.resources import read_text
from rlobs.targets import parse_profile
from rlobs.targets.eks.profile import EksProfile
from testing.helpers import REPO, all_profiles

SOURCE = REPO / "tests/upstream/botocore/partitions.json"


def test_the_packaged_list_is_built_from_its_pinned_source() -> None:
    spec = importlib.util.spec_from_file_location("aws_regions", REPO / "tools" / "aws_regions.py")
    assert spec and spec.loader
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
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
