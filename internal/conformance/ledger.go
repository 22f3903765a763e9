package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// RowVersion is the ledger row format this package writes.
const RowVersion = 2

// Identity is an engine as a proof keys it: what it says it is, the
// sha256 of the binary that ran, and the version its pin named (empty for
// a binary given by path: unpinned, never green for a gate).
type Identity struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
	Pinned  string `json:"pinned,omitempty"`
}

// Key is the identity as a cell names it, e.g. "tofu 1.12.6 5f90ff69380f".
func (i Identity) Key() string {
	s := i.Name + " " + i.Version + " "
	if i.SHA256 == "" {
		s += "unhashed"
	} else {
		s += shortHash(i.SHA256)
	}
	if i.Pinned == "" {
		s += " unpinned"
	}
	return s
}

func identity(e result.Engine) Identity {
	return Identity{Name: e.Name, Version: e.Version, SHA256: e.SHA256, Pinned: e.Pinned}
}

// Row is one ledger line: one stage of one recorded run. Every field is
// derived from the run folder (run.json, inputs.json) and the previous
// line, so `status` rebuilds it and rejects any line that differs.
type Row struct {
	V int `json:"v"`
	// Prev is the sha256 of the previous ledger line ("" for the first).
	Prev         string         `json:"prev"`
	Run          string         `json:"run"`
	Time         time.Time      `json:"time"`
	Commit       string         `json:"commit"`
	Estate       string         `json:"estate"`
	Substrate    string         `json:"substrate"`
	Stage        string         `json:"stage"`
	Requirements []string       `json:"requirements"`
	Verdict      result.Verdict `json:"verdict"`
	Reason       string         `json:"reason,omitempty"`
	// Checks counts the stage's checks; ChecksProved those that passed
	// with a BREAK that made them fail (or a stated reason none exists),
	// ChecksUnbacked those that passed with neither (recorded before
	// check-level proof), ChecksNotRun and ChecksFailed the rest.
	Checks         int `json:"checks"`
	ChecksProved   int `json:"checks_proved"`
	ChecksUnbacked int `json:"checks_unbacked"`
	ChecksNotRun   int `json:"checks_not_run"`
	ChecksFailed   int `json:"checks_failed"`
	// Breaks counts the BREAKs; BreaksProved those that proved,
	// BreaksFailing those that held, went off target or could not run
	// on the subject (not an engine finding), BreaksLegacy those recorded
	// without an outcome.
	Breaks          int      `json:"breaks"`
	BreaksProved    int      `json:"breaks_proved"`
	BreaksFailing   int      `json:"breaks_failing"`
	BreaksLegacy    int      `json:"breaks_legacy"`
	Engine          Identity `json:"engine"`
	Oracle          Identity `json:"oracle"`
	SubstrateDetail string   `json:"substrate_detail"`
	RunSHA256       string   `json:"run_sha256"`
	InputsSHA256    string   `json:"inputs_sha256"`
}

// RunID names a run folder by start time, estate, substrate and commit.
func RunID(run *result.Run, substrate string) string {
	c := run.Commit
	if c == "" {
		c = "uncommitted"
	}
	return run.StartedAt.UTC().Format("20060102T150405Z") + "-" + run.Estate.Name + "-" + substrate + "-" + shortHash(c)
}

var knownVerdicts = []result.Verdict{result.Pass, result.Fail, result.NotRun, result.Cancelled, result.Unproven, result.Limitation, result.OracleFinding}

// knownStageVerdicts are knownVerdicts and the one only a stage can have:
// not_applicable (the estate's shape cannot carry it), never a check's.
var knownStageVerdicts = append(slices.Clone(knownVerdicts), result.NotApplicable)

// RunFiles are the files of a run folder the ledger is derived from.
const (
	RunJSON    = "run.json"
	InputsJSON = "inputs.json"
	// EvidenceMD and JUnitXML are the run's pages: a folder without them
	// is not what `run --record` keeps.
	EvidenceMD = "evidence.md"
	JUnitXML   = "junit.xml"
)

