package bugs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// RunJSON is the file of a run folder Verify reads.
const RunJSON = "run.json"

// Known answers whether an estate or a stage exists here.
type Known struct {
	Estate func(name string) bool
	Stage  func(id string) bool
}

// Seen is what one evidence run said: its verdict on the catch's stage
// and, on a fail, the line that carries the finding.
type Seen struct {
	Evidence
	Verdict result.Verdict
	Line    string
}

// Verified is a catalogue with what each caught row's runs said, keyed by
// bug id.
type Verified struct {
	*Catalogue
	Seen map[string][]Seen
}

// Verify reads every evidence run (paths from root) and checks what the
// catalogue claims of it: the run is of the catch's estate, the side ran
// the engine named, the stage failed with the finding on a "fail" and
// passed on a "pass". It returns every claim the runs do not bear out.
func Verify(c *Catalogue, root string, k Known) (*Verified, []string) {
	v := &Verified{Catalogue: c, Seen: map[string][]Seen{}}
	var problems []string
	for _, b := range c.Bugs {
		if b.Bisect != "" {
			if _, err := os.Stat(filepath.Join(root, b.Bisect)); err != nil || !strings.HasSuffix(b.Bisect, "bisect.md") {
				problems = append(problems, fmt.Sprintf("bug %s: bisect %s is not a bisect.md in the repository", b.ID, b.Bisect))
			}
		}
		if b.Caught == nil {
			continue
		}
		at := "bug " + b.ID
		if k.Estate != nil && !k.Estate(b.Caught.Estate) {
			problems = append(problems, fmt.Sprintf("%s: estate %s is not in estates/", at, b.Caught.Estate))
		}
		if k.Stage != nil && !k.Stage(b.Caught.Stage) {
			problems = append(problems, fmt.Sprintf("%s: stage %s is not a registered stage", at, b.Caught.Stage))
		}
		for _, e := range b.Caught.Evidence {
			s, err := see(root, b.Caught, e)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: evidence %s: %v", at, e.Run, err))
				continue
			}
			v.Seen[b.ID] = append(v.Seen[b.ID], s)
		}
	}
	return v, problems
}

func see(root string, c *Catch, e Evidence) (Seen, error) {
	s := Seen{Evidence: e}
	if filepath.IsAbs(e.Run) || strings.Contains(filepath.ToSlash(filepath.Clean(e.Run)), "../") {
		return s, fmt.Errorf("a run folder is a path inside the repository")
	}
	raw, err := os.ReadFile(filepath.Join(root, e.Run, RunJSON))
	if err != nil {
		return s, err
	}
	var r result.Run
	if err := json.Unmarshal(raw, &r); err != nil {
		return s, fmt.Errorf("%s: %w", RunJSON, err)
	}
	if r.Commit == "" || strings.HasSuffix(r.Commit, "-dirty") {
		return s, fmt.Errorf("a run of an uncommitted tree (commit %q): run it again from a clean checkout", r.Commit)
	}
	if r.Estate.Name != c.Estate {
		return s, fmt.Errorf("a run of %s, not of %s", r.Estate.Name, c.Estate)
	}
	eng := r.Subject
	if e.Side == "oracle" {
		eng = r.Oracle
	}
	if got := eng.Name + "@" + eng.Version; got != e.Engine {
		return s, fmt.Errorf("its %s ran %s, not %s", e.Side, got, e.Engine)
	}
	id := c.Stage
	if e.Stage != "" {
		id = e.Stage
	}
	var st *result.Stage
	for i := range r.Stages {
		if r.Stages[i].ID == id {
			st = &r.Stages[i]
		}
	}
	if st == nil {
		return s, fmt.Errorf("no stage %s in the run", id)
	}
	s.Verdict = st.Verdict
	switch e.Want {
	case "pass":
		if st.Verdict != result.Pass {
			return s, fmt.Errorf("%s is %s, where the catalogue says a fixed engine passes it", id, st.Verdict)
		}
	case "oracle_finding":
		for _, ch := range st.Checks {
			if ch.Verdict != result.OracleFinding {
				continue
			}
			for _, f := range ch.Findings {
				if f.Side == "oracle" && (strings.Contains(f.Got, c.Finding) || strings.Contains(f.Detail, c.Finding) || strings.Contains(f.Error(), c.Finding)) {
					s.Verdict, s.Line = result.OracleFinding, f.Error()
					return s, nil
				}
			}
		}
		return s, fmt.Errorf("%s has no check that is stock's finding saying %q", id, c.Finding)
	case "difference":
		if st.Verdict != result.Fail || st.Known == nil || !st.Known.Difference {
			return s, fmt.Errorf("%s is %s and not reported as an engine difference, where the catalogue says the run reports it as one", id, st.Verdict)
		}
		if s.Line = Says(st, c.Finding); s.Line == "" {
			return s, fmt.Errorf("%s is reported as an engine difference, but neither its detail nor a check says %q", c.Stage, c.Finding)
		}
		s.Verdict = "engine difference"
	case "fail":
		if st.Verdict != result.Fail {
			return s, fmt.Errorf("%s is %s, where the catalogue says the bug fails it", id, st.Verdict)
		}
		if s.Line = Says(st, c.Finding); s.Line == "" {
			return s, fmt.Errorf("%s failed, but neither its detail nor a check says %q", c.Stage, c.Finding)
		}
	}
	return s, nil
}

// Says returns the first line of the stage's detail or its checks'
// details and findings that holds the finding's text.
func Says(st *result.Stage, finding string) string {
	texts := []string{st.Detail}
	for _, ch := range st.Checks {
		texts = append(texts, ch.Detail)
		for _, f := range ch.Findings {
			texts = append(texts, f.Got, f.Detail)
		}
	}
	for _, t := range texts {
		for _, line := range strings.Split(t, "\n") {
			if strings.Contains(line, finding) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}
