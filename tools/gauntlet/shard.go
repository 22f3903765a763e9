package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

// shard is one of N parts of a command's work ("2/3"); N == 0 is the
// whole of it.
type shard struct{ I, N int }

// parseShard reads "I/N", 1 <= I <= N; "" is no sharding.
func parseShard(s string) (shard, error) {
	if s == "" {
		return shard{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return shard{}, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N, e.g. 1/2", s)
	}
	return shard{i, n}, nil
}

// String is "I/N", empty for the whole (the flag's default).
func (s shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Set makes a shard a flag value (--shard I/N): a malformed one is a
// usage error.
func (s *shard) Set(v string) error {
	p, err := parseShard(v)
	if err != nil {
		return err
	}
	*s = p
	return nil
}

// dir is a command's output folder: def for the whole, and
// out/shards/<command>-I-of-N for a shard, where `gauntlet merge` finds
// it.
func (s shard) dir(command, def string) string {
	if s.N == 0 {
		return def
	}
	return filepath.Join("out", "shards", fmt.Sprintf("%s-%d-of-%d", command, s.I, s.N))
}

// pick is this shard's part of items: sorted by name, the I-th of every N
// (round robin, so neighbours - an estate's local and kind cells - go to
// different machines). Every item is in exactly one shard, and the split
// depends on the names alone.
func (s shard) pick(items []string) []string {
	all := slices.Clone(items)
	sort.Strings(all)
	if s.N == 0 {
		return all
	}
	var mine []string
	for i, it := range all {
		if i%s.N == s.I-1 {
			mine = append(mine, it)
		}
	}
	return mine
}

// shardSchema names the format of shard.json.
const (
	shardSchema = "gauntlet.shard/v1"
	shardFile   = "shard.json"
)

// shardManifest is what a sharded command leaves in its output folder
// for `gauntlet merge`: which part of which split it ran and where each
// item's output is.
type shardManifest struct {
	Schema  string `json:"schema"`
	Command string `json:"command"`
	Shard   int    `json:"shard"`
	Of      int    `json:"of"`
	Commit  string `json:"commit"`
	// All is every item of the split, sorted; Items this shard's.
	All   []string `json:"all"`
	Items []string `json:"items"`
	// Dirs maps each item to its output folder, relative to the shard's
	// folder ("corpus-k8s-metrics-server").
	Dirs map[string]string `json:"dirs,omitempty"`
	// Results maps each item to a one-line outcome for the index page.
	Results map[string]string `json:"results,omitempty"`
	// Runs are the run folders a record shard recorded, under runs/.
	Runs []string `json:"runs,omitempty"`
}

func newManifest(command string, s shard, commit string, all, items []string) *shardManifest {
	all = slices.Clone(all)
	sort.Strings(all)
	return &shardManifest{Schema: shardSchema, Command: command, Shard: s.I, Of: s.N, Commit: commit, All: all,
		Items: slices.Clone(items), Dirs: map[string]string{}, Results: map[string]string{}}
}

func (m *shardManifest) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, shardFile), append(b, '\n'), 0o644)
}

func readManifest(dir string) (*shardManifest, error) {
	raw, err := os.ReadFile(filepath.Join(dir, shardFile))
	if err != nil {
		return nil, fmt.Errorf("%s is not a shard's output: %w", dir, err)
	}
	var m shardManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, shardFile), err)
	}
	if m.Schema != shardSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", filepath.Join(dir, shardFile), m.Schema, shardSchema)
	}
	return &m, nil
}

// writeIndex writes index.md: one line per item with its outcome and
// folder, the page a sharded or an --all run leaves at the top.
func writeIndex(dir, title string, items []string, dirs, results map[string]string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n| item | outcome | folder |\n|---|---|---|\n", title)
	for _, it := range items {
		fmt.Fprintf(&b, "| %s | %s | [%s](%s/) |\n", it, strings.ReplaceAll(results[it], "|", "/"), dirs[it], dirs[it])
	}
	return os.WriteFile(filepath.Join(dir, "index.md"), []byte(b.String()), 0o644)
}