// BuildRows derives a run folder's ledger rows (Prev unset): one per
// stage the run selected. It refuses what must never be recorded: a
// cancelled, sabotaged or replayed run, a run from uncommitted changes, an
// unknown verdict.
func BuildRows(id string, runJSON, inputsJSON []byte) ([]Row, error) {
	var run result.Run
	if err := json.Unmarshal(runJSON, &run); err != nil {
		return nil, fmt.Errorf("%s: %w", RunJSON, err)
	}
	in, err := ParseInputs(inputsJSON)
	if err != nil {
		return nil, err
	}
	switch {
	case run.Cancelled != nil:
		return nil, fmt.Errorf("the run was cancelled (%s): a cancelled run is never recorded", run.Cancelled.Signal)
	case run.Sabotaged:
		return nil, errors.New("the run is sabotaged (its BREAKs skipped their corruptions): it proves nothing and is never recorded")
	case run.OracleReplay != "":
		return nil, fmt.Errorf("the oracle's side was replayed from %s, not run: a replayed run is never recorded", run.OracleReplay)
	case run.Commit == "" || strings.HasSuffix(run.Commit, "-dirty"):
		return nil, fmt.Errorf("the run came from uncommitted changes (commit %q)", run.Commit)
	case in.Estate != run.Estate.Name:
		return nil, fmt.Errorf("inputs.json is for estate %s, run.json for %s", in.Estate, run.Estate.Name)
	case RunID(&run, in.Substrate) != id:
		return nil, fmt.Errorf("the folder is named %s, its run is %s", id, RunID(&run, in.Substrate))
	}
	for f := range in.EstateFiles {
		if !strings.HasPrefix(f, "estates/"+run.Estate.Name+"/") {
			return nil, fmt.Errorf("inputs.json hashes %s, outside estates/%s/: the folder is another estate's run", f, run.Estate.Name)
		}
	}
	runSHA, inSHA := hashBytes(runJSON), hashBytes(inputsJSON)
	var rows []Row
	for _, s := range run.Stages {
		if len(in.Stages) > 0 && !slices.Contains(in.Stages, s.ID) {
			continue
		}
		if !slices.Contains(knownStageVerdicts, s.Verdict) {
			return nil, fmt.Errorf("stage %s has unknown verdict %q", s.ID, s.Verdict)
		}
		for _, id := range s.Requirements {
			// Against the registry the run was recorded under (older runs
			// did not keep it): a requirement retired since stays readable.
			if in.Requirements != nil && in.Requirements[id] == "" {
				return nil, fmt.Errorf("stage %s claims requirement %s, which is not in the registry (%s) it was recorded under", s.ID, id, RegistryPath)
			}
		}
		r := Row{
			V: RowVersion, Run: id, Time: run.StartedAt.UTC(), Commit: run.Commit, Estate: run.Estate.Name, Substrate: in.Substrate,
			Stage: s.ID, Requirements: s.Requirements, Verdict: s.Verdict, Reason: s.Reason, Checks: len(s.Checks), Breaks: len(s.Breaks),
			Engine: identity(run.Subject), Oracle: identity(run.Oracle), SubstrateDetail: run.Substrate, RunSHA256: runSHA, InputsSHA256: inSHA,
		}
		if r.Requirements == nil {
			r.Requirements = []string{}
		}
		for _, c := range s.Checks {
			switch {
			case !slices.Contains(knownVerdicts, c.Verdict):
				return nil, fmt.Errorf("stage %s check %q has unknown verdict %q", s.ID, c.Name, c.Verdict)
			case (c.Verdict == result.Pass || c.Verdict == result.OracleFinding) && (len(c.ProvedBy) > 0 || c.NoBreak != ""):
				// An oracle's finding: the engine's side passed and its
				// BREAK proved it; stock's defect is the page's to say.
				r.ChecksProved++
			case c.Verdict == result.Pass || c.Verdict == result.OracleFinding:
				r.ChecksUnbacked++
			case c.Verdict == result.NotRun:
				r.ChecksNotRun++
			default:
				r.ChecksFailed++
			}
		}
		for _, b := range s.Breaks {
			switch {
			case b.Outcome == result.Proved:
				r.BreaksProved++
			case b.Outcome == "":
				r.BreaksLegacy++
			case !b.EngineFinding && b.Side != "oracle":
				r.BreaksFailing++
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, errors.New("the run has no selected stage to record")
	}
	return rows, nil
}

// encodeRows chains rows after the line prev and returns their lines.
func encodeRows(rows []Row, prev []byte) ([][]byte, error) {
	var lines [][]byte
	for _, r := range rows {
		if prev != nil {
			r.Prev = hashBytes(prev)
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("encode row: %w", err)
		}
		lines = append(lines, b)
		prev = b
	}
	return lines, nil
}

// Append derives the rows of the run folder runsDir/id and appends them
// to the ledger, chained to its last line. The ledger is append-only:
// nothing rewrites an earlier line.
func Append(ledger, runsDir, id string) (int, error) {
	runJSON, inputsJSON, err := readRunFolder(runsDir, id)
	if err != nil {
		return 0, err
	}
	rows, err := BuildRows(id, runJSON, inputsJSON)
	if err != nil {
		return 0, fmt.Errorf("run %s: %w", id, err)
	}
	raw, err := os.ReadFile(ledger)
	if err != nil && !os.IsNotExist(err) {
		return 0, fmt.Errorf("read the ledger: %w", err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		return 0, fmt.Errorf("%s does not end in a newline: it was edited by hand; restore it from git", ledger)
	}
	lines := splitLines(raw)
	// Never grow a ledger that does not verify: a row chained to a forged
	// one would carry the forgery along.
	if l := verifyLines(lines, runsDir, nil); len(l.Problems) > 0 {
		return 0, fmt.Errorf("the ledger has %d problem(s), e.g. %s; `gauntlet status` lists them, restore it from git", len(l.Problems), l.Problems[0])
	}
	var last []byte
	if len(lines) > 0 {
		last = lines[len(lines)-1]
	}
	out, err := encodeRows(rows, last)
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(ledger, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, fmt.Errorf("open the ledger: %w", err)
	}
	for _, l := range out {
		if _, err := f.Write(append(l, '\n')); err != nil {
			f.Close()
			return 0, fmt.Errorf("append to the ledger: %w", err)
		}
	}
	return len(out), f.Close()
}

func readRunFolder(runsDir, id string) (runJSON, inputsJSON []byte, err error) {
	if len(id) > 255 {
		return nil, nil, fmt.Errorf("a run id of %d bytes is not a folder name", len(id))
	}
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, nil, fmt.Errorf("run id %q is not a folder name", id)
	}
	dir := filepath.Join(runsDir, id)
	// A run folder is a folder of its own and what it keeps is its own: a
	// link could make one run's evidence speak for another folder. A file
	// linked to the same place in a mirror of the runs folder (Bazel's
	// runfiles link every file so) speaks only for itself; a link committed
	// to the repository is refused by hygiene (Git.Links).
	if fi, err := os.Lstat(dir); err != nil {
		return nil, nil, fmt.Errorf("run folder %s: %w", dir, err)
	} else if fi.Mode()&os.ModeSymlink != 0 {
		return nil, nil, fmt.Errorf("run folder %s: the folder is a symbolic link", dir)
	}
	for _, name := range []string{RunJSON, InputsJSON, EvidenceMD, JUnitXML} {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return nil, nil, fmt.Errorf("run folder %s: %w", dir, err)
		case fi.Mode()&os.ModeSymlink != 0 && !mirrored(p, runsDir, id, name):
			return nil, nil, fmt.Errorf("run folder %s: %s is a symbolic link to another place than its own", dir, name)
		}
	}
	if runJSON, err = os.ReadFile(filepath.Join(dir, RunJSON)); err != nil {
		return nil, nil, fmt.Errorf("run folder %s: %w", dir, err)
	}
	if inputsJSON, err = os.ReadFile(filepath.Join(dir, InputsJSON)); err != nil {
		return nil, nil, fmt.Errorf("run folder %s: %w", dir, err)
	}
	return runJSON, inputsJSON, nil
}

// mirrored reports whether the link at p resolves to a file at the same
// place in another copy of the runs folder: <runs>/<id>/<name>.
func mirrored(p, runsDir, id, name string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	folder := filepath.Dir(real)
	return filepath.Base(real) == name && filepath.Base(folder) == id &&
		filepath.Base(filepath.Dir(folder)) == filepath.Base(filepath.Clean(runsDir))
}

// readLines returns the ledger's lines without their newlines; a missing
// ledger has none.
func readLines(path string) ([][]byte, error) {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the ledger: %w", err)
	}
	return splitLines(raw), nil
}

