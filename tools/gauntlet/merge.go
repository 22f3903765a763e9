package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

// mergeOptions says where merged shards go.
type mergeOptions struct {
	// Out receives the pages (each item's folder and index.md); default
	// by command: out/ for run and mutants, out/matrix for matrix. A
	// record split's pages are its run folders.
	Out string
	// RunsDir and Ledger receive the recorded run folders and their rows
	// (default conformance/runs and its ledger.jsonl).
	RunsDir, Ledger string
}

// mergeResult is what a merge did.
type mergeResult struct {
	Command string
	Items   int
	Runs    []string
	Rows    int
	Out     string
}

func mergeCommand() cli.Command {
	return cli.Command{
		Name: "merge", Args: "SHARD_DIR...", MinArgs: 1, MaxArgs: -1,
		Summary: "fold the folders of a sharded run, matrix, mutants or record into one set of pages and one ledger append",
		Doc: "Checks that the folders are every shard of one split (the shard.json each sharded command leaves: same command, " +
			"commit and items, each shard once, no item in two), then folds them: each item's pages into one folder with one " +
			"index.md, and a recorded run's folders into conformance/runs/ with their rows appended to the ledger in run order. " +
			"Nothing is written unless every check passes.",
		Examples: []cli.Example{
			{What: "the two halves of `run --all --shard I/2` into out/", Command: "gauntlet merge out/shards/run-1-of-2 out/shards/run-2-of-2"},
			{What: "two machines' `record --stale --shard` into the ledger (commit it afterwards)", Command: "gauntlet merge shard1/record-1-of-2 shard2/record-2-of-2"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			out := fs.String("out", "", "the `DIR` the pages go to (default: out for run and mutants shards, out/matrix for matrix shards; record shards have no pages)")
			return func(ctx context.Context, args []string) error { return runMerge(args, *out) }
		},
	}
}

// runMerge folds the shard folders dirs and says what it did.
func runMerge(dirs []string, out string) error {
	res, err := mergeShards(dirs, mergeOptions{Out: out, RunsDir: runsDir, Ledger: ledgerPath})
	if err != nil {
		return err
	}
	fmt.Printf("merged %d %s shard(s): %d item(s)", len(dirs), res.Command, res.Items)
	if res.Out != "" {
		fmt.Printf(", pages in %s (index.md)", res.Out)
	}
	if len(res.Runs) > 0 {
		fmt.Printf(", %d run folder(s) into %s and %d ledger row(s) appended: commit both", len(res.Runs), runsDir, res.Rows)
	}
	fmt.Println()
	return nil
}

// mergeShards checks that dirs are every shard of one split, each once,
// with no item in two of them, then folds them: each item's pages into
// one folder with one index, and every recorded run folder into the runs
// folder with its rows appended to the ledger in run order (the order one
// machine recording them one after another would have appended them).
// Nothing is written unless every check passes.
func mergeShards(dirs []string, o mergeOptions) (*mergeResult, error) {
	ms := make([]*shardManifest, len(dirs))
	for i, d := range dirs {
		m, err := readManifest(d)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	if err := checkSplit(dirs, ms); err != nil {
		return nil, err
	}
	first := ms[0]
	res := &mergeResult{Command: first.Command, Items: len(first.All)}
	// Every run folder is checked before anything moves.
	type runAt struct{ id, dir string }
	var runs []runAt
	seen := map[string]string{}
	for i, m := range ms {
		for _, id := range m.Runs {
			if prev, ok := seen[id]; ok {
				return nil, fmt.Errorf("run %s is in %s and %s", id, prev, dirs[i])
			}
			seen[id] = dirs[i]
			src := filepath.Join(dirs[i], "runs", id)
			runJSON, err := os.ReadFile(filepath.Join(src, conformance.RunJSON))
			if err != nil {
				return nil, fmt.Errorf("shard %s: %w", dirs[i], err)
			}
			inputsJSON, err := os.ReadFile(filepath.Join(src, conformance.InputsJSON))
			if err != nil {
				return nil, fmt.Errorf("shard %s: %w", dirs[i], err)
			}
			if _, err := conformance.BuildRows(id, runJSON, inputsJSON); err != nil {
				return nil, fmt.Errorf("shard %s: run %s: %w", dirs[i], id, err)
			}
			if _, err := os.Stat(filepath.Join(o.RunsDir, id)); err == nil {
				return nil, fmt.Errorf("run %s (shard %s) is already in %s: merged before?", id, dirs[i], o.RunsDir)
			}
			runs = append(runs, runAt{id, src})
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].id < runs[j].id })
	if first.Command != "record" {
		res.Out = o.Out
		if res.Out == "" {
			res.Out = "out"
			if first.Command == "matrix" {
				res.Out = filepath.Join("out", "matrix")
			}
		}
		if err := mergePages(dirs, ms, res.Out); err != nil {
			return nil, err
		}
	}
	for _, r := range runs {
		if err := copyDir(r.dir, filepath.Join(o.RunsDir, r.id)); err != nil {
			return nil, err
		}
		n, err := conformance.Append(o.Ledger, o.RunsDir, r.id)
		if err != nil {
			return nil, fmt.Errorf("append run %s: %w (the runs before it are appended; `gauntlet status --hygiene` shows the ledger)", r.id, err)
		}
		res.Runs = append(res.Runs, r.id)
		res.Rows += n
	}
	return res, nil
}

// checkSplit refuses shards of different splits, a shard given twice or
// missing, an item in two shards, and a shard whose items are not its
// part of the split.
func checkSplit(dirs []string, ms []*shardManifest) error {
	first := ms[0]
	byIndex := map[int]string{}
	owner := map[string]string{}
	for i, m := range ms {
		switch {
		case m.Command != first.Command:
			return fmt.Errorf("%s is a %s shard, %s a %s shard", dirs[0], first.Command, dirs[i], m.Command)
		case m.Of != first.Of || !slices.Equal(m.All, first.All) || m.Commit != first.Commit:
			return fmt.Errorf("%s and %s are not shards of one split (of %d vs %d, commit %s vs %s, or other items)", dirs[0], dirs[i], first.Of, m.Of, first.Commit, m.Commit)
		case m.Shard < 1 || m.Shard > m.Of:
			return fmt.Errorf("%s: shard %d of %d", dirs[i], m.Shard, m.Of)
		}
		if prev, ok := byIndex[m.Shard]; ok {
			return fmt.Errorf("shard %d/%d is given twice: %s and %s", m.Shard, m.Of, prev, dirs[i])
		}
		byIndex[m.Shard] = dirs[i]
		for _, it := range m.Items {
			if prev, ok := owner[it]; ok {
				return fmt.Errorf("shards overlap: %s is in %s and %s", it, prev, dirs[i])
			}
			owner[it] = dirs[i]
		}
		if want := (shard{m.Shard, m.Of}).pick(m.All); !slices.Equal(m.Items, want) {
			return fmt.Errorf("%s: shard %d/%d ran %v, its part of the split is %v", dirs[i], m.Shard, m.Of, m.Items, want)
		}
	}
	var missing []string
	for i := 1; i <= first.Of; i++ {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, first.Of))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shard(s) %s missing: a merge needs every shard of the split", strings.Join(missing, ", "))
	}
	return nil
}

// mergePages copies each item's folder into out, replacing an earlier
// one as an unsharded run would, and writes one index.md for all items.
func mergePages(dirs []string, ms []*shardManifest, out string) error {
	dirsOf, results := map[string]string{}, map[string]string{}
	for i, m := range ms {
		for _, it := range m.Items {
			rel := m.Dirs[it]
			if rel == "" {
				continue
			}
			if !filepath.IsLocal(rel) {
				return fmt.Errorf("%s: item %s's folder %q is not inside the shard", dirs[i], it, rel)
			}
			dst := filepath.Join(out, rel)
			if err := os.RemoveAll(dst); err != nil {
				return err
			}
			if err := copyDir(filepath.Join(dirs[i], rel), dst); err != nil {
				return err
			}
			dirsOf[it], results[it] = rel, m.Results[it]
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return writeIndex(out, "gauntlet "+ms[0].Command+" (merged from "+fmt.Sprint(ms[0].Of)+" shards)", ms[0].All, dirsOf, results)
}
