"""Kubernetes CRDs as JSON Schema (draft 2020-12) validators, strict about unknown fields.

openAPIV3Schema is close to JSON Schema; the differences handled here:
- x-kubernetes-int-or-string: an integer or a string;
- x-kubernetes-preserve-unknown-fields: the object keeps any field (no additionalProperties: false);
- nullable: null is allowed besides the type;
- an object that lists properties rejects any other field (the API server prunes unknown fields silently, which
  hides typos; here they FAIL), unless it preserves unknown fields or says what its additionalProperties are;
- the other x-kubernetes-* extensions (list types, validations) only constrain the server; they are dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def convert(node: Any) -> Any:
    """One openAPIV3Schema node (and everything below it) as JSON Schema."""
    if isinstance(node, list):
        return [convert(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key == "nullable":
            continue
        if key in ("properties", "patternProperties"):
            out[key] = {name: convert(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = convert(value)
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        # CRDs often spell out the anyOf alongside the extension; keep theirs, else add it.
        out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    preserve = node.get("x-kubernetes-preserve-unknown-fields", False)
    if "properties" in out and not preserve and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


class _CrdLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml (these CRDs are up to 450 KB), reading a bare `=` (an enum value of matchType in the
    AlertmanagerConfig CRD) as the string Kubernetes reads, not as YAML 1.1's `value` tag."""


_CrdLoader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


def read_crd(path: Path) -> dict[str, Any]:
    """The CustomResourceDefinition a CRD file holds, as written."""
    docs = yaml.load_all(path.read_text(encoding="utf-8"), Loader=_CrdLoader)
    found: dict[str, Any] = next(d for d in docs if d and d.get("kind") == "CustomResourceDefinition")
    return found


def crd_schema(path: Path, version: str | None = None) -> dict[str, Any]:
    """The JSON Schema of a CRD file's `version` (default: the storage version)."""
    versions = read_crd(path)["spec"]["versions"]
    chosen = next(v for v in versions if (v["name"] == version if version else v.get("storage")))
    schema = convert(chosen["schema"]["openAPIV3Schema"])
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def errors(schema: dict[str, Any], obj: Any) -> list[str]:
    """Every validation error as `path: message` (empty when valid)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    found = sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
    return [f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in found]
