"""The labels every Kubernetes object of a bundle carries, so `kubectl get -l rlobs.io/bundle=<name>` finds them all."""

from __future__ import annotations

from typing import Any

PART_OF = {"app.kubernetes.io/part-of": "rlobs"}
BUNDLE_LABEL = "rlobs.io/bundle"


def bundle_labels(name: str) -> dict[str, str]:
    """part-of rlobs, and which bundle (the profile's metadata.name, a DNS label, so a valid label value)."""
    return {**PART_OF, BUNDLE_LABEL: name}


def bundle_metadata(name: str, namespace: str, bundle: str) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "labels": bundle_labels(bundle)}
