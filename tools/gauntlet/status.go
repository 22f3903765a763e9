package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
	"github.com/gauntlet-k8s/gauntlet/internal/evidence"
	"github.com/gauntlet-k8s/gauntlet/internal/expect"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

const (
	registryPath = conformance.RegistryPath
	runsDir      = "conformance/runs"
	ledgerPath   = "conformance/runs/ledger.jsonl"
)

// recording is what `run --record` checks before any cluster starts and
// again after the run: a clean tree, and the inputs the proof is about.
type recording struct {
	git    conformance.Git
	head   string
	inputs *conformance.Inputs
	// session, when one command records many runs, tells its own
	// recordings apart from a change to the tree; dir is the run folder
	// once recorded.
	session *recordSession
	dir     string
}

// prepareRecord refuses a dirty tree (naming the files) and computes the
// run's inputs, before anything starts.
//
// exe is the running binary: it must be the runner built from this clean
// tree (see conformance.CheckBinary), with no workspace and no replace
// outside the module, or the proof would be about other code than its
// inputs name.
func prepareRecord(ctx context.Context, exe, estateName, substrate string, stages []string, engineSpec, oracleSpec string) (*recording, error) {
	g, head, tree, err := cleanTree(ctx, exe)
	if err != nil {
		return nil, err
	}
	clis, err := recordCLIs(tree, engineSpec, oracleSpec)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	in, err := tree.Inputs(estateName, substrate, stages, clis...)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return &recording{git: g, head: head, inputs: in}, nil
}

// cleanTree refuses a dirty tree (naming the files), a workspace or a
// replace outside the module, and a running binary exe not built from this
// tree; it returns the tree's git, HEAD and inputs. `run --record` and
// `record --stale` start from it.
func cleanTree(ctx context.Context, exe string) (conformance.Git, string, *conformance.Tree, error) {
	g := conformance.Git{Dir: "."}
	dirty, err := g.Dirty(ctx)
	if err != nil {
		return g, "", nil, fmt.Errorf("record: is the tree clean? %w", err)
	}
	if len(dirty) > 0 {
		return g, "", nil, fmt.Errorf("record: the tree has uncommitted changes, and a proof must be about a commit; commit, stash or remove (or .gitignore) these, then run again:\n  %s",
			strings.Join(dirty, "\n  "))
	}
	head, err := g.Head(ctx)
	if err != nil {
		return g, "", nil, fmt.Errorf("record: %w", err)
	}
	if err := conformance.CheckModule(ctx, "."); err != nil {
		return g, "", nil, fmt.Errorf("record: %w", err)
	}
	if err := conformance.CheckBinary(ctx, ".", exe); err != nil {
		return g, "", nil, fmt.Errorf("record: %w", err)
	}
	tree, err := conformance.NewTree(ctx, ".")
	if err != nil {
		return g, "", nil, fmt.Errorf("record: %w", err)
	}
	return g, head, tree, nil
}

