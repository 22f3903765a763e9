// Command gauntlet-mutant is a mutant engine: it wraps the pinned OpenTofu
// and breaks exactly one promise a Terraform-compatible engine makes, the
// way a real engine regression would, so that `gauntlet mutants` can show
// the gauntlet turns red when its subject is broken. Where its mutation
// does not apply it is tofu itself (it execs tofu: same arguments, output,
// exit code and signals), so `version` answers as tofu does.
//
// The toolchain builds it from this directory (a tool module, pinned in
// third_party/pins.json); gauntlet runs it through a generated script that
// sets GAUNTLET_MUTANT (the mutation) and GAUNTLET_MUTANT_TOFU (the engine
// it wraps), because an engine's environment is otherwise gauntlet's own.
package main

import (
	"fmt"
	"os"
	"sort"
)

// version is what --gauntlet-mutant-version prints; the toolchain checks it.
const version = "gauntlet-mutant 2"

const (
	envMutation = "GAUNTLET_MUTANT"
	envTofu     = "GAUNTLET_MUTANT_TOFU"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--gauntlet-mutant-version" {
		fmt.Println(version)
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "--gauntlet-mutations" {
		for _, n := range names() {
			fmt.Println(n)
		}
		return
	}
	name, tofu := os.Getenv(envMutation), os.Getenv(envTofu)
	m, ok := mutations[name]
	if !ok || tofu == "" {
		fmt.Fprintf(os.Stderr, "gauntlet-mutant: set %s to one of %v and %s to the engine it wraps\n", envMutation, names(), envTofu)
		os.Exit(2)
	}
	c := &call{tofu: tofu, args: os.Args[1:], env: cleanEnv(os.Environ())}
	code, err := m(c)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gauntlet-mutant %s: %v\n", name, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func names() []string {
	var out []string
	for n := range mutations {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// cleanEnv drops the mutant's own variables: tofu sees the environment
// gauntlet gave the engine, nothing more.
func cleanEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if len(kv) >= len(envMutation) && kv[:len(envMutation)] == envMutation {
			continue
		}
		out = append(out, kv)
	}
	return out
}
