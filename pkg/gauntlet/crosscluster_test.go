package gauntlet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// clusterWrittenRoot is a root written for this test whose objects differ
// between two clusters by construction: a token Secret the token
// controller fills (token, ca.crt, namespace), a ConfigMap named by
// generate_name, and a Secret holding a random_password.
const clusterWrittenRoot = `
resource "kubernetes_service_account_v1" "sa" {
  metadata {
    name      = "fields-sa"
    namespace = "default"
  }
}

resource "kubernetes_secret_v1" "token" {
  metadata {
    name      = "fields-sa-token"
    namespace = "default"
    annotations = {
      "kubernetes.io/service-account.name" = kubernetes_service_account_v1.sa.metadata[0].name
    }
  }
  type = "kubernetes.io/service-account-token"
}

resource "kubernetes_config_map_v1" "generated" {
  metadata {
    generate_name = "fields-gen-"
    namespace     = "default"
    labels        = { app = "fields" }
  }
  data = { mode = "probe" }
}

resource "random_password" "db" {
  length  = 24
  special = false
}

resource "kubernetes_secret_v1" "db" {
  metadata {
    name      = "fields-db"
    namespace = "default"
  }
  data = {
    password = random_password.db.result
    url      = "postgres://app:${random_password.db.result}@db:5432/app"
  }
}
`

// TestClusterWrittenFieldsPassColdDeploy runs cold_deploy alone on the
// local substrate (whose kube-controller-manager runs the token
// controller) over clusterWrittenRoot: "both clusters hold the same
// objects" and "every state object is live" must pass, pairing objects by
// state address and leaving to each side what its cluster or its random
// provider wrote. Before the pairing and the field table it failed: the
// oracle was asked for the subject's generated ConfigMap name, and the
// token Secret's data and the password differed between clusters.
func TestClusterWrittenFieldsPassColdDeploy(t *testing.T) {
	res := runWrittenRoot(t, "cluster-written-fields", "Objects the cluster and a provider write", clusterWrittenRoot, "cold_deploy")
	for _, st := range res.Stages {
		if st.ID != "cold_deploy" {
			continue
		}
		detail := stageLines(st)
		if st.Verdict != result.Pass {
			t.Fatalf("cold_deploy: %s %s\n%s", st.Verdict, st.Reason, strings.Join(detail, "\n"))
		}
		t.Logf("cold_deploy passed:\n%s", strings.Join(detail, "\n"))
		return
	}
	t.Fatal("no cold_deploy stage in the result")
}

// runWrittenRoot writes root as main.tf of an estate named name (in the
// default namespace) and runs the given stages, and what they depend on,
// on the local substrate: for roots written for a test.
func runWrittenRoot(t *testing.T, name, title, root string, stages ...string) *result.Run {
	t.Helper()
	testenv.Toolchain(t) // fail early, naming the command, if the toolchain is missing
	dir := t.TempDir()
	est := filepath.Join(dir, name)
	yaml := "apiVersion: gauntlet/v1\nname: " + name + "\ntitle: " + title + "\nfiles: [main.tf]\nnamespace: default\nwrites_into: [default]\n"
	if err := os.MkdirAll(est, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, body := range map[string]string{"estate.yaml": yaml, "main.tf": root} {
		if err := os.WriteFile(filepath.Join(est, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := estate.Load(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := gauntlet.Run(ctx, s, gauntlet.WithOffline(true), gauntlet.WithSubstrate("local"), gauntlet.WithStages(stages...),
		gauntlet.WithWorkDir(t.TempDir()), gauntlet.WithStateDir(t.TempDir()), gauntlet.WithLogger(testenv.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// stageLines is a stage's checks (with their findings) and BREAKs, a line
// each, for a failure message.
func stageLines(st result.Stage) []string {
	var lines []string
	for _, c := range st.Checks {
		lines = append(lines, c.Name+": "+string(c.Verdict)+" "+c.Detail)
		for _, f := range c.Findings {
			lines = append(lines, "  finding: "+f.Error())
		}
	}
	for _, b := range st.Breaks {
		lines = append(lines, "BREAK "+b.Name+" ("+b.Side+"): "+string(b.Outcome)+" "+b.Detail)
	}
	return lines
}
