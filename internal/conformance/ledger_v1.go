package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// RowV1 is the first ledger format (until the cell-keyed ledger): one
// stage of a run keyed by commit and engine name, with no content hashes,
// no chain and no check-level proof. Its rows stay in the ledger as
// history, verified against their run folders, and never prove anything.
type RowV1 struct {
	Run          string         `json:"run"`
	Time         time.Time      `json:"time"`
	Commit       string         `json:"commit"`
	Estate       string         `json:"estate"`
	Stage        string         `json:"stage"`
	Requirements []string       `json:"requirements"`
	Verdict      result.Verdict `json:"verdict"`
	Breaks       int            `json:"breaks"`
	BreaksFailed int            `json:"breaks_failed"`
	ChecksNotRun int            `json:"checks_not_run,omitempty"`
	Engine       string         `json:"engine"`
	Oracle       string         `json:"oracle"`
	Substrate    string         `json:"substrate"`
}

// rowsV1 is how the first format derived rows from a run.
func rowsV1(run *result.Run) []RowV1 {
	c := run.Commit
	if c == "" {
		c = "uncommitted"
	}
	hash, dirty := strings.CutSuffix(c, "-dirty")
	if len(hash) > 10 {
		hash = hash[:10]
	}
	if dirty {
		hash += "-dirty"
	}
	id := run.StartedAt.UTC().Format("20060102T150405Z") + "-" + run.Estate.Name + "-" + hash
	var rows []RowV1
	for _, s := range run.Stages {
		row := RowV1{
			Run: id, Time: run.StartedAt.UTC(), Commit: run.Commit, Estate: run.Estate.Name, Stage: s.ID,
			Requirements: s.Requirements, Verdict: s.Verdict, Breaks: len(s.Breaks),
			Engine: run.Subject.Name + " " + run.Subject.Version, Oracle: run.Oracle.Name + " " + run.Oracle.Version,
			Substrate: run.Substrate,
		}
		for _, b := range s.Breaks {
			if b.Failed {
				row.BreaksFailed++
			}
		}
		for _, c := range s.Checks {
			if c.Verdict == result.NotRun {
				row.ChecksNotRun++
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// verifyV1 checks a first-format line against its run folder's run.json.
func verifyV1(line []byte, runsDir string, cache map[string][]RowV1, repo *inRepo) (RowV1, error) {
	var row RowV1
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&row); err != nil {
		return row, fmt.Errorf("not a first-format row: %w", err)
	}
	rows, ok := cache[row.Run]
	if !ok {
		if row.Run == "" || strings.ContainsAny(row.Run, `/\`) || strings.HasPrefix(row.Run, ".") {
			return row, fmt.Errorf("run id %q is not a folder name", row.Run)
		}
		raw, err := os.ReadFile(filepath.Join(runsDir, row.Run, RunJSON))
		if err != nil {
			return row, fmt.Errorf("no run folder to rebuild it from: %w", err)
		}
		var run result.Run
		if err := json.Unmarshal(raw, &run); err != nil {
			return row, fmt.Errorf("%s: %w", RunJSON, err)
		}
		rows = rowsV1(&run)
		var claims []claim
		for _, r := range rows {
			claims = append(claims, claim{r.Stage, r.Requirements})
		}
		if err := repo.checkRun(run.Commit, run.StartedAt, claims); err != nil {
			return row, err
		}
		cache[row.Run] = rows
	}
	for _, r := range rows {
		if r.Stage != row.Stage {
			continue
		}
		want, err := json.Marshal(r)
		if err != nil {
			return row, err
		}
		if !bytes.Equal(want, line) {
			return row, fmt.Errorf("the line differs from what its run folder rebuilds (%s)", firstDiff(want, line))
		}
		return row, nil
	}
	return row, fmt.Errorf("its run folder has no stage %s", row.Stage)
}
