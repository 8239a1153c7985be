# Inputs of main.tf; terraform.tfvars (rendered by rlobs from profile rl-autopilot) sets each one.

variable "project_id" {
  description = "GCP project ID."
  type        = string
}

variable "location" {
  description = "Region or zone of the GKE cluster."
  type        = string
}

variable "cluster_name" {
  description = "Name of the GKE cluster."
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

variable "gcp_service_account" {
  description = "Google service account the workload acts as."
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
