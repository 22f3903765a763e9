# reference-k8s-platform-app, root 1 of 2: the network a platform team owns.
# Written for gauntlet. Its state lives in the cluster (kubernetes backend,
# namespace state-network); app reads its outputs from there.

terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "3.2.1"
    }
  }
  backend "kubernetes" {
    secret_suffix = "network"
    namespace     = "state-network"
  }
}

provider "kubernetes" {}

resource "kubernetes_namespace_v1" "network" {
  metadata {
    name   = "platform-network"
    labels = { "platform.gauntlet/tier" = "network" }
  }
}

# Only the gateway takes traffic, and only from the app namespace.
resource "kubernetes_network_policy_v1" "gateway" {
  metadata {
    name      = "gateway-ingress"
    namespace = kubernetes_namespace_v1.network.metadata[0].name
  }
  spec {
    pod_selector {
      match_labels = { app = "gateway" }
    }
    ingress {
      from {
        namespace_selector {
          match_labels = { "platform.gauntlet/tier" = "app" }
        }
      }
      ports {
        port     = "8080"
        protocol = "TCP"
      }
    }
    policy_types = ["Ingress"]
  }
}

resource "kubernetes_service_v1" "gateway" {
  metadata {
    name      = "gateway"
    namespace = kubernetes_namespace_v1.network.metadata[0].name
  }
  spec {
    selector = { app = "gateway" }
    port {
      name        = "http"
      port        = 8080
      target_port = 8080
    }
  }
}

resource "kubernetes_config_map_v1" "routes" {
  metadata {
    name      = "gateway-routes"
    namespace = kubernetes_namespace_v1.network.metadata[0].name
  }
  data = {
    "routes.yaml" = "- prefix: /app\n  upstream: app.platform-app.svc:80\n"
  }
}

resource "kubernetes_config_map_v1" "limits" {
  metadata {
    name      = "gateway-limits"
    namespace = kubernetes_namespace_v1.network.metadata[0].name
  }
  data = {
    requests_per_second = "200"
    burst               = "50"
  }
}

output "gateway_host" {
  description = "The gateway's in-cluster host name."
  value       = "${kubernetes_service_v1.gateway.metadata[0].name}.${kubernetes_namespace_v1.network.metadata[0].name}.svc"
}

output "gateway_port" {
  description = "The gateway's port."
  value       = kubernetes_service_v1.gateway.spec[0].port[0].port
}
