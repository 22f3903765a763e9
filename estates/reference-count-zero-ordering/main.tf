# reference-count-zero-ordering: an ordering carried only through a
# resource with no instances. Written for gauntlet (terraform#33370, fixed
# in terraform 1.6.0 by PR 33403: with count = 0 in the middle of a
# depends_on chain, terraform 1.5 lost the edge, so tenant was created as
# soon as the apply began).
#
# tenant (a ServiceAccount) lives in the namespace order-c, named here as
# text: only the chain tenant -> gate (count = 0) -> order-c orders them.
# order-c is itself three creates deep, so an engine that drops the edge
# creates tenant first and the API server refuses it (namespaces "order-c"
# not found). tenant is last in state on purpose: cold deploy's BREAKs
# delete the last object, and a Namespace's deletion would take tenant
# with it, which no undo restores (issue 45: victims whose undo can fail).

terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "3.2.1"
    }
  }
}

provider "kubernetes" {}

resource "kubernetes_namespace_v1" "a" {
  metadata {
    name   = "order-a"
    labels = { "order.gauntlet/step" = "a" }
  }
}

resource "kubernetes_namespace_v1" "b" {
  metadata {
    name   = "order-b"
    labels = { "order.gauntlet/step" = "b" }
  }
  depends_on = [kubernetes_namespace_v1.a]
}

resource "kubernetes_namespace_v1" "c" {
  metadata {
    name   = "order-c"
    labels = { "order.gauntlet/step" = "c" }
  }
  depends_on = [kubernetes_namespace_v1.b]
}

# A neighbour in the first namespace, ordered by its reference.
resource "kubernetes_config_map_v1" "roster" {
  metadata {
    name      = "roster"
    namespace = kubernetes_namespace_v1.a.metadata[0].name
    labels    = { "order.gauntlet/step" = "roster" }
  }
  data = {
    steps = "a,b,c"
  }
}

# No instance: only an edge.
resource "kubernetes_config_map_v1" "gate" {
  count = 0
  metadata {
    name      = "order-gate"
    namespace = "order-c"
  }
  depends_on = [kubernetes_namespace_v1.c]
}

resource "kubernetes_service_account_v1" "tenant" {
  metadata {
    name      = "tenant"
    namespace = "order-c"
    labels    = { "order.gauntlet/step" = "tenant" }
  }
  depends_on = [kubernetes_config_map_v1.gate]
}
