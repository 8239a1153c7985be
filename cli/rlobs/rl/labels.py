"""The labels every Kubernetes object of a bundle carries, so `kubectl get -l rlobs.io/bundle=<name>` finds them all."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PART_OF = {"app.kubernetes.io/part-of": "rlobs"}
BUNDLE_LABEL = "rlobs.io/bundle"


def bundle_labels(name: str) -> dict[str, str]:
    """part-of rlobs, and which bundle (the profile's metadata.name, a DNS label, so a valid label value)."""
    return {**PART_OF, BUNDLE_LABEL: name}


def bundle_metadata(
    name: str, namespace: str, bundle: str, *, selected_by: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """`selected_by`: the label a controller finds the object by (Grafana's dashboard sidecar), before the bundle's."""
    return {"name": name, "namespace": namespace, "labels": {**(selected_by or {}), **bundle_labels(bundle)}}
