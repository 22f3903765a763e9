# reference-ephemeral-write-only: an ephemeral resource and a write-only
# attribute. Written for gauntlet (opentofu#3774, fixed in tofu 1.11.6 by
# PR 3776: from 1.11.0 to 1.11.5 `apply -refresh-only` failed on any root
# that declares an ephemeral resource, saying it planned changes).
#
# The ephemeral password is opened and closed at each plan and apply and
# never reaches the state, a plan file or the cluster: declaring it is the
# shape of the bug. The Secret's data is write-only (data_wo, sent on
# create and again when data_wo_revision is raised, never read back into
# the state), with a value fixed here rather than the ephemeral one: a
# random value would differ between the two clusters, and the stages
# compare the clusters' objects. The ConfigMap and the ServiceAccount are
# the neighbours the derived stages act on; the ServiceAccount is last in
# state, so cold deploy's BREAKs delete it, not the Secret (whose data no
# read copy holds).

terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "3.2.1"
    }
    random = {
      source  = "hashicorp/random"
      version = "3.9.0"
    }
  }
}

provider "kubernetes" {}

ephemeral "random_password" "db" {
  length  = 24
  special = false
}

resource "kubernetes_secret_v1" "db" {
  metadata {
    name      = "ephemeral-db"
    namespace = "default"
    labels    = { "app.gauntlet/part" = "db" }
  }
  data_wo = {
    # No word of any name here: every secret value is scrubbed from the
    # run's pages wherever it appears.
    mode = "wo-7f3a9c"
  }
  data_wo_revision = 1
}

resource "kubernetes_config_map_v1" "settings" {
  metadata {
    name      = "ephemeral-settings"
    namespace = "default"
    labels    = { "app.gauntlet/part" = "settings" }
  }
  data = {
    secret = kubernetes_secret_v1.db.metadata[0].name
  }
}

resource "kubernetes_service_account_v1" "app" {
  metadata {
    name      = "ephemeral-app"
    namespace = "default"
    labels    = { "app.gauntlet/part" = "app" }
  }
  depends_on = [kubernetes_config_map_v1.settings]
}
