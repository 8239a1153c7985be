# blueprint.tfvars for awslabs/ai-on-eks infra/jark-stack, rendered by rlobs for rl-eks.
# Copy it over infra/jark-stack/terraform/blueprint.tfvars and run ./install.sh there (see README.md).
# Every variable below is declared by infra/base/terraform/variables.tf; rlobs checked names and types.
#
# enable_argocd is deliberately absent. enable_argocd is no longer declared by infra/base/terraform/variables.tf (removed in ai-on-eks PR #202); argocd.tf installs Argo CD unconditionally.
# The upstream blueprint and docs still set it; Terraform would only warn "Value for undeclared variable".

# EKS cluster and VPC name
name = "jark-stack"

region = "us-west-2"

eks_cluster_version = "1.35"

# as in the upstream jark-stack blueprint
enable_aws_efs_csi_driver = true

enable_jupyterhub = true

enable_argo_workflows = true

enable_argo_events = true

enable_kuberay_operator = true

# DCGM exporter in namespace monitoring
enable_nvidia_dcgm_exporter = true

# rlobs renders the DCGM ServiceMonitor (rl-layer/); a second one would scrape every GPU twice
nvidia_dcgm_exporter_service_monitor = false

# false: rlobs renders and pins the stack's ArgoCD Applications itself (eks.mode: rlobs)
enable_ai_ml_observability_stack = false

# never with the observability stack (two operators, same CRDs)
enable_kube_prometheus_stack = false

# ai-on-eks's default map (variables.tf @ c835f47a), except amazon-cloudwatch-observability = false (eks.cloudwatch)
enable_cluster_addons = {
  "amazon-cloudwatch-observability" = false
  "coredns"                         = true
  "eks-node-monitoring-agent"       = true
  "eks-pod-identity-agent"          = true
  "kube-proxy"                      = true
  "metrics-server"                  = true
  "vpc-cni"                         = true
}
