# Values of profile rl-autopilot for main.tf (terraform init && terraform apply).
project_id                 = "rl-obs-dev"
location                   = "europe-west4"
cluster_name               = "rl-autopilot"
namespace                  = "rl-train"
kubernetes_service_account = "rl-trainer"
gcp_service_account        = "rl-trainer@rl-obs-dev.iam.gserviceaccount.com"
services                   = ["cloudtrace.googleapis.com", "container.googleapis.com", "logging.googleapis.com", "monitoring.googleapis.com", "telemetry.googleapis.com"]
writer_roles               = ["roles/cloudtrace.agent", "roles/logging.logWriter", "roles/monitoring.metricWriter", "roles/telemetry.metricsWriter", "roles/telemetry.tracesWriter"]
