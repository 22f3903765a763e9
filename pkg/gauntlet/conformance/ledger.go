package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Row is one ledger line: one stage of one recorded run.
type Row struct {
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

// Dirty reports a run made from uncommitted changes: no commit can vouch
// for what it ran, so it never proves anything.
func (r Row) Dirty() bool { return r.Commit == "" || strings.HasSuffix(r.Commit, "-dirty") }

// RunID names a run by its start time and commit.
func RunID(run *result.Run) string {
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
	return run.StartedAt.UTC().Format("20060102T150405Z") + "-" + run.Estate.Name + "-" + hash
}

// Rows turns a run into ledger rows, one per stage.
func Rows(run *result.Run) []Row {
	id := RunID(run)
	var rows []Row
	for _, s := range run.Stages {
		row := Row{
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

// Append adds rows to the ledger file (created if absent). The ledger is
// append-only: nothing rewrites an earlier line.
func Append(path string, rows []Row) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// Read reads every row of a ledger; a missing ledger has none.
func Read(path string) ([]Row, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r Row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}
