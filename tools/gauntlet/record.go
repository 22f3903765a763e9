package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

// recordSession lets one command record many runs from one commit: the
// tree must be clean when it starts, and afterwards may differ from its
// commit only by the ledger and the run folders the session itself wrote.
// Ledger appends are serialised: each chains to the line before it.
type recordSession struct {
	git  conformance.Git
	head string
	tree *conformance.Tree
	mu   sync.Mutex
	own  []string // run folders recorded, as git names them
}

func newRecordSession(ctx context.Context) (*recordSession, error) {
	// The running binary must be the runner built from this clean tree
	// (conformance.CheckBinary), as for `run --record`.
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("record: the running binary: %w", err)
	}
	g, head, tree, err := cleanTree(ctx, exe)
	if err != nil {
		return nil, err
	}
	return &recordSession{git: g, head: head, tree: tree}, nil
}

// lock holds the session (a no-op without one) until the returned func.
func (s *recordSession) lock() func() {
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	return s.mu.Unlock
}

// foreign drops from git's dirty list what the session recorded itself;
// without a session every entry is foreign. Called with the lock held.
func (s *recordSession) foreign(dirty []string) []string {
	if s == nil || len(s.own) == 0 {
		return dirty
	}
	var out []string
	for _, d := range dirty {
		path := d
		if i := strings.LastIndex(d, " ("); i >= 0 {
			path = d[:i]
		}
		mine := path == ledgerPath
		for _, dir := range s.own {
			mine = mine || strings.HasPrefix(path, dir+"/") || path == dir || path == dir+"/"
		}
		if !mine {
			out = append(out, d)
		}
	}
	return out
}

// wrote notes a run folder the session recorded. Called with the lock held.
func (s *recordSession) wrote(dir string) {
	if s != nil {
		s.own = append(s.own, filepath.ToSlash(filepath.Clean(dir)))
	}
}

// commit labels a session's run: its commit, "-dirty" when anything but
// its own recordings changed.
func (s *recordSession) commit(ctx context.Context) string {
	defer s.lock()()
	dirty, err := s.git.Dirty(ctx)
	head, herr := s.git.Head(ctx)
	if err != nil || herr != nil || len(s.foreign(dirty)) > 0 || head != s.head {
		return s.head + "-dirty"
	}
	return s.head
}

// prepare is prepareRecord within the session: the tree is still its
// commit (its own recordings aside) and the inputs come from the tree it
// read at the start.
func (s *recordSession) prepare(ctx context.Context, estateName, substrate string, stages []string, engineSpec, oracleSpec string) (*recording, error) {
	if c := s.commit(ctx); c != s.head {
		return nil, fmt.Errorf("record: the tree moved since %s started (HEAD or uncommitted files other than its own recordings)", s.head[:min(12, len(s.head))])
	}
	clis, err := recordCLIs(s.tree, engineSpec, oracleSpec)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	in, err := s.tree.Inputs(estateName, substrate, stages, clis...)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return &recording{git: s.git, head: s.head, inputs: in, session: s}, nil
}

// statusWorld is what status derives proof from, for the tree now.
func statusWorld(tree *conformance.Tree) (conformance.World, error) {
	reg, err := conformance.LoadRegistry(registryPath)
	if err != nil {
		return conformance.World{}, err
	}
	return proofWorld(tree, reg, conformance.ComputeCoverage(reg, stageClaims()))
}

// cellRun is one re-proved cell's outcome.
type cellRun struct {
	need     conformance.Need
	took     time.Duration
	headline string
	dir      string
	clear    bool
	err      error
}