// forEstates runs one for every estate of the shard (every estate without
// one), one after another, each into <root>/<estate>, then writes
// <root>/index.md and, when sharded, <root>/shard.json. root defaults to
// def, or out/shards/<command>-I-of-N for a shard. An estate that fails
// does not stop the rest; the command fails at the end.
func forEstates(ctx context.Context, command, estatesDir string, sh shard, root, def string, one func(name, dir string) error) error {
	names, err := estate.List(estatesDir)
	if err != nil {
		return err
	}
	mine := sh.pick(names)
	if root == "" {
		root = sh.dir(command, def)
	}
	m := newManifest(command, sh, gitCommit(ctx), names, mine)
	notClear, couldNotRun := 0, 0
	for _, name := range mine {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		m.Dirs[name] = name
		err := one(name, filepath.Join(root, name))
		switch {
		case err == nil:
			m.Results[name] = "clear"
		case cli.ExitCode(err, nil) == cli.ExitNotClear:
			notClear++
			m.Results[name] = "not clear: " + err.Error()
		default:
			couldNotRun++
			m.Results[name] = "error: " + err.Error()
			fmt.Fprintf(os.Stderr, "gauntlet %s --all: %s: %v\n", command, name, err)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := writeIndex(root, "gauntlet "+command+" --all", mine, m.Dirs, m.Results); err != nil {
		return err
	}
	if sh.N > 0 {
		if err := m.write(root); err != nil {
			return err
		}
	}
	fmt.Printf("%s --all: %d estate(s), %d not clear, %d could not run; wrote %s\n", command, len(mine), notClear, couldNotRun, filepath.Join(root, "index.md"))
	return allOutcome(notClear, couldNotRun)
}

// allOutcome is the exit of a command over many items (--all, record
// --stale): 1 when any item is not clear - the engine was found wanting
// somewhere - else 3 when some item could not run (that says nothing
// about the engine), else clear.
func allOutcome(notClear, couldNotRun int) error {
	switch {
	case notClear > 0:
		return cli.NotClear(fmt.Errorf("%d not clear, %d could not run", notClear, couldNotRun))
	case couldNotRun > 0:
		return fmt.Errorf("%d could not run, the rest clear", couldNotRun)
	}
	return nil
}

// allFlags are --all and --shard of a command that takes one estate, or
// every estate in --estates with --all, or a part of them with --shard.
type allFlags struct {
	all   bool
	shard shard
}

// register declares --all and --shard. perEstate: --all writes each
// estate into <out>/<estate>/ and <out>/index.md, and a shard leaves
// shard.json for `gauntlet merge` (run, matrix, mutants); otherwise the
// command writes one report of them all (compare).
func (a *allFlags) register(fs *cli.FlagSet, perEstate bool) {
	all := "every estate in --estates"
	part := "with --all: only part `I/N` of the estates (the I-th of N; sorted by name, round robin)"
	if perEstate {
		all += ", one after another, each into <out>/<estate>/, and <out>/index.md"
		part += ", and shard.json for `gauntlet merge`"
	}
	fs.BoolVar(&a.all, "all", false, all)
	fs.Var(&a.shard, "shard", part)
}

// check checks a command's estate argument against --all and --shard:
// one estate, or --all with none; --shard only with --all.
func (a *allFlags) check(command string, args []string) error {
	switch {
	case a.shard.N > 0 && !a.all:
		return cli.Usagef(command, "--shard needs --all: it picks a part of every estate")
	case a.all && len(args) > 0:
		return cli.Usagef(command, "--all takes every estate: give no estate name (got %q)", args[0])
	case !a.all && len(args) == 0:
		return cli.Usagef(command, "want <estate> (`gauntlet list` shows them), or --all")
	}
	return nil
}
