# The project set-up of profile rl-autopilot as Terraform, for projects managed with Terraform
# instead of the scripts under scripts/ (use one or the other). Values come from terraform.tfvars.
# Alert policies are not here: google_monitoring_alert_policy takes HCL blocks, not the policy JSON, so
# scripts/04-deploy-monitoring.sh deploys monitoring/alert-policies/*.json.

terraform {
  required_version = "~> 1.3"
  required_providers {
    # managed_opentelemetry_config is on the google-beta provider from 7.17.0; ~> stays on major 7.
    google-beta = {
      source  = "hashicorp/google-beta"
      version = "~> 7.17"
    }
  }
}

provider "google-beta" {
  project = var.project_id
}

resource "google_project_service" "apis" {
  provider           = google-beta
  for_each           = toset(var.services)
  project            = var.project_id
  service            = each.value
  disable_on_destroy = false
}

resource "google_container_cluster" "rl" {
  provider = google-beta
  project  = var.project_id
  name     = var.cluster_name
  location = var.location

  enable_autopilot = true

  # Managed OpenTelemetry for GKE needs GKE 1.34.1-gke.2178000 or later.
  managed_opentelemetry_config {
    scope = "COLLECTION_AND_INSTRUMENTATION_COMPONENTS"
  }

  depends_on = [google_project_service.apis]
}

locals {
  writer_member = "serviceAccount:${var.gcp_service_account}"
}

resource "google_project_iam_member" "writer" {
  provider = google-beta
  for_each = toset(var.writer_roles)
  project  = var.project_id
  role     = each.value
  member   = local.writer_member
}

# Lets the Kubernetes ServiceAccount act as the Google service account (annotate the KSA with
# iam.gke.io/gcp-service-account, as scripts/03-grant-iam.sh does).
resource "google_service_account_iam_member" "workload_identity" {
  provider           = google-beta
  service_account_id = "projects/-/serviceAccounts/${var.gcp_service_account}"
  role               = "roles/iam.workloadIdentityUser"
  member             = "serviceAccount:${var.project_id}.svc.id.goog[${var.namespace}/${var.kubernetes_service_account}]"
}

resource "google_monitoring_dashboard" "rl" {
  provider       = google-beta
  for_each       = fileset("${path.module}/../monitoring/dashboards", "*.json")
  project        = var.project_id
  dashboard_json = file("${path.module}/../monitoring/dashboards/${each.value}")
  depends_on     = [google_project_service.apis]
}