// splitLines cuts the ledger at every newline, with no limit on a line's
// length: a line too long for a buffered scanner used to end the scan
// silently, dropping it and every line after it (a later failing run
// included). Every line comes back, and one that does not verify is a
// problem like any other.
func splitLines(raw []byte) [][]byte {
	if len(raw) == 0 {
		return nil
	}
	lines := bytes.Split(raw, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1] // the newline that ends the last line
	}
	return lines
}

// restoreFix is what to do about a ledger line that cannot be read: the
// ledger is only ever appended to, by `run --record`, so git holds every
// line as it was written.
const restoreFix = "restore the ledger from git: it is written only by `gauntlet run --record`, never by hand"

// Problem is a ledger line `status` refuses to believe.
type Problem struct {
	Line int    `json:"line"`
	Run  string `json:"run,omitempty"`
	What string `json:"what"`
}

func (p Problem) String() string {
	if p.Run != "" {
		// A forged line's run may be megabytes long: a few words say it.
		return fmt.Sprintf("line %d (run %s): %s", p.Line, clip([]byte(p.Run)), p.What)
	}
	return fmt.Sprintf("line %d: %s", p.Line, p.What)
}

// Ledger is the ledger as verified against its run folders.
type Ledger struct {
	// Rows are the verified current-format rows, in ledger order.
	Rows []Row
	// Inputs holds each verified run's inputs.json.
	Inputs map[string]*Inputs
	// History are rows of the first format (before cells, content hashes
	// and check-level proof), verified against their folders; they are
	// shown, never a proof.
	History []RowV1
	// Problems are lines that did not verify: a forged, edited, reordered
	// or orphaned row. Any problem fails every gate.
	Problems []Problem
}