func recordCommand() cli.Command {
	return cli.Command{
		Name:    "record",
		Summary: "record --stale: re-prove every required cell that is stale or has no recorded run",
		Doc: "With --stale, lists every cell the requirements need (estate x substrate, with the pinned engine and oracle) whose " +
			"proof is stale - something compiled into the runner, the estate, its corpus file or a pin changed since - or that has " +
			"no recorded run, then runs and records each through the path `run --record` takes, --jobs at a time, and prints what " +
			"it re-proved with a summary. Needs a clean tree and the runner built from it (as `run --record`); --dry-run only lists. " +
			"--shard I/N re-proves the I-th of N parts and leaves the run folders and shard.json for `gauntlet merge`, which " +
			"appends them to the ledger. Exits 1 when a recorded cell is not clear, 3 when every recorded cell is clear but some " +
			"could not be recorded.",
		Examples: []cli.Example{
			{What: "what is stale or missing, and why; runs nothing", Command: "gauntlet record --stale --dry-run"},
			{What: "re-prove them two at a time, from a clean tree", Command: "gauntlet record --stale --jobs 2"},
			{What: "the first of two machines' share (out/shards/record-1-of-2), for `gauntlet merge`", Command: "gauntlet record --stale --shard 1/2"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var f recordFlags
			f.tf.register(fs, false)
			var page pageFlags
			page.register(fs)
			estates := registerEstates(fs)
			stale := fs.Bool("stale", false, "re-prove every cell the requirements need (estate x substrate, pinned engine and oracle) that is stale or has no recorded run (required: the one mode there is)")
			fs.IntVar(&f.jobs, "jobs", 1, "cells run at once, `N`, each with its own two clusters (a run with a live oracle keeps about two cores busy)")
			fs.Var(&f.shard, "shard", "re-prove only part `I/N` of the cells (the I-th of N; sorted by estate/substrate, round robin) and write shard.json and the run folders to --out for `gauntlet merge`")
			fs.BoolVar(&f.dry, "dry-run", false, "list the cells and why, run nothing (the tree need not be clean)")
			fs.StringVar(&f.out, "out", "", "with --shard: the shard's `DIR` (default: out/shards/record-I-of-N)")
			return func(ctx context.Context, _ []string) error {
				if !*stale {
					return cli.Usagef("record", "record needs --stale: it re-proves the cells that are stale or missing")
				}
				if f.out != "" && f.shard.N == 0 {
					return cli.Usagef("record", "--out is the shard's folder: it needs --shard")
				}
				var err error
				if f.page, err = page.options("record"); err != nil {
					return err
				}
				f.estates = *estates
				return runRecord(ctx, f)
			}
		},
	}
}

type recordFlags struct {
	tf           toolchainFlags
	estates, out string
	jobs         int
	shard        shard
	dry          bool
	page         []evidence.Option
}

// runRecord re-proves the stale or missing cells (or lists them, dry).
func runRecord(ctx context.Context, f recordFlags) error {
	sh := f.shard
	var err error
	var session *recordSession
	var tree *conformance.Tree
	if f.dry {
		if tree, err = conformance.NewTree(ctx, "."); err != nil {
			return err
		}
	} else {
		if session, err = newRecordSession(ctx); err != nil {
			return err
		}
		tree = session.tree
	}
	w, err := statusWorld(tree)
	if err != nil {
		return err
	}
	// In the repository, as status verifies it: a row at a made-up commit
	// is a problem here too, and nothing is appended after it.
	ledger, err := conformance.VerifyIn(ctx, conformance.Git{Dir: "."}, ledgerPath, runsDir)
	if err != nil {
		return err
	}
	if len(ledger.Problems) > 0 {
		return fmt.Errorf("the ledger has %d problem(s), e.g. %s: `gauntlet status` lists them; nothing is appended to a ledger that does not verify", len(ledger.Problems), ledger.Problems[0])
	}
	needs, err := conformance.StaleCells(w, ledger)
	if err != nil {
		return err
	}
	took := lastDurations(ledger, runsDir)
	mine := longestFirst(pickNeeds(needs, sh), took)
	what := fmt.Sprintf("%d required cell(s) stale or missing", len(needs))
	if sh.N > 0 {
		what += fmt.Sprintf(", %d in shard %s", len(mine), sh)
	}
	fmt.Printf("record --stale: %s (engine %s, oracle %s)\n", what, w.Engine, w.Oracle)
	for _, n := range mine {
		kind := "stale"
		if n.Missing {
			kind = "missing"
		}
		fmt.Printf("  %-40s %-7s %s\n", n.Estate+" on "+n.Substrate, kind, n.Why)
	}
	if est := estimate(mine, took, f.jobs); est != "" {
		fmt.Println(est)
	}
	if f.dry {
		return nil
	}
	start := time.Now()
	runs := recordCells(ctx, session, mine, f)
	if sh.N > 0 {
		dir := f.out
		if dir == "" {
			dir = sh.dir("record", "")
		}
		if err := writeRecordShard(dir, sh, session.head, needs, runs); err != nil {
			return err
		}
		fmt.Printf("wrote %s: `gauntlet merge` it with the other shards' folders\n", filepath.Join(dir, shardFile))
	}
	return summarise(runs, time.Since(start), f.jobs)
}

// pickNeeds is a shard's part of the cells, by name.
func pickNeeds(needs []conformance.Need, sh shard) []conformance.Need {
	byName := map[string]conformance.Need{}
	var names []string
	for _, n := range needs {
		byName[n.Name()] = n
		names = append(names, n.Name())
	}
	var mine []conformance.Need
	for _, name := range sh.pick(names) {
		mine = append(mine, byName[name])
	}
	return mine
}

// recordCells runs and records each cell, jobs at a time, through the
// path `run --record` takes. A cancelled context starts no further cell.
func recordCells(ctx context.Context, session *recordSession, needs []conformance.Need, f recordFlags) []cellRun {
	runs := make([]cellRun, len(needs))
	sem := make(chan struct{}, max(1, f.jobs))
	var wg sync.WaitGroup
	for i, n := range needs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			runs[i] = cellRun{need: n, err: context.Cause(ctx)}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			runs[i] = recordCell(ctx, session, n, f)
		}()
	}
	wg.Wait()
	return runs
}

