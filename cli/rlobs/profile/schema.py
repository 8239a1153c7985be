"""The profile validators' cross-field rules as JSON Schema for editors; tests/test_schema.py checks they agree."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

JsonSchema = dict[str, Any]


def key_is(key: str, value: object) -> JsonSchema:
    """`key` is given and equals `value` (an absent key takes its default, which no rule here is conditioned on)."""
    return {"required": [key], "properties": {key: {"const": value}}}


def absent_or_null(*keys: str) -> JsonSchema:
    return {"properties": {k: {"type": "null"} for k in keys}}


def given(*keys: str) -> JsonSchema:
    return {"required": list(keys), "properties": {k: {"not": {"type": "null"}} for k in keys}}


def pattern(regex: str) -> str:
    return f"^(?:{regex})$"


# model.Workload._replicated_jobs_for_jobsets and _run_id_for_wandb.
_WORKLOAD: list[JsonSchema] = [
    {
        "if": key_is("kind", "JobSet"),
        "then": {"required": ["replicatedJobs"], "properties": {"replicatedJobs": {"minItems": 1}}},
        "else": {"properties": {"replicatedJobs": {"maxItems": 0}}},
    },
    {
        "if": {"required": ["kind"], "properties": {"kind": {"enum": ["RayJob", "RayCluster", "RayService"]}}},
        "else": {"properties": {"workerGroups": {"maxItems": 0}}},
    },
    {
        "if": {"required": ["tracker"], "properties": {"tracker": key_is("kind", "wandb")}},
        "then": {"properties": {"run": {"properties": {"id": {"not": {"type": "string", "pattern": r"[/\\#?%:]"}}}}}},
    },
]

# model.Tracker._fields_for_kind.
_TRACKER: list[JsonSchema] = [
    {
        "if": key_is("kind", "wandb"),
        "then": {**given("entity", "project"), "allOf": [absent_or_null("experiment")]},
        "else": {**given("url", "experiment"), "allOf": [absent_or_null("entity", "project")]},
    }
]


def add_cross_field_rules(schema: JsonSchema, targets: Mapping[str, list[JsonSchema]]) -> JsonSchema:
    """Pydantic's `schema` with these rules and `targets`' ($defs name -> rules) added to each model's allOf."""
    rules: dict[str, list[JsonSchema]] = {"Workload": _WORKLOAD, "Tracker": _TRACKER, **targets}
    defs = schema["$defs"]
    for name, extra in rules.items():
        defs[name] = {**defs[name], "allOf": [*defs[name].get("allOf", []), *extra]}
    return schema


def document(schema: JsonSchema, name: str) -> str:
    draft = "https://json-schema.org/draft/2020-12/schema"
    full = {"$schema": draft, "$id": f"https://rlobs.dev/schema/rlobs.v1alpha1.{name}.json", **schema}
    return json.dumps(full, indent=2) + "\n"