// Verify reads the ledger and rebuilds every line from its run folder
// under runsDir: a line must match its rebuild byte for byte, chain to
// the line before it, and have a folder whose run.json and inputs.json
// hash as it says. Lines that do not are Problems, never rows.
//
// Verify does not ask whether the commits the runs name exist: VerifyIn
// does, and `status` uses it.
func Verify(ledger, runsDir string) (*Ledger, error) {
	lines, err := readLines(ledger)
	if err != nil {
		return nil, err
	}
	return verifyLines(lines, runsDir, nil), nil
}

// CommitExists reports whether a commit is in the repository a ledger is
// about; the error says why it cannot tell.
type CommitExists func(commit string) (bool, error)

// VerifyIn is Verify in the repository g: a run whose folder names a
// commit that does not exist there is a problem too (a folder copied
// from another repository, or its commit made up), and so is a run that
// kept no registry of its own (recorded before inputs.json did) whose
// stage claims a requirement the registry committed at its commit lacks.
func VerifyIn(ctx context.Context, g Git, ledger, runsDir string) (*Ledger, error) {
	lines, err := readLines(ledger)
	if err != nil {
		return nil, err
	}
	return verifyLines(lines, runsDir, &inRepo{exists: g.commitExists(ctx), ancestry: g.ancestry(ctx), registry: g.registryAt(ctx)}), nil
}

