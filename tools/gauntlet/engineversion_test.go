package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
)

// TestVersionBars: estate new names a root's required_version that a
// default engine does not meet, with its line, and no other.
func TestVersionBars(t *testing.T) {
	engines := []toolchain.EngineRef{{Engine: "tofu", Version: "1.12.6"}, {Engine: "terraform", Version: "1.11.4"}}
	for name, tc := range map[string]struct {
		tf   string
		want string
	}{
		"older than both": {"terraform {\n  required_version = \">= 0.13.4, < 0.15.0\"\n}\n",
			`versions.tf:2: required_version ">= 0.13.4, < 0.15.0" excludes tofu 1.12.6 and terraform 1.11.4`},
		"newer than terraform": {"terraform {\n  required_version = \">= 1.12.0\"\n}\n", `excludes terraform 1.11.4:`},
		"both meet it":         {"terraform {\n  required_version = \">= 1.5\"\n}\n", ""},
		"not a literal":        {"terraform {\n  required_version = var.v\n}\n", ""},
		"no constraint":        {"terraform {\n  required_providers {}\n}\n", ""},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "versions.tf"), []byte(tc.tf), 0o644); err != nil {
				t.Fatal(err)
			}
			files, err := parseRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			bars := versionBars(files, engines)
			switch {
			case tc.want == "" && len(bars) != 0:
				t.Errorf("bars %v, want none", bars)
			case tc.want != "" && (len(bars) != 1 || !strings.Contains(bars[0].String(), tc.want)):
				t.Errorf("bars %v, want one saying %q", bars, tc.want)
			}
		})
	}
}