func recordCell(ctx context.Context, session *recordSession, n conformance.Need, f recordFlags) cellRun {
	start := time.Now()
	cr := cellRun{need: n}
	p := runParams{name: n.Estate, estates: f.estates, sides: sideFlags{substrate: n.Substrate}, tf: f.tf, session: session, page: f.page,
		out:       filepath.Join("out", "record", n.Estate+"-"+n.Substrate),
		reproduce: "go run ./tools/gauntlet run " + n.Estate + " --substrate " + n.Substrate + " --record"}
	rc, err := session.prepare(ctx, n.Estate, n.Substrate, nil, "", "")
	if err != nil {
		cr.err = err
		return cr
	}
	p.rc = rc
	res, err := runOne(ctx, p)
	cr.took = time.Since(start)
	if res != nil {
		cr.headline, cr.clear = evidence.Headline(res), res.ExitCode == 0
	}
	cr.dir, cr.err = rc.dir, err
	return cr
}

// summarise prints what was re-proved, how long each took, and a total;
// it fails when any cell was not recorded or not clear (allOutcome: 1
// when a recorded cell is not clear, else 3 when one was not recorded).
func summarise(runs []cellRun, took time.Duration, jobs int) error {
	fmt.Printf("\nre-proved %d cell(s) in %s, %d at a time:\n", len(runs), took.Round(time.Second), max(1, jobs))
	recorded, clear := 0, 0
	for _, r := range runs {
		cell := r.need.Estate + " on " + r.need.Substrate
		if r.err != nil || r.dir == "" {
			fmt.Printf("  %-40s %8s  NOT RECORDED: %v\n", cell, r.took.Round(time.Second), r.err)
			continue
		}
		recorded++
		if r.clear {
			clear++
		}
		fmt.Printf("  %-40s %8s  %s  %s\n", cell, r.took.Round(time.Second), r.dir, r.headline)
	}
	fmt.Printf("summary: %d recorded (%d clear, %d not clear), %d not recorded; commit %s and the run folders, then `gauntlet status --require-all`\n",
		recorded, clear, recorded-clear, len(runs)-recorded, ledgerPath)
	return allOutcome(recorded-clear, len(runs)-recorded)
}