// inRepo is what VerifyIn asks of the repository a ledger is about; nil
// (Verify) asks nothing.
type inRepo struct {
	exists CommitExists
	// ancestry says when a commit was made and whether HEAD descends from
	// it.
	ancestry func(commit string) (committed time.Time, ancestor bool, err error)
	// registry returns the requirement IDs of the registry as committed
	// at a commit.
	registry func(commit string) (map[string]bool, error)
}

// claim is the requirements one stage of a run claims.
type claim struct {
	stage string
	ids   []string
}

// checkRun says why a run started at started and recorded at commit is not
// believed, or nil: its commit must exist and be an ancestor of HEAD (a
// commit on another branch, or one rewritten away, is not this history),
// the run cannot have started before its commit was made, and every
// requirement its stages claim must be in the registry as committed at
// that commit - also when the run kept a registry of its own in
// inputs.json, which the folder could have been edited to widen.
func (r *inRepo) checkRun(commit string, started time.Time, claims []claim) error {
	if r == nil {
		return nil
	}
	ok, err := r.exists(commit)
	switch {
	case err != nil:
		return fmt.Errorf("its run names commit %s, which cannot be checked: %w", commit, err)
	case !ok:
		return fmt.Errorf("its run names commit %s, which does not exist in this repository: a run folder is recorded at a commit of this history, never copied or made up", commit)
	}
	if r.ancestry != nil {
		committed, ancestor, err := r.ancestry(commit)
		switch {
		case err != nil:
			return fmt.Errorf("its run names commit %s, whose ancestry cannot be checked: %w", shortHash(commit), err)
		case !ancestor:
			return fmt.Errorf("its run names commit %s, which is not an ancestor of HEAD: a run is recorded at a commit of this branch's history", shortHash(commit))
		case started.Before(committed.Add(-clockSkew)):
			return fmt.Errorf("its run started %s, before its commit %s was made (%s): a run is recorded from its commit, never dated back",
				started.UTC().Format(time.RFC3339), shortHash(commit), committed.UTC().Format(time.RFC3339))
		}
	}
	known, err := r.registry(commit)
	if err != nil {
		return fmt.Errorf("the registry at its commit cannot be read: %w", err)
	}
	for _, c := range claims {
		for _, id := range c.ids {
			if !known[id] {
				return fmt.Errorf("stage %s claims requirement %s, which is not in the registry (%s) at its commit %s", c.stage, id, RegistryPath, shortHash(commit))
			}
		}
	}
	return nil
}

// clockSkew is how far a run's start may precede its commit's date: the
// two clocks are one machine's, but a commit's date is in whole seconds.
const clockSkew = 2 * time.Second

