# reference-k8s-platform-app, root 2 of 2: an application team's estate.
# Written for gauntlet. Its state lives in the cluster (kubernetes backend,
# namespace state-app); it reads network's outputs from network's state and
# puts one object, the hand-off ConfigMap, in network's namespace.

terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "3.2.1"
    }
  }
  backend "kubernetes" {
    secret_suffix = "app"
    namespace     = "state-app"
  }
}

provider "kubernetes" {}

data "terraform_remote_state" "network" {
  backend = "kubernetes"
  config = {
    secret_suffix = "network"
    namespace     = "state-network"
  }
}

locals {
  gateway = "${data.terraform_remote_state.network.outputs.gateway_host}:${data.terraform_remote_state.network.outputs.gateway_port}"
}

resource "kubernetes_namespace" "app" {
  metadata {
    name   = "platform-app"
    labels = { "platform.gauntlet/tier" = "app" }
  }
}

resource "kubernetes_config_map_v1" "settings" {
  metadata {
    name      = "app-settings"
    namespace = kubernetes_namespace.app.metadata[0].name
  }
  data = {
    gateway   = local.gateway
    log_level = "info"
  }
}

resource "kubernetes_config_map_v1" "features" {
  metadata {
    name      = "app-features"
    namespace = kubernetes_namespace.app.metadata[0].name
  }
  data = {
    checkout = "on"
    search   = "off"
  }
}

resource "kubernetes_config_map" "release" {
  metadata {
    name      = "app-release"
    namespace = kubernetes_namespace.app.metadata[0].name
  }
  data = {
    version = "1.4.2"
  }
}

resource "kubernetes_service_account" "app" {
  metadata {
    name      = "app"
    namespace = kubernetes_namespace.app.metadata[0].name
  }
}

resource "kubernetes_service_v1" "app" {
  metadata {
    name      = "app"
    namespace = kubernetes_namespace.app.metadata[0].name
  }
  spec {
    selector = { app = "app" }
    port {
      port        = 80
      target_port = 8080
    }
  }
}

resource "kubernetes_deployment_v1" "app" {
  metadata {
    name      = "app"
    namespace = kubernetes_namespace.app.metadata[0].name
  }
  spec {
    replicas = 2
    selector {
      match_labels = { app = "app" }
    }
    template {
      metadata {
        labels = { app = "app" }
      }
      spec {
        service_account_name = kubernetes_service_account.app.metadata[0].name
        container {
          name  = "app"
          image = "gauntlet.invalid/app:1.4.2"
          env {
            name  = "GATEWAY_HOST"
            value = local.gateway
          }
          port {
            container_port = 8080
          }
          resources {
            requests = { cpu = "100m", memory = "64Mi" }
          }
        }
      }
    }
  }
}

resource "kubernetes_horizontal_pod_autoscaler_v2" "app" {
  metadata {
    name      = "app"
    namespace = kubernetes_namespace.app.metadata[0].name
  }
  spec {
    min_replicas = 2
    max_replicas = 6
    scale_target_ref {
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = kubernetes_deployment_v1.app.metadata[0].name
    }
    metric {
      type = "Resource"
      resource {
        name = "cpu"
        target {
          type                = "Utilization"
          average_utilization = 70
        }
      }
    }
  }
}

# The hand-off object: app creates it in network's namespace; the pair's
# hand-off stage moves it to network without the live object changing.
resource "kubernetes_manifest" "handoff" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name      = "app-upstream"
      namespace = "platform-network"
    }
    data = {
      upstream = "app.platform-app.svc:80"
    }
  }
}
