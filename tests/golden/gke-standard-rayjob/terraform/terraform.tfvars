# Values of profile rl-rayjob for main.tf (terraform init && terraform apply).
project_id   = "rl-obs-dev"
location     = "us-central1-a"
cluster_name = "rl-standard"
namespace    = "ray"
services     = ["cloudtrace.googleapis.com", "container.googleapis.com", "monitoring.googleapis.com", "telemetry.googleapis.com"]
writer_roles = ["roles/cloudtrace.agent", "roles/monitoring.metricWriter", "roles/telemetry.metricsWriter", "roles/telemetry.tracesWriter"]
