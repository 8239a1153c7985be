# The project set-up of profile rl-gke as Terraform, for projects managed with Terraform
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

# The cluster exists already and is not managed here. If your Terraform manages it, add to its
# google_container_cluster resource (provider google-beta 7.17.0 or later, GKE 1.34.1-gke.2178000 or later):
#
#   managed_opentelemetry_config {
#     scope = "COLLECTION_AND_INSTRUMENTATION_COMPONENTS"
#   }
#
# or run scripts/02-enable-managed-otel.sh once.

data "google_project" "this" {
  provider   = google-beta
  project_id = var.project_id
}

locals {
  # Workload Identity principal of one Kubernetes ServiceAccount.
  writer_member = "principal://iam.googleapis.com/projects/${data.google_project.this.number}/locations/global/workloadIdentityPools/${var.project_id}.svc.id.goog/subject/ns/${var.namespace}/sa/${var.kubernetes_service_account}"
}

resource "google_project_iam_member" "writer" {
  provider = google-beta
  for_each = toset(var.writer_roles)
  project  = var.project_id
  role     = each.value
  member   = local.writer_member
}

resource "google_monitoring_dashboard" "rl" {
  provider       = google-beta
  for_each       = fileset("${path.module}/../monitoring/dashboards", "*.json")
  project        = var.project_id
  dashboard_json = file("${path.module}/../monitoring/dashboards/${each.value}")
  depends_on     = [google_project_service.apis]
}
