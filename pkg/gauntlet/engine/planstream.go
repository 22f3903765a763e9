package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The machine-readable UI (`plan -json`) prints one JSON object per line:
// a planned_change per resource instance the plan acts on, moves or
// imports, and one change_summary with the counts a person would read.
// It says less than show -json of the saved plan: no values, no order of
// a replace, no deposed key. readStream takes it only when nothing that
// is missing could matter, and says so.

// streamLine is the part of one line of the stream gauntlet reads.
type streamLine struct {
	Level      string `json:"@level"`
	Message    string `json:"@message"`
	Type       string `json:"type"`
	Diagnostic *struct {
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Detail   string `json:"detail"`
	} `json:"diagnostic"`
	Change *struct {
		Resource         streamAddr  `json:"resource"`
		PreviousResource *streamAddr `json:"previous_resource"`
		Action           string      `json:"action"`
		Importing        *struct{}   `json:"importing"`
	} `json:"change"`
	Changes *struct {
		Add, Change, Import, Remove, Forget int
		Operation                           string
	} `json:"changes"`
}

type streamAddr struct {
	Addr     string `json:"addr"`
	Resource string `json:"resource"`
}

// streamed is what a plan's stream said.
type streamed struct {
	changes []Change
	counts  Counts // counted from the planned changes
	printed Counts // the change_summary
	summary bool   // a change_summary was printed
	// partial names why the stream does not say all show -json would:
	// a replace (create_before_destroy or not) or a delete (perhaps of a
	// deposed object, which the stream does not tell apart).
	partial string
}

// jsonLine decodes one line of the stream; ok is false for anything else
// (a line a wrapper or a panic printed as plain text).
func jsonLine(l string) (streamLine, bool) {
	var sl streamLine
	l = strings.TrimSpace(l)
	if !strings.HasPrefix(l, `{"@level"`) || json.Unmarshal([]byte(l), &sl) != nil || sl.Type == "" {
		return streamLine{}, false
	}
	return sl, true
}

// readStream reads a plan's stream.
func readStream(out string) streamed {
	var s streamed
	for _, l := range strings.Split(out, "\n") {
		sl, ok := jsonLine(l)
		if !ok {
			continue
		}
		switch {
		case sl.Type == "change_summary" && sl.Changes != nil && sl.Changes.Operation == "plan":
			s.summary = true
			s.printed = Counts{Import: sl.Changes.Import, Add: sl.Changes.Add, Change: sl.Changes.Change, Destroy: sl.Changes.Remove}
		case sl.Type == "planned_change" && sl.Change != nil:
			s.add(sl)
		}
	}
	sort.Slice(s.changes, func(i, j int) bool { return s.changes[i].Address < s.changes[j].Address })
	return s
}

// add takes one planned change the way summarize takes show -json's.
func (s *streamed) add(sl streamLine) {
	ch := sl.Change
	if strings.HasPrefix(ch.Resource.Resource, "data.") || strings.HasPrefix(ch.Resource.Resource, "ephemeral.") || ephemeralAction(ch.Action) {
		return // show -json's data sources and ephemeral resources are not counted either
	}
	c := Change{Address: ch.Resource.Addr, Importing: ch.Importing != nil}
	if ch.PreviousResource != nil {
		c.PreviousAddress = ch.PreviousResource.Addr
	}
	switch ch.Action {
	case "create", "update", "read":
		c.Actions = []string{ch.Action}
	case "noop", "move", "import":
		c.Actions = []string{"no-op"}
	default: // replace, delete, remove, or one this reader does not know
		if s.partial == "" {
			s.partial = fmt.Sprintf("%s plans to %s", c.Address, ch.Action)
		}
		return
	}
	s.counts.take(c)
	s.changes = append(s.changes, c)
}

// humanize renders the stream's lines as the plain CLI would print them,
// enough for errorText and diagnostics: a diagnostic as "Error: summary"
// and its detail, any other line as its message. Lines that are not of
// the stream pass unchanged.
func humanize(out string) string {
	if !strings.Contains(out, `"@level"`) {
		return out
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		sl, ok := jsonLine(l)
		if !ok {
			continue
		}
		if d := sl.Diagnostic; d != nil {
			kind := "Warning"
			if d.Severity == "error" {
				kind = "Error"
			}
			text := kind + ": " + d.Summary
			if d.Detail != "" {
				text += "\n\n" + d.Detail
			}
			lines[i] = text + "\n"
			continue
		}
		lines[i] = sl.Message
	}
	return strings.Join(lines, "\n")
}
