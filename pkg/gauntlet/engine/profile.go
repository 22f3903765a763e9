package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Capability is something an engine can do that a stage may need.
type Capability string

const (
	// StateFile: the engine keeps state in a local state file.
	StateFile Capability = "state file"
	// ImportBlocks: `import { to, id }` blocks in configuration.
	ImportBlocks Capability = "import blocks"
	// MovedBlocks: `moved { from, to }` blocks.
	MovedBlocks Capability = "moved blocks"
	// RemovedBlocks: `removed { from }` blocks.
	RemovedBlocks Capability = "removed blocks"
	// LiveMode: the engine keeps estate membership on the live objects
	// themselves (labels/records) and can plan with no local state.
	LiveMode Capability = "live mode"
)

// Profile describes an engine binary, detected from its version output.
type Profile struct {
	// Name is "terraform", "tofu", or the binary's base name for other
	// CLIs that speak the same language.
	Name string
	// Version is the version it reports, e.g. "1.12.6".
	Version string
	// Display is its own first version line, e.g. "OpenTofu v1.12.6".
	Display      string
	Capabilities map[Capability]bool
}

// Has reports whether the engine has a capability.
func (p Profile) Has(c Capability) bool { return p.Capabilities[c] }

// String is "OpenTofu v1.12.6"-style.
func (p Profile) String() string { return p.Display }

var displayRE = regexp.MustCompile(`^(\S+(?: \S+)?) v(\d+\.\d+\.\d+\S*)`)

// DetectProfile runs `bin version -json` and `bin version`. A binary that
// does not answer like a Terraform CLI is an error that says what it said.
func DetectProfile(ctx context.Context, bin, cliConfig string) (Profile, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	run := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "TF_CLI_CONFIG_FILE=" + cliConfig, "CHECKPOINT_DISABLE=1", "HOME=/nonexistent"}
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		err := cmd.Run()
		return out.Bytes(), err
	}
	raw, err := run("version", "-json")
	if err != nil {
		return Profile{}, fmt.Errorf("engine %s: `version -json` failed: %w: %s", bin, err, clip(raw))
	}
	var v struct {
		TerraformVersion string `json:"terraform_version"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.TerraformVersion == "" {
		return Profile{}, fmt.Errorf("engine %s does not speak the Terraform CLI: `version -json` printed %q", bin, clip(raw))
	}
	plain, _ := run("version")
	first, _, _ := strings.Cut(strings.TrimSpace(string(plain)), "\n")
	p := Profile{Version: v.TerraformVersion, Display: first}
	m := displayRE.FindStringSubmatch(first)
	switch {
	case m != nil && m[1] == "OpenTofu":
		p.Name = "tofu"
	case m != nil && m[1] == "Terraform":
		p.Name = "terraform"
	default:
		p.Name = filepath.Base(bin)
		p.Display = p.Name + " v" + p.Version
	}
	p.Capabilities = capabilities(p.Name, p.Version)
	return p, nil
}

// StockCapabilities are what a stock engine of that name and version
// offers, without running it: what `gauntlet status` knows a pinned
// engine can exercise.
func StockCapabilities(name, version string) map[Capability]bool { return capabilities(name, version) }

// capabilities are what a stock engine of that name and version offers;
// engines with live mode declare it through WithCapabilities.
func capabilities(name, version string) map[Capability]bool {
	maj, min := majorMinor(version)
	at := func(m, n int) bool { return maj > m || (maj == m && min >= n) }
	caps := map[Capability]bool{StateFile: true}
	switch name {
	case "terraform":
		caps[MovedBlocks] = at(1, 1)
		caps[ImportBlocks] = at(1, 5)
		caps[RemovedBlocks] = at(1, 7)
	case "tofu":
		caps[MovedBlocks] = true
		caps[ImportBlocks] = at(1, 6)
		caps[RemovedBlocks] = at(1, 7)
	default:
		caps[MovedBlocks], caps[ImportBlocks] = true, true
	}
	return caps
}

func majorMinor(v string) (int, int) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0
	}
	a, _ := strconv.Atoi(parts[0])
	b, _ := strconv.Atoi(parts[1])
	return a, b
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
