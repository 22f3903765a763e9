package gauntlet_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/matrix"
	"github.com/gauntlet-k8s/gauntlet/internal/mutant"
	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// secretLiteral is the known secret of the root below: a variable the
// configuration marks sensitive (estate.yaml does not), put in a Secret.
const secretLiteral = "Lit3ral-db-Password-9f4c"

const secretRoot = `variable "db_password" {
  type      = string
  sensitive = true
}

resource "random_password" "api" {
  length = 24
}

resource "kubernetes_secret_v1" "db" {
  metadata {
    name      = "secrets-db"
    namespace = "default"
  }
  data = {
    password = var.db_password
    api_key  = random_password.api.result
  }
}

resource "kubernetes_config_map_v1" "settings" {
  metadata {
    name      = "secrets-settings"
    namespace = "default"
  }
  data = {
    mode = "plain"
  }
}
`

const secretEstate = `apiVersion: gauntlet/v1
name: secrets-stay-secret
title: A Secret with a literal and a random password, and a ConfigMap
description: Written by the test that greps every output of a kept run for the Secret's values.
lane: kubernetes
set: reference
files: [main.tf]
variables:
  db_password: ` + secretLiteral + `
namespace: default
prefix: secrets
writes_into: [default]
`

// TestSecretsLeaveNoTrace runs a small root holding a Secret (a literal
// password from a variable the configuration marks sensitive, and a
// random_password) through cold deploy and migrate with the work folder
// kept, writes every artifact a run leaves - evidence page, run.json,
// JUnit, the matrix and mutants pages - and greps every file of the
// output folder and every log line for the literal, as it is and
// base64-encoded. The kept states must show the random password as a
// digest.
func TestSecretsLeaveNoTrace(t *testing.T) {
	testenv.Toolchain(t)
	estates := t.TempDir()
	dir := filepath.Join(estates, "secrets-stay-secret")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"estate.yaml": secretEstate, "main.tf": secretRoot} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := estate.Load(estates, "secrets-stay-secret")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var lines bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := gauntlet.Run(ctx, spec, gauntlet.WithOffline(true), gauntlet.WithStages("cold_deploy", "migrate"),
		gauntlet.WithKeep(true), gauntlet.WithWorkDir(filepath.Join(out, "work")), gauntlet.WithStateDir(t.TempDir()),
		gauntlet.WithLogger(log.New(io.MultiWriter(&lines, testWriter{t}))))
	if err != nil {
		t.Fatal(err)
	}
	// Cold deploy must have run; it may fail (the random password differs
	// between the two clusters by construction, which the comparison does
	// not yet know: issue 23 class 5) - its page then shows the Secret's
	// data, which is the point.
	for _, s := range res.Stages {
		if s.ID == "cold_deploy" && s.Verdict != result.Pass && s.Verdict != result.Fail {
			t.Fatalf("cold_deploy %s: %s", s.Verdict, s.Detail)
		}
	}
	// A finding about the Secret's data (cold deploy's comparison of the
	// two clusters) shows digests, never the data.
	for _, s := range res.Stages {
		for _, c := range s.Checks {
			for _, f := range c.Findings {
				if strings.HasPrefix(f.Object, "Secret ") && strings.HasPrefix(f.Field, "data") && (!digestOrNothing(f.Want) || !digestOrNothing(f.Got)) {
					t.Errorf("%s: finding %s shows the Secret's data", s.ID, f.Error())
				}
			}
		}
	}
	if _, err := evidence.WriteAll(out, res); err != nil {
		t.Fatal(err)
	}
	m := &matrix.Matrix{Estate: res.Estate, Oracle: res.Oracle.Name, Columns: []matrix.Column{{Engine: "tofu", Tool: "tofu", Run: res}}}
	if _, err := matrix.WriteAll(filepath.Join(out, "matrix"), m); err != nil {
		t.Fatal(err)
	}
	mm := &mutant.Matrix{Estate: res.Estate.Name, Rows: []mutant.Row{mutant.Score(mutant.Identity(), res, nil)}}
	if _, err := mutant.WriteAll(filepath.Join(out, "mutants"), mm); err != nil {
		t.Fatal(err)
	}

	leaks := []string{secretLiteral, base64.StdEncoding.EncodeToString([]byte(secretLiteral))}
	files, states := 0, 0
	err = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, l := range leaks {
			if bytes.Contains(b, []byte(l)) {
				t.Errorf("%s holds the secret (%s)", p, l)
			}
		}
		if filepath.Base(p) == "terraform.tfstate" {
			states++
			assertRandomHidden(t, p, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 || states == 0 {
		t.Errorf("the output folder holds %d files, %d states: the work folder was not kept", files, states)
	}
	for _, l := range leaks {
		if strings.Contains(lines.String(), l) {
			t.Errorf("a log line holds the secret (%s)", l)
		}
	}
}

func digestOrNothing(s string) bool { return s == "" || strings.HasPrefix(s, "sha256:") }

// assertRandomHidden fails unless every random_password's result in the
// state b is a digest.
func assertRandomHidden(t *testing.T, path string, b []byte) {
	t.Helper()
	var st struct {
		Resources []struct {
			Type      string `json:"type"`
			Instances []struct {
				Attributes map[string]any `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	for _, r := range st.Resources {
		for _, in := range r.Instances {
			if v, _ := in.Attributes["result"].(string); r.Type == "random_password" && !strings.HasPrefix(v, "sha256:") {
				t.Errorf("%s: random_password result %q is not a digest", path, v)
			}
		}
	}
}

// testWriter sends a run's progress to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
