"""rlobs: observability bundles for RL and AI training workloads on Kubernetes."""

from __future__ import annotations

__version__ = "0.1.0"