// recordCLIs are the pin keys of a run's two engines when either is not
// today's pinned pair (a pinned engine named by spec, e.g. tofu@1.9.4, or
// another oracle); nil for today's pair or an engine given by path (which
// is unpinned and keyed by its sha256 alone).
func recordCLIs(tree *conformance.Tree, engineSpec, oracleSpec string) ([]string, error) {
	if engineSpec != "" && !isEngineSpec(engineSpec) {
		return nil, nil // by path: unpinned, keyed by its sha256 alone
	}
	if engineSpec == "" && oracleSpec == "" {
		return nil, nil
	}
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, spec := range []string{orDefault(engineSpec, "tofu"), orDefault(oracleSpec, "terraform")} {
		e, err := pins.Engine(spec)
		if err != nil {
			return nil, err
		}
		k := tree.CLIKey(e.Engine, e.Version)
		if k == "" {
			return nil, fmt.Errorf("engine %s has no pin in the tree", e)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// record keeps the run's evidence in a new run folder and appends the
// rows derived from that folder to the ledger. Recording is explicit (run
// --record): a run that recorded itself silently is how a bad run becomes
// a lasting false proof.
func (rc *recording) record(ctx context.Context, res *result.Run, page ...evidence.Option) (string, error) {
	if res.Cancelled != nil {
		return "", fmt.Errorf("not recorded: the run was cancelled (%s in %q); a cancelled run proves nothing", res.Cancelled.Signal, res.Cancelled.Stage)
	}
	defer rc.session.lock()()
	// The tree must still be what the run started from: nothing edited
	// while it ran.
	dirty, err := rc.git.Dirty(ctx)
	if err != nil {
		return "", err
	}
	dirty = rc.session.foreign(dirty)
	head, err := rc.git.Head(ctx)
	if err != nil {
		return "", err
	}
	if len(dirty) > 0 || head != rc.head {
		return "", fmt.Errorf("not recorded: the tree changed while the run ran (HEAD %s -> %s; uncommitted: %v)", rc.head, head, dirty)
	}
	id := conformance.RunID(res, rc.inputs.Substrate)
	dir := filepath.Join(runsDir, id)
	if err := os.MkdirAll(runsDir, 0o755); err != nil {
		return "", err
	}
	// Mkdir, not MkdirAll: run folders never overwrite each other.
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("not recorded: run folder %s: %w", dir, err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	if _, err := evidence.WriteAll(dir, res, page...); err != nil {
		return "", err
	}
	b, err := rc.inputs.Encode()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, conformance.InputsJSON), b, 0o644); err != nil {
		return "", err
	}
	if _, err := conformance.Append(ledgerPath, runsDir, id); err != nil {
		return "", fmt.Errorf("not recorded: %w", err)
	}
	ok = true
	rc.session.wrote(dir)
	return dir, nil
}

// stageClaims maps each stage to the requirements it verifies.
func stageClaims() map[string][]string {
	claims := map[string][]string{}
	for _, s := range stage.Default().Stages() {
		claims[s.Info().ID] = s.Info().AllRequirements()
	}
	return claims
}

// gateExit is a gate's outcome with the gate's exit code.
func gateExit(code int, format string, args ...any) error {
	return &cli.ExitError{Code: code, Err: fmt.Errorf(format, args...)}
}

func statusCommand() cli.Command {
	return cli.Command{
		Name:    "status",
		Summary: "requirement coverage and proof from the conformance ledger",
		Doc: "Shows every requirement of conformance/requirements.yaml with its proof per cell (estate, engine, oracle, substrate), " +
			"derived from the ledger rows, each rebuilt from its run folder under conformance/runs/. With --requirements or " +
			"--require-all it is a gate: exit 0 when proven (or a documented gap), 1 when any is failed, stale, unbacked or a " +
			"ledger line is forged, 4 when nothing failed but some are not proven yet (not run, partial). --hygiene is CI's check " +
			"of the ledger itself. Run it from the repository's root.",
		Examples: []cli.Example{
			{What: "the report", Command: "gauntlet status"},
			{What: "the merge gate for the requirements a change touches", Command: "gauntlet status --requirements GAUNT-DAY2-CRASH-01,GAUNT-DRIFT-01"},
			{What: "CI's ledger check against the merge base", Command: "gauntlet status --hygiene"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var f statusFlags
			fs.StringVar(&f.reqs, "requirements", "", "merge gate: the requirement `IDS`, comma-separated, that must be proven (exit 0 proven / 1 failed, stale or forged / 4 only not-run or partial)")
			fs.BoolVar(&f.all, "require-all", false, "phase-exit gate: every requirement must be proven, or a documented gap (same exit codes)")
			fs.BoolVar(&f.hygiene, "hygiene", false, "CI gate: the registry parses, coverage is clean, every ledger row rebuilds from its run folder, and the ledger only grew since --base (exit 0/1; says nothing about proof)")
			fs.StringVar(&f.base, "base", "", "with --hygiene: the `REV` the ledger must only have grown from (default: the merge base with main, else HEAD^)")
			fs.BoolVar(&f.strict, "strict-coverage", false, "exit 1 when a requirement has no stage or a stage claims an unregistered one (part of --hygiene)")
			fs.BoolVar(&f.asJSON, "json", false, "print the report and the gate as JSON instead of text")
			fs.StringVar(&f.md, "md", "", "also write the report as markdown to `FILE` (e.g. out/status.md)")
			return func(ctx context.Context, _ []string) error {
				// Given, even empty: `--requirements ""` is a usage error,
				// not the report.
				fs.Visit(func(fl *flag.Flag) { f.reqsGiven = f.reqsGiven || fl.Name == "requirements" })
				return runStatus(ctx, f)
			}
		},
	}
}

type statusFlags struct {
	reqs, base, md               string
	reqsGiven                    bool
	all, hygiene, strict, asJSON bool
}

// proofWorld is what status and record derive proof from, for tree: the
// registry and its coverage, the capabilities each stage needs, the
// pinned engine and oracle, and what the stock engine can do.
func proofWorld(tree *conformance.Tree, reg *conformance.Registry, cov conformance.Coverage) (conformance.World, error) {
	w := conformance.World{Registry: reg, Coverage: cov, Current: tree, Needs: map[string][]string{}}
	for _, s := range stage.Default().Stages() {
		in := s.Info()
		for _, c := range in.Needs {
			w.Needs[in.ID] = append(w.Needs[in.ID], string(c))
		}
	}
	for _, cli := range []struct {
		name string
		pin  *conformance.PinnedCLI
	}{{"tofu", &w.Engine}, {"terraform", &w.Oracle}} {
		v, sha, ok := tree.PinnedCLI(cli.name)
		if !ok {
			return w, fmt.Errorf("third_party/pins.json pins no %s", cli.name)
		}
		*cli.pin = conformance.PinnedCLI{Name: cli.name, Version: v, SHA256: sha}
	}
	caps := engine.StockCapabilities(w.Engine.Name, w.Engine.Version)
	w.SubjectHas = func(c string) bool { return caps[engine.Capability(c)] }
	var err error
	if w.Estates, err = estate.List("estates"); err != nil {
		return w, err
	}
	w.Declines = declines("estates")
	w.Judge = judgeRun("estates", runsDir)
	return w, nil
}

func runStatus(ctx context.Context, f statusFlags) error {
	reg, err := conformance.LoadRegistry(registryPath)
	if err != nil {
		return err
	}
	cov := conformance.ComputeCoverage(reg, stageClaims())
	var ids []string
	if f.reqsGiven && f.all {
		// Both would judge only the listed ones: every requirement is what
		// --require-all promises, so the pair is refused, not narrowed.
		return cli.Usagef("status", "--require-all and --requirements together: --require-all judges every requirement; drop --requirements, or drop --require-all to gate only %s", f.reqs)
	}
	if f.reqsGiven {
		// An empty list is a mistake (an unset variable in a script), never
		// "every requirement": that gate is --require-all.
		for _, id := range strings.Split(f.reqs, ",") {
			if id = strings.TrimSpace(id); id == "" {
				return cli.Usagef("status", "--requirements %q names an empty requirement: give the IDs the change touches, comma-separated (GAUNT-DRIFT-01,GAUNT-MIG-01), or use --require-all for every one", f.reqs)
			}
			ids = append(ids, id)
		}
	}
	if f.hygiene {
		return runHygiene(ctx, reg, cov, f.base)
	}
	ledger, err := conformance.VerifyIn(ctx, conformance.Git{Dir: "."}, ledgerPath, runsDir)
	if err != nil {
		return err
	}
	tree, err := conformance.NewTree(ctx, ".")
	if err != nil {
		return err
	}
	w, err := proofWorld(tree, reg, cov)
	if err != nil {
		return err
	}
	rep, err := conformance.Derive(w, ledger)
	if err != nil {
		return err
	}
	gate, err := rep.Gate(ids)
	if err != nil {
		return err
	}
	if f.md != "" {
		full, err := rep.Gate(nil)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := conformance.WriteMarkdown(&b, rep, full); err != nil {
			return err
		}
		if err := os.WriteFile(f.md, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.md, err)
		}
	}
	if f.asJSON {
		if err := conformance.WriteJSON(os.Stdout, rep, gate); err != nil {
			return err
		}
	} else if err := conformance.WriteText(os.Stdout, rep); err != nil {
		return err
	}
	if f.strict && !cov.Clean() {
		return gateExit(1, "coverage is not clean: uncovered %v, unregistered %v", cov.Uncovered, cov.Unregistered)
	}
	if !f.all && len(ids) == 0 {
		// A report, not a gate: only a ledger that does not verify fails it.
		if len(rep.Problems) > 0 {
			return gateExit(1, "%d ledger line(s) do not rebuild from their run folders (see LEDGER PROBLEM above)", len(rep.Problems))
		}
		return nil
	}
	scope := "--require-all"
	if len(ids) > 0 {
		scope = "--requirements " + strings.Join(ids, ",")
	}
	if !f.asJSON {
		fmt.Printf("\ngate %s: exit %d\n", scope, gate.Code)
		for _, l := range gate.Blocking {
			fmt.Println("  blocking: " + l)
		}
		for _, l := range gate.Waiting {
			fmt.Println("  waiting:  " + l)
		}
		for _, l := range gate.Gaps {
			fmt.Println("  gap:      " + l)
		}
	}
	switch gate.Code {
	case conformance.ExitProven:
		return nil
	case conformance.ExitFailed:
		return gateExit(gate.Code, "%s: %d blocking (failed, stale, unbacked or a ledger problem)", scope, len(gate.Blocking))
	default:
		return gateExit(gate.Code, "%s: nothing failed, but %d requirement(s) are not proven yet (not run, partial or unprovable)", scope, len(gate.Waiting))
	}
}

// declines says why an estate's estate.yaml declares a stage does not
// apply to it: it skips the stage with a reason, or lacks the section the
// stage needs (fence, handoff). An estate that does not load declines
// nothing: its runs, if any, speak for it.
func declines(root string) func(estateName, stageID string) string {
	specs := map[string]*estate.Spec{}
	stages := stage.Default()
	return func(estateName, stageID string) string {
		spec, ok := specs[estateName]
		if !ok {
			spec, _ = estate.Load(root, estateName)
			specs[estateName] = spec
		}
		if spec == nil {
			return ""
		}
		if why, ok := spec.Skip[stageID]; ok {
			return "the estate skips it: " + why
		}
		if f, ok := spec.Findings[stageID]; ok {
			return "the estate lists it as a finding: " + f.Why
		}
		if st, ok := stages.Lookup(stageID); ok {
			return st.Info().Undeclared(spec)
		}
		return ""
	}
}

// judgeRun judges a recorded run of an estate (its run folder's run.json)
// against the estate's estate.yaml now, as the estate's test would
// (expect.Judge); a run that left stages out never proves an estate. (A
// sabotaged or replayed run never reaches the ledger: BuildRows.)
func judgeRun(root, runs string) func(estateName, run string) ([]string, error) {
	return func(estateName, run string) ([]string, error) {
		spec, err := estate.Load(root, estateName)
		if err != nil {
			return nil, err
		}
		raw, err := os.ReadFile(filepath.Join(runs, run, conformance.RunJSON))
		if err != nil {
			return nil, err
		}
		var res result.Run
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("%s: %w", conformance.RunJSON, err)
		}
		var out []string
		for _, s := range res.Stages {
			if s.Verdict == result.NotRun && s.Cause == result.CauseNotSelected {
				out = append(out, s.ID+": left out of the run (--stages): an estate's cell needs a run of every stage")
			}
		}
		return append(out, expect.Problems(expect.Judge(spec, &res))...), nil
	}
}

// runHygiene is the CI gate: the ledger is intact and only grew. It does
// not ask for proofs (a stale or unrecorded proof is for a human to renew
// with `run --record`, reported by --require-all).
func runHygiene(ctx context.Context, reg *conformance.Registry, cov conformance.Coverage, base string) error {
	var problems []string
	if !cov.Clean() {
		problems = append(problems, fmt.Sprintf("coverage: uncovered %v, unregistered %v", cov.Uncovered, cov.Unregistered))
	}
	g := conformance.Git{Dir: "."}
	ledger, err := conformance.VerifyIn(ctx, g, ledgerPath, runsDir)
	if err != nil {
		return err
	}
	for _, p := range ledger.Problems {
		problems = append(problems, "ledger "+p.String())
	}
	referenced := map[string]bool{}
	for _, r := range ledger.Rows {
		referenced[r.Run] = true
	}
	for _, r := range ledger.History {
		referenced[r.Run] = true
	}
	for _, p := range ledger.Problems {
		referenced[p.Run] = true
	}
	entries, err := os.ReadDir(runsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			problems = append(problems, fmt.Sprintf("%s/%s is a symbolic link: a run folder is a folder of its own, never a link", runsDir, e.Name()))
			continue
		}
		if e.IsDir() && !referenced[e.Name()] {
			problems = append(problems, fmt.Sprintf("run folder %s/%s has no ledger row: record runs with `run --record`, never by hand", runsDir, e.Name()))
		}
	}
	// Every commit that changed the ledger only appended to it: a rewrite
	// followed by any later commit is caught too, not only the last step.
	grew, err := g.LedgerGrew(ctx, ledgerPath)
	if err != nil {
		return err
	}
	for _, p := range grew {
		problems = append(problems, "append-only in history: "+p)
	}
	links, err := g.Links(ctx, filepath.Dir(ledgerPath))
	if err != nil {
		return err
	}
	for _, l := range links {
		problems = append(problems, fmt.Sprintf("%s is committed as a symbolic link: a run's evidence is files of its own; commit the file itself", l))
	}
	why := "--base"
	if base == "" {
		if base, why, err = g.Base(ctx); err != nil {
			return err
		}
	}
	if base == "" {
		// Unchecked is not clean: a rewritten ledger would pass here.
		problems = append(problems, fmt.Sprintf("append-only: cannot be checked: %s; fetch the whole history and main (git fetch --unshallow origin main), or name the revision the ledger must have grown from with --base REV", why))
	} else {
		then, ok, err := g.Show(ctx, base, ledgerPath)
		if err != nil {
			return err
		}
		now, err := os.ReadFile(ledgerPath)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if !ok {
			fmt.Printf("append-only: %s (%s) has no ledger: nothing to compare\n", why, base[:min(12, len(base))])
		} else if err := conformance.AppendOnly(then, now); err != nil {
			problems = append(problems, fmt.Sprintf("append-only against %s (%s): %v", why, base[:min(12, len(base))], err))
		} else {
			fmt.Printf("append-only: the ledger only grew since %s (%s)\n", why, base[:min(12, len(base))])
		}
	}
	fmt.Printf("hygiene: %d requirements, %d ledger rows verified against their run folders, %d history rows\n", len(reg.Requirements), len(ledger.Rows), len(ledger.History))
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Println("  " + p)
		}
		return gateExit(1, "hygiene: %d problem(s)", len(problems))
	}
	return nil
}
