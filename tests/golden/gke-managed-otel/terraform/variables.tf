# Inputs of main.tf; terraform.tfvars (rendered by rlobs from profile rl-gke) sets each one.

variable "project_id" {
  description = "GCP project ID."
  type        = string
}

variable "namespace" {
  description = "Kubernetes namespace of the RL workload."
  type        = string
}

variable "kubernetes_service_account" {
  description = "Kubernetes ServiceAccount of the workload."
  type        = string
}

variable "services" {
  description = "Google Cloud APIs to enable."
  type        = list(string)
}

variable "writer_roles" {
  description = "Roles the workload's identity gets to write metrics, traces (and logs)."
  type        = list(string)
}
