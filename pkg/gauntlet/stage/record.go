package stage

import (
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
)

// Recorder collects what a stage observed: checks, breaks, figures and the
// sentences of its detail paragraph. Stages never format pages; they say
// what happened and the renderers lay it out.
type Recorder struct {
	sentences []string
	checks    []result.Check
	breaks    []result.Break
	figures   map[string]int
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{figures: map[string]int{}} }

// Say adds a sentence to the detail paragraph.
func (r *Recorder) Say(format string, args ...any) {
	s := strings.TrimSpace(fmt.Sprintf(format, args...))
	if s == "" {
		return
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	r.sentences = append(r.sentences, s)
}

// Check records an assertion: err == nil passes with detail, else fails
// with err. It returns whether it passed.
func (r *Recorder) Check(name string, err error, detail string) bool {
	c := result.Check{Name: name, Verdict: result.Pass, Detail: detail}
	if err != nil {
		c.Verdict, c.Detail = result.Fail, err.Error()
		r.Say("FAILED %s: %v", name, err)
	}
	r.checks = append(r.checks, c)
	return err == nil
}

// NotRun records a check the substrate or engine cannot show.
func (r *Recorder) NotRun(name, reason string) {
	r.checks = append(r.checks, result.Check{Name: name, Verdict: result.NotRun, Detail: reason})
}

// Break runs a corruption after the assertion passed. f returns the
// assertion's verdict under the corruption (it must be an error) and an
// infrastructure error, if the corruption itself could not be made.
func (r *Recorder) Break(name, corruption string, f func() (assertErr, err error)) error {
	assertErr, err := f()
	if err != nil {
		return fmt.Errorf("BREAK %s: %w", name, err)
	}
	b := result.Break{Name: name, Corruption: corruption, Failed: assertErr != nil}
	if assertErr != nil {
		b.Detail = assertErr.Error()
	} else {
		b.Detail = "the assertion still passed: it is not load-bearing"
	}
	r.breaks = append(r.breaks, b)
	return nil
}

// Figure records a measured count, e.g. "subject.api_requests".
func (r *Recorder) Figure(key string, v int) { r.figures[key] = v }

// Failed reports whether any check failed or any break did not.
func (r *Recorder) Failed() bool {
	for _, c := range r.checks {
		if c.Verdict == result.Fail {
			return true
		}
	}
	for _, b := range r.breaks {
		if !b.Failed {
			return true
		}
	}
	return false
}

// Fill writes what was recorded into a stage result.
func (r *Recorder) Fill(st *result.Stage) {
	st.Detail = strings.Join(r.sentences, " ")
	st.Checks = append(st.Checks, r.checks...)
	st.Breaks = append(st.Breaks, r.breaks...)
	if len(r.figures) > 0 {
		st.Figures = r.figures
	}
}
