"""The JSON Schema `rlobs schema` prints (and `init` writes) accepts every shipped profile and rejects typos."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from rlobs.commands import schema_text
from testing.helpers import all_profiles


def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("name", sorted(all_profiles()))
def test_shipped_profiles_satisfy_the_schema(name: str) -> None:
    errors = sorted(_validator().iter_errors(yaml.safe_load(all_profiles()[name])), key=str)
    assert not errors, "\n".join(e.message for e in errors)


def test_schema_rejects_unknown_keys() -> None:
    data = yaml.safe_load(all_profiles()["eks-jark"])
    data["workload"]["contianer"] = "x"
    assert any("contianer" in e.message for e in _validator().iter_errors(data))
