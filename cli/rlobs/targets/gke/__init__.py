"""The gke target: GKE with Managed OpenTelemetry and Cloud Monitoring (its Target: target.py)."""