// writeRecordShard leaves a record shard's run folders and manifest in
// dir for `gauntlet merge`.
func writeRecordShard(dir string, sh shard, commit string, all []conformance.Need, runs []cellRun) error {
	var names, items []string
	for _, n := range all {
		names = append(names, n.Name())
	}
	for _, r := range runs {
		items = append(items, r.need.Name())
	}
	m := newManifest("record", sh, commit, names, items)
	for _, r := range runs {
		if r.dir == "" {
			m.Results[r.need.Name()] = fmt.Sprintf("not recorded: %v", r.err)
			continue
		}
		id := filepath.Base(r.dir)
		if err := copyDir(r.dir, filepath.Join(dir, "runs", id)); err != nil {
			return err
		}
		m.Runs = append(m.Runs, id)
		m.Dirs[r.need.Name()] = "runs/" + id
		m.Results[r.need.Name()] = r.headline
	}
	return m.write(dir)
}

// runAll runs every estate (or a shard's part of them), one after
// another, each into out/<estate>/, and writes out/index.md.
func runAll(ctx context.Context, p runParams, out string, rec bool, sh shard) error {
	names, err := estate.List(p.estates)
	if err != nil {
		return err
	}
	mine := sh.pick(names)
	if out == "" {
		out = sh.dir("run", "out")
	}
	var session *recordSession
	if rec {
		if session, err = newRecordSession(ctx); err != nil {
			return err
		}
	}
	m := newManifest("run", sh, gitCommit(ctx), names, mine)
	notClear, couldNotRun := 0, 0
	for _, name := range mine {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		q := p
		q.name, q.out, q.session = name, filepath.Join(out, name), session
		q.reproduce = "go run ./tools/gauntlet run " + name + " --substrate " + p.sides.substrate
		if rec {
			if q.rc, err = session.prepare(ctx, name, p.sides.substrate, p.stages, p.sides.engine, p.sides.oracle); err != nil {
				return err
			}
		}
		m.Dirs[name] = name
		res, err := runOne(ctx, q)
		switch {
		case err != nil:
			couldNotRun++
			m.Results[name] = "error: " + err.Error()
			fmt.Fprintf(os.Stderr, "gauntlet run --all: %s: %v\n", name, err)
		default:
			m.Results[name] = evidence.Headline(res)
			if res.ExitCode != 0 {
				notClear++
			}
		}
		if q.rc != nil && q.rc.dir != "" {
			m.Runs = append(m.Runs, filepath.Base(q.rc.dir))
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeIndex(out, "gauntlet run --all", mine, m.Dirs, m.Results); err != nil {
		return err
	}
	if sh.N > 0 {
		for _, id := range m.Runs {
			if err := copyDir(filepath.Join(runsDir, id), filepath.Join(out, "runs", id)); err != nil {
				return err
			}
		}
		if err := m.write(out); err != nil {
			return err
		}
	}
	fmt.Printf("run --all: %d estate(s), %d not clear, %d could not run; wrote %s\n", len(mine), notClear, couldNotRun, filepath.Join(out, "index.md"))
	return allOutcome(notClear, couldNotRun)
}

// copyDir copies the regular files under from into to, which must not
// exist yet.
func copyDir(from, to string) error {
	if _, err := os.Stat(to); err == nil {
		return fmt.Errorf("%s already exists", to)
	}
	return filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			// Bazel's runfiles are symlinks to the files: copy what a link
			// names when that is a file, skip anything else.
			if d.Type()&os.ModeSymlink == 0 {
				return nil
			}
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				return nil
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}
