package gauntlet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
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
	st := stageOf(t, res, "cold_deploy")
	if detail := stageLines(st); st.Verdict != result.Pass {
		t.Fatalf("cold_deploy: %s %s\n%s", st.Verdict, st.Reason, strings.Join(detail, "\n"))
	}
}

// runWrittenRoot writes root as main.tf of an estate named name (in the
// default namespace) and runs the given stages, and what they depend on,
// on the local substrate: for roots written for a test.
func runWrittenRoot(t *testing.T, name, title, root string, stages ...string) *result.Run {
	t.Helper()
	return runWrittenEstate(t, name, title, root, "", stages...)
}

// runWrittenEstate is runWrittenRoot with sections added to estate.yaml
// (a stage plan written by hand, say).
func runWrittenEstate(t *testing.T, name, title, root, sections string, stages ...string) *result.Run {
	t.Helper()
	return runWrittenEstateWith(t, name, title, root, sections, stages)
}

// runWrittenEstateWith is runWrittenEstate with the caller's options
// added.
func runWrittenEstateWith(t *testing.T, name, title, root, sections string, stages []string, opts ...gauntlet.Option) *result.Run {
	t.Helper()
	s := writtenSpec(t, name, title, root, sections)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	opts = append([]gauntlet.Option{gauntlet.WithOffline(true), gauntlet.WithSubstrate("local"), gauntlet.WithStages(stages...),
		gauntlet.WithWorkDir(t.TempDir()), gauntlet.WithStateDir(t.TempDir()), gauntlet.WithLogger(testenv.Logger(t))}, opts...)
	res, err := gauntlet.Run(ctx, s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// writtenSpec is the spec of an estate named name whose main.tf is root (in
// the default namespace), sections added to its estate.yaml.
func writtenSpec(t *testing.T, name, title, root, sections string) *estate.Spec {
	t.Helper()
	testenv.Toolchain(t) // fail early, naming the command, if the toolchain is missing
	dir := t.TempDir()
	est := filepath.Join(dir, name)
	yaml := "apiVersion: gauntlet/v1\nname: " + name + "\ntitle: " + title + "\nfiles: [main.tf]\nnamespace: default\nwrites_into: [default]\n"
	yaml += sections
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
	return s
}

// stageOf is the stage id of res, failing the test when it is missing.
func stageOf(t *testing.T, res *result.Run, id string) result.Stage {
	t.Helper()
	for _, st := range res.Stages {
		if st.ID == id {
			return st
		}
	}
	t.Fatalf("no %s stage in the result", id)
	return result.Stage{}
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

// freshNamesRoot is a root written for this test whose object names and
// annotations come from values each apply makes anew: a Secret named
// from a random_id, and a ConfigMap annotated with that Secret's
// resource_version (the usual way to roll pods when a config changes).
const freshNamesRoot = `
resource "random_id" "tail" {
  byte_length = 8
}

resource "kubernetes_secret_v1" "config" {
  metadata {
    name      = "fresh-config-${random_id.tail.hex}"
    namespace = "default"
  }
  data = { mode = "probe" }
}

resource "kubernetes_config_map_v1" "consumer" {
  metadata {
    name      = "fresh-consumer"
    namespace = "default"
    annotations = {
      config_version = kubernetes_secret_v1.config.metadata[0].resource_version
      config_name    = kubernetes_secret_v1.config.metadata[0].name
    }
  }
  data = { mode = "probe" }
}
`

// TestFreshApplyMatchesStockByAddress runs greenfield over freshNamesRoot:
// the fresh apply names its Secret from its own random_id and its
// ConfigMap carries its own Secret's resource version, so "matches
// stock's cold deploy object by object" must pair by state address and
// match each side's values with its own state. Before, it compared by
// name and failed: stock's Secret "absent" and both annotations differing.
func TestFreshApplyMatchesStockByAddress(t *testing.T) {
	testenv.SecondTier(t, "the first tier proves pairing by state address, provider-generated values matched per side, with TestClusterWrittenFieldsPassColdDeploy, and greenfield with the smoke estate")
	res := runWrittenRoot(t, "fresh-names", "Names and annotations each apply makes anew", freshNamesRoot, "migrate", "greenfield")
	if st := stageOf(t, res, "day2_teardown"); st.Verdict != result.Pass {
		t.Fatalf("day2_teardown: %s %s %s\n%s", st.Verdict, st.Detail, st.Aborted, strings.Join(stageLines(st), "\n"))
	}
	if st := stageOf(t, res, "greenfield"); st.Verdict != result.Pass {
		t.Fatalf("greenfield: %s %s\n%s", st.Verdict, st.Reason, strings.Join(stageLines(st), "\n"))
	}
}

// unseenDriftRoot is a root written for this test whose best-ranked drift
// candidate is a label of a kubernetes_manifest ConfigMap, a tamper the
// kubernetes provider does not see (both engines plan nothing), followed
// by two typed ServiceAccounts whose labels it does see.
const unseenDriftRoot = `
resource "kubernetes_manifest" "settings" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name      = "unseen-settings"
      namespace = "default"
      labels    = { tier = "config" }
    }
    data = { mode = "probe" }
  }
}

resource "kubernetes_service_account_v1" "reader" {
  metadata {
    name      = "unseen-reader"
    namespace = "default"
    labels    = { role = "reader" }
  }
}

resource "kubernetes_service_account_v1" "writer" {
  metadata {
    name      = "unseen-writer"
    namespace = "default"
    labels    = { role = "writer" }
  }
}
`

// TestDerivedDriftIsOneStockSees runs the drift over unseenDriftRoot: the
// derived drift is tried on stock first, the manifest's label is passed
// over (stock plans nothing for it) and the stage passes on the two
// ServiceAccounts. Before, it drifted the manifest's label and the stage
// was a limitation no engine could pass.
func TestDerivedDriftIsOneStockSees(t *testing.T) {
	testenv.SecondTier(t, "the first tier proves drift on the smoke estate, a drift stock misses with TestSharedDriftIsALimitation, and derivation's choices in internal/derive's unit tests")
	res := runWrittenRoot(t, "unseen-drift", "A drift stock does not see, and two it does", unseenDriftRoot, "migrate", "drift_reconverge")
	if st := stageOf(t, res, "drift_reconverge"); st.Verdict != result.Pass {
		t.Fatalf("drift_reconverge: %s %s %s\n%s", st.Verdict, st.Reason, st.Detail, strings.Join(stageLines(st), "\n"))
	}
	for _, c := range res.Choices {
		if c.Stage == "drift_reconverge" && (!strings.Contains(c.Why, "passed over because stock does not see it") || !strings.Contains(c.Why, "kubernetes_manifest.settings")) {
			t.Errorf("the choice does not say the manifest's label was passed over: %s", c.Why)
		}
	}
}
