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
	// RemovedForget: a removed block that says `lifecycle { destroy =
	// false }`, forgetting the object and leaving it live.
	RemovedForget Capability = "removed blocks with lifecycle destroy = false"
	// MovedAcrossTypes: a moved block whose from and to are resources of
	// different types (the provider converting the state).
	MovedAcrossTypes Capability = "moved across resource types"
	// StalePlanRefusal: applying a saved plan made before the state
	// changed is refused.
	StalePlanRefusal Capability = "stale saved-plan refusal"
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

// Fact is where a capability comes from in a stock engine: the first
// release that has it and the reference that says so.
type Fact struct {
	Capability Capability
	Engine     string
	// Since is the first release with it ("1.7.0").
	Since string
	// Source is the engine's own record of it: a changelog entry, or the
	// source file that holds the behaviour.
	Source string
}

// Facts are the capabilities of the two stock engines, each with the
// release that introduced it and where that is written. Versions before
// Since do not have it; the engines' version numbers are their own (tofu
// 1.6.0 is its first release, forked from terraform 1.6).
var Facts = []Fact{
	{MovedBlocks, "terraform", "1.1.0", "terraform CHANGELOG 1.1.0: moved blocks for refactoring"},
	{MovedBlocks, "tofu", "1.6.0", "OpenTofu's first release (forked from terraform 1.6) has moved blocks"},
	{ImportBlocks, "terraform", "1.5.0", "terraform CHANGELOG 1.5.0: import blocks"},
	{ImportBlocks, "tofu", "1.6.0", "OpenTofu's first release has import blocks (terraform 1.5 inherited)"},
	{RemovedBlocks, "terraform", "1.7.0", "terraform CHANGELOG 1.7.0: removed blocks"},
	{RemovedBlocks, "tofu", "1.7.0", "OpenTofu CHANGELOG 1.7.0: removed block"},
	{RemovedForget, "terraform", "1.7.0", "terraform CHANGELOG 1.7.0: removed blocks, with lifecycle destroy = false"},
	// Before 1.10 tofu's removed block always forgets and refuses a lifecycle block in it (seen in the matrix: tofu
	// 1.8.11's hand-off failed on it).
	{RemovedForget, "tofu", "1.10.0", "OpenTofu CHANGELOG 1.10.0: removed blocks can include lifecycle and provisioner configuration (opentofu#2556)"},
	{MovedAcrossTypes, "terraform", "1.8.0", "terraform CHANGELOG 1.8.0: moved between resources of different types, when the provider converts"},
	{MovedAcrossTypes, "tofu", "1.10.0", "OpenTofu CHANGELOG 1.10.0: moved blocks between resource types (opentofu#2370, #2481)"},
	{StalePlanRefusal, "terraform", "1.0.0", `every pinned release refuses it: "Saved plan is stale" in internal/backend/local/backend_local.go (1.5.7 on)`},
	{StalePlanRefusal, "tofu", "1.6.0", `every pinned release refuses it: "Saved plan is stale" in internal/backend/local/backend_local.go`},
}

// FactFor is the fact behind an engine's capability, if gauntlet knows
// one.
func FactFor(name string, c Capability) (Fact, bool) {
	for _, f := range Facts {
		if f.Engine == name && f.Capability == c {
			return f, true
		}
	}
	return Fact{}, false
}

// Needs says why an engine lacks a capability, for a stage's not_run
// reason: "needs removed blocks, since terraform 1.7.0 (terraform
// CHANGELOG 1.7.0: removed blocks); this is terraform 1.5.7".
func (p Profile) Needs(c Capability) string {
	if f, ok := FactFor(p.Name, c); ok {
		return fmt.Sprintf("needs %s, since %s %s (%s); this is %s %s", c, f.Engine, f.Since, f.Source, p.Name, p.Version)
	}
	return fmt.Sprintf("needs %s, which %s %s does not declare", c, p.Name, p.Version)
}

// capabilities are what a stock engine of that name and version offers,
// from Facts; engines gauntlet does not know are assumed to speak the
// current language (moved and import blocks). Nothing grants LiveMode: no
// engine can declare it yet, so the stages that need it are not_run for
// every engine, with that reason.
func capabilities(name, version string) map[Capability]bool {
	caps := map[Capability]bool{StateFile: true}
	known := false
	for _, f := range Facts {
		if f.Engine != name {
			continue
		}
		known = true
		caps[f.Capability] = !versionBefore(version, f.Since)
	}
	if !known {
		caps[MovedBlocks], caps[ImportBlocks], caps[StalePlanRefusal] = true, true, true
	}
	return caps
}

// versionBefore reports whether dotted version a is older than b.
func versionBefore(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3; i++ {
		x, y := 0, 0
		if i < len(as) {
			x, _ = strconv.Atoi(strings.SplitN(as[i], "-", 2)[0])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
