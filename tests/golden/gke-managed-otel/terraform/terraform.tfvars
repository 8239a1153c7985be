# Values of profile rl-gke for main.tf (terraform init && terraform apply).
project_id                 = "my-rl-project"
namespace                  = "rl"
kubernetes_service_account = "grpo-trainer"
services                   = ["cloudtrace.googleapis.com", "container.googleapis.com", "monitoring.googleapis.com", "telemetry.googleapis.com"]
writer_roles               = ["roles/cloudtrace.agent", "roles/monitoring.metricWriter", "roles/telemetry.metricsWriter", "roles/telemetry.tracesWriter"]
