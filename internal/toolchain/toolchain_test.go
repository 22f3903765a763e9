package toolchain_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/testenv"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
)

// TestResolvedToolsReportPinnedVersions runs every resolved CLI's version
// command itself, independently of Resolve's own check.
func TestResolvedToolsReportPinnedVersions(t *testing.T) {
	tc := testenv.Toolchain(t)
	for _, pin := range tc.Pins.Tools {
		if pin.Group != "" {
			continue // resolved only by name (the kind node image, the Docker engine)
		}
		b, err := tc.Binary(pin.Name)
		if err != nil {
			t.Fatal(err)
		}
		if b.Origin != "cache" && b.Origin != "hc-install (PATH)" {
			t.Errorf("%s came from %q on a warm cache", pin.Name, b.Origin)
		}
		if pin.SHA256 != "" && b.SHA256 != pin.SHA256 {
			t.Errorf("%s sha256 %s, pinned %s", pin.Name, b.SHA256, pin.SHA256)
		}
		if len(pin.VersionArgs) == 0 {
			continue
		}
		cmd := exec.Command(b.Path, pin.VersionArgs...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "TF_CLI_CONFIG_FILE=" + tc.CLIConfig}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s %v: %v: %s", b.Path, pin.VersionArgs, err, out)
			continue
		}
		if !strings.Contains(string(out), pin.VersionWant) {
			t.Errorf("%s reports %q, want %q", pin.Name, out, pin.VersionWant)
		}
	}
}

const providersRoot = `terraform {
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

resource "random_pet" "p" {}
`

// TestInitWithoutNetwork runs terraform init and tofu init inside a network
// namespace with no interfaces up, using only the generated CLI config.
func TestInitWithoutNetwork(t *testing.T) {
	tc := testenv.Toolchain(t)
	netns := exec.Command("unshare", "--net", "true").Run() == nil
	if !netns {
		t.Log("unshare --net is not permitted here: init runs with the machine's network, the CLI config alone keeps it offline")
	}
	for _, cli := range []string{"terraform", "tofu"} {
		t.Run(cli, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(providersRoot), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{tc.Path(cli), "init", "-input=false", "-no-color"}
			if netns {
				args = append([]string{"unshare", "--net"}, args...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TF_CLI_CONFIG_FILE=" + tc.CLIConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s init: %v\n%s", cli, err, out)
			}
			lock, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`/hashicorp/kubernetes" {`, `version     = "3.2.1"`, `/hashicorp/random" {`, `version     = "3.9.0"`} {
				if !strings.Contains(string(lock), want) {
					t.Errorf("%s lock file lacks %q:\n%s", cli, want, lock)
				}
			}
		})
	}
}

// TestWrongVersionBinaryIsRejected hands Resolve a binary that reports
// another version.
func TestWrongVersionBinaryIsRejected(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "etcd")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'etcd Version: 3.4.23'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := toolchain.Resolve(context.Background(), toolchain.WithCacheDir(t.TempDir()),
		toolchain.WithTools("etcd"), toolchain.WithBinary("etcd", fake))
	if err == nil {
		t.Fatal("a 3.4.23 etcd was accepted for the 3.7.3 pin")
	}
	for _, want := range []string{"wrong version", "etcd Version: 3.7.3", "go run ./tools/gauntlet toolchain"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestMissingToolNamesTheCommand resolves into an empty cache without
// building.
func TestMissingToolNamesTheCommand(t *testing.T) {
	_, err := toolchain.Resolve(context.Background(), toolchain.WithCacheDir(t.TempDir()),
		toolchain.WithTools("kwok"), toolchain.WithoutBuild(), toolchain.WithOffline(true))
	if err == nil || !strings.Contains(err.Error(), "go run ./tools/gauntlet toolchain") {
		t.Fatalf("want an error naming the toolchain command, got %v", err)
	}
}

// TestTamperedCacheEntryIsRejected flips the stamp of a cached binary
// copy and expects Resolve to refuse it rather than run it.
func TestTamperedCacheEntryIsRejected(t *testing.T) {
	tc := testenv.Toolchain(t, "terraform-provider-random")
	b, _ := tc.Binary("terraform-provider-random")
	cache := t.TempDir()
	entry := filepath.Join(cache, "toolchain", "terraform-provider-random", filepath.Base(filepath.Dir(b.Path)))
	if err := os.MkdirAll(entry, 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(b.Path), "stamp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(entry, "stamp.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(entry, "terraform-provider-random"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = toolchain.Resolve(context.Background(), toolchain.WithCacheDir(cache),
		toolchain.WithTools("terraform-provider-random"), toolchain.WithoutBuild(), toolchain.WithOffline(true))
	if err == nil {
		t.Fatal("a tampered cache entry was accepted")
	}
}
