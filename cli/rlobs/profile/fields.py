"""Validated scalar types shared by the profile model; each rule says what it expects, as users read it."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field
from pydantic import BaseModel as _BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

import rlobs.profile.noplugins  # noqa: F401 (before pydantic builds a model)
from rlobs.profile.checks import DURATION, duration, matching, not_a_number, to_camel, with_json_pattern


class Model(_BaseModel):
    """Base of every profile object: camelCase keys, unknown keys rejected, no coercion, frozen."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=False,
        extra="forbid",
        frozen=True,
        strict=True,
        validate_default=False,
        allow_inf_nan=False,  # a threshold of nan or inf is never meant
    )


class ProfileJsonSchema(GenerateJsonSchema):
    """The profile's JSON Schema with the patterns and lengths the validators enforce (one source for both)."""

    def function_after_schema(self, schema: core_schema.AfterValidatorFunctionSchema) -> JsonSchemaValue:
        out = super().function_after_schema(schema)
        check = schema["function"]["function"]
        pattern = getattr(check, "json_pattern", None)
        max_length = getattr(check, "json_max_length", None)
        if pattern is not None:
            out = {**out, "pattern": pattern}
        if max_length is not None:
            out["maxLength"] = max_length
        return out


# Kubernetes object names and namespaces: RFC 1123 labels
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names).
DnsLabel = Annotated[
    str,
    AfterValidator(
        matching(
            r"[a-z0-9]([-a-z0-9]*[a-z0-9])?",
            "a Kubernetes name (RFC 1123 label: at most 63 lowercase letters, digits and '-', "
            "starting and ending with a letter or digit) like rl-trainer",
            63,
        )
    ),
]

Duration = Annotated[
    str,
    BeforeValidator(not_a_number),
    AfterValidator(with_json_pattern(duration, DURATION, expected="a duration like 30s, 15m, 6h or 1d")),
]

NonEmpty = Annotated[str, Field(min_length=1, max_length=255)]

# Attribute values the instrumentation sends on every data point; keep them short and printable.
AttrValue = Annotated[
    str,
    AfterValidator(
        matching(
            r"[A-Za-z0-9][A-Za-z0-9._:/+@-]*",
            "a short identifier (letters, digits and . _ : / + @ -) like grpo or Qwen2.5-7B",
            128,
        )
    ),
]

Fraction = Annotated[float, Field(gt=0, le=1)]
Positive = Annotated[float, Field(gt=0)]