func verifyLines(lines [][]byte, runsDir string, repo *inRepo) *Ledger {
	l := &Ledger{Inputs: map[string]*Inputs{}}
	type built struct {
		rows []Row
		err  error
		next int
	}
	runs := map[string]*built{}
	v1 := map[string][]RowV1{}
	done := map[string]bool{} // runs whose rows ended (a run's rows are contiguous)
	current := ""
	var prev []byte
	for i, line := range lines {
		n := i + 1
		thisPrev := prev
		prev = line
		if len(bytes.TrimSpace(line)) == 0 {
			l.Problems = append(l.Problems, Problem{Line: n, What: "an empty line; " + restoreFix})
			continue
		}
		var probe struct {
			V   *int   `json:"v"`
			Run string `json:"run"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			l.Problems = append(l.Problems, Problem{Line: n, What: "not JSON (" + err.Error() + "); " + restoreFix})
			continue
		}
		if probe.V == nil {
			if len(l.Rows) > 0 {
				l.Problems = append(l.Problems, Problem{Line: n, Run: probe.Run, What: "a first-format row after current-format rows"})
				continue
			}
			row, err := verifyV1(line, runsDir, v1, repo)
			if err != nil {
				l.Problems = append(l.Problems, Problem{Line: n, Run: probe.Run, What: err.Error()})
				continue
			}
			l.History = append(l.History, row)
			continue
		}
		var row Row
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&row); err != nil {
			l.Problems = append(l.Problems, Problem{Line: n, Run: probe.Run, What: "not a ledger row (" + err.Error() + "); " + restoreFix})
			continue
		}
		if row.V != RowVersion {
			l.Problems = append(l.Problems, Problem{Line: n, Run: row.Run, What: fmt.Sprintf("row version %d, this gauntlet reads %d", row.V, RowVersion)})
			continue
		}
		if row.Run != current {
			if current != "" {
				done[current] = true
			}
			if done[row.Run] {
				l.Problems = append(l.Problems, Problem{Line: n, Run: row.Run, What: "the run's rows appear twice (recorded twice, or lines moved)"})
				continue
			}
			current = row.Run
		}
		b, ok := runs[row.Run]
		if !ok {
			b = &built{}
			runJSON, inputsJSON, err := readRunFolder(runsDir, row.Run)
			if err != nil {
				b.err = fmt.Errorf("no run folder to rebuild it from: %w", err)
			} else if b.rows, err = BuildRows(row.Run, runJSON, inputsJSON); err != nil {
				b.err = fmt.Errorf("its run folder does not rebuild: %w", err)
			} else {
				in, _ := ParseInputs(inputsJSON)
				var claims []claim
				for _, r := range b.rows {
					claims = append(claims, claim{r.Stage, r.Requirements})
				}
				if b.err = repo.checkRun(b.rows[0].Commit, b.rows[0].Time, claims); b.err != nil {
					b.rows = nil
				} else {
					l.Inputs[row.Run] = in
				}
			}
			runs[row.Run] = b
		}
		if b.err != nil {
			l.Problems = append(l.Problems, Problem{Line: n, Run: row.Run, What: b.err.Error()})
			continue
		}
		if b.next >= len(b.rows) {
			l.Problems = append(l.Problems, Problem{Line: n, Run: row.Run, What: "the run folder has no such row (an extra line)"})
			continue
		}
		want, _ := encodeRows(b.rows[b.next:b.next+1], thisPrev)
		b.next++
		if !bytes.Equal(want[0], line) {
			l.Problems = append(l.Problems, Problem{Line: n, Run: row.Run, What: "the line differs from what its run folder rebuilds (" + firstDiff(want[0], line) + ")"})
			continue
		}
		l.Rows = append(l.Rows, row)
	}
	for id, b := range runs {
		if b.err == nil && b.next != len(b.rows) {
			l.Problems = append(l.Problems, Problem{Line: len(lines), Run: id, What: fmt.Sprintf("the ledger holds %d of the run's %d rows", b.next, len(b.rows))})
		}
	}
	return l
}

// firstDiff names the first field where two encoded rows differ.
func firstDiff(want, got []byte) string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(want, &a) != nil || json.Unmarshal(got, &b) != nil {
		return "unreadable"
	}
	for _, k := range unionKeys(keysOf(a), keysOf(b)) {
		if !bytes.Equal(a[k], b[k]) {
			return fmt.Sprintf("field %s: the folder says %s, the line %s", k, clip(a[k]), clip(b[k]))
		}
	}
	return "field order or spacing"
}

func keysOf(m map[string]json.RawMessage) map[string]string {
	out := map[string]string{}
	for k := range m {
		out[k] = ""
	}
	return out
}

func clip(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

func shortHash(c string) string {
	c = strings.TrimSuffix(c, "-dirty")
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
