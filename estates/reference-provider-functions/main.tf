# reference-provider-functions: provider-defined functions where they are
# easy to lose - inside parentheses, in a dynamic block's for_each, in an
# output. Written for gauntlet (opentofu#3401, opentofu#3236: tofu 1.7 to
# 1.10.6 finds no functions in the provider's namespace when the call sits
# inside parentheses, so the plan errors).

terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "3.2.1"
    }
  }
}

provider "kubernetes" {}

locals {
  settings_yaml = <<-EOT
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: fn-settings
    data:
      mode: fast
      tier: gold
  EOT

  gateway_yaml = <<-EOT
    apiVersion: v1
    kind: Service
    metadata:
      name: fn-gateway
    spec:
      ports:
        - name: http
          port: 80
          targetPort: 8080
        - name: metrics
          port: 9090
          targetPort: 9090
  EOT

  # The call in parentheses: the shape opentofu#3401 lost.
  settings = (provider::kubernetes::manifest_decode(local.settings_yaml))
}

resource "kubernetes_namespace_v1" "fn" {
  metadata {
    name   = "gauntlet-fn"
    labels = { "fn.gauntlet/role" = "home" }
  }
}

resource "kubernetes_config_map_v1" "settings" {
  metadata {
    name      = local.settings.metadata.name
    namespace = kubernetes_namespace_v1.fn.metadata[0].name
    labels    = { "fn.gauntlet/role" = "settings" }
  }
  data = local.settings.data
}

# A manifest kept as text, encoded by the provider.
resource "kubernetes_config_map_v1" "encoded" {
  metadata {
    name      = "fn-encoded"
    namespace = kubernetes_namespace_v1.fn.metadata[0].name
    labels    = { "fn.gauntlet/role" = "encoded" }
  }
  data = {
    "settings.yaml" = (provider::kubernetes::manifest_encode(local.settings))
  }
}

# The ports come from a decoded manifest through a dynamic block's for_each
# (opentofu#3236).
resource "kubernetes_service_v1" "gateway" {
  metadata {
    name      = "fn-gateway"
    namespace = kubernetes_namespace_v1.fn.metadata[0].name
    labels    = { "fn.gauntlet/role" = "gateway" }
  }
  spec {
    selector = { app = "gateway" }
    dynamic "port" {
      for_each = provider::kubernetes::manifest_decode(local.gateway_yaml).spec.ports
      content {
        name        = port.value.name
        port        = port.value.port
        target_port = tostring(port.value.targetPort)
      }
    }
  }
}

output "mode" {
  value = (provider::kubernetes::manifest_decode(local.settings_yaml)).data.mode
}
