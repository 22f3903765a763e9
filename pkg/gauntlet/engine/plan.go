package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
)

// Counts are a plan's or apply's totals.
type Counts struct {
	Import, Add, Change, Destroy int
}

func (c Counts) String() string {
	s := fmt.Sprintf("%d to add, %d to change, %d to destroy", c.Add, c.Change, c.Destroy)
	if c.Import > 0 {
		s = fmt.Sprintf("%d to import, ", c.Import) + s
	}
	return s
}

// take counts one change the way the CLI does: a replace adds one and
// destroys one, an import is counted apart, a move or read counts nothing.
func (c *Counts) take(ch Change) {
	for _, a := range ch.Actions {
		switch a {
		case "create":
			c.Add++
		case "update":
			c.Change++
		case "delete":
			c.Destroy++
		}
	}
	if ch.Importing {
		c.Import++
	}
}

// Zero reports whether nothing is proposed.
func (c Counts) Zero() bool { return c == Counts{} }

// Change is what a plan proposes for one resource instance.
type Change struct {
	Address string
	// Actions are terraform-json's: "create", "update", "delete", "read",
	// "no-op"; a replace is ["create","delete"] (create_before_destroy) or
	// ["delete","create"].
	Actions []string
	// PreviousAddress is set when a moved block moved the instance.
	PreviousAddress string
	// Importing is set when an import block imports the instance.
	Importing bool
	// Deposed is the deposed object's key, when the change is to one.
	Deposed string
}

// Replace reports a replacement; CreateBeforeDestroy its order.
func (c Change) Replace() bool { return len(c.Actions) == 2 }

// CreateBeforeDestroy reports a replace that creates first.
func (c Change) CreateBeforeDestroy() bool {
	return c.Replace() && c.Actions[0] == "create"
}

// Noop reports a change that changes nothing (it may still move or import).
func (c Change) Noop() bool { return len(c.Actions) == 1 && c.Actions[0] == "no-op" }

// Plan is a parsed plan: per-address changes and the counts, both from the
// JSON and from the CLI's own summary line, checked against each other.
type Plan struct {
	File    string
	Changes []Change
	// Counts are computed from the JSON plan.
	Counts Counts
	// Printed are the counts the CLI printed ("Plan: 1 to add, ...").
	Printed Counts
	// Call is the plan call; Raw the parsed JSON.
	Call Call
	Raw  *tfjson.Plan
	// ExitCode is the CLI's exit code: with DetailedExitcode, 0 for a plan
	// without changes and 2 for one with changes, as the engine says.
	ExitCode int
}

// Actionable returns the changes that do something: not no-op, not a
// data source read.
func (p *Plan) Actionable() []Change {
	var out []Change
	for _, c := range p.Changes {
		if c.Noop() || (len(c.Actions) == 1 && c.Actions[0] == "read") {
			continue
		}
		out = append(out, c)
	}
	return out
}

// Find returns the change at address.
func (p *Plan) Find(address string) (Change, bool) {
	for _, c := range p.Changes {
		if c.Address == address {
			return c, true
		}
	}
	return Change{}, false
}

// PlanOptions are the plan flags gauntlet uses.
type PlanOptions struct {
	// Out is the plan file, relative to the workspace (default "gauntlet.tfplan").
	Out string
	// NoRefresh passes -refresh=false.
	NoRefresh bool
	// Parallelism passes -parallelism=N when > 0.
	Parallelism int
	// Targets pass -target=ADDR each.
	Targets []string
	// Destroy passes -destroy.
	Destroy bool
	// DetailedExitcode passes -detailed-exitcode: exit 2 (changes present)
	// is then a success, recorded in Plan.ExitCode.
	DetailedExitcode bool
	// Stream reads the plan from the engine's own machine-readable stream
	// (plan -json) instead of a second call, show -json of the saved plan:
	// one engine start less. The plan file is still saved. Raw is then
	// nil and Changes holds a no-op instance only when it moves or is
	// imported. A plan that replaces or deletes anything is still read by
	// show -json: the stream gives neither a replace's order nor a deposed
	// object's key.
	Stream bool
}

// Plan runs plan -out and show -json of that file (or reads the plan's
// stream, with Stream), and returns the parsed plan. A plan the CLI did
// not finish is an error, never an empty Plan.
func (w *Workspace) Plan(ctx context.Context, o PlanOptions, opts ...RunOption) (*Plan, error) {
	if o.Out == "" {
		o.Out = "gauntlet.tfplan"
	}
	args := []string{"plan", "-input=false", "-no-color", "-out=" + o.Out}
	if o.Stream {
		args = append(args, "-json")
	}
	if o.NoRefresh {
		args = append(args, "-refresh=false")
	}
	args = append(args, scopeArgs(o.Parallelism, o.Destroy, o.Targets)...)
	if o.DetailedExitcode {
		args = append(args, "-detailed-exitcode")
		opts = append(opts, AcceptExit(2))
	}
	call, err := w.Run(ctx, args, opts...)
	if err != nil {
		return nil, err
	}
	printed, ok := parsePlanLine(call.Output)
	if !ok {
		return nil, fmt.Errorf("%s plan: the CLI printed no plan summary (log: %s)", w.Engine.Profile.Name, w.citedLog(call))
	}
	var p *Plan
	if o.Stream {
		if s := readStream(call.Output); s.partial == "" {
			p = &Plan{Changes: s.changes, Counts: s.counts}
		}
	}
	if p == nil {
		raw, err := w.ShowPlan(ctx, o.Out)
		if err != nil {
			return nil, err
		}
		p = summarize(raw)
	}
	p.File, p.Printed, p.Call, p.ExitCode = o.Out, printed, call, call.ExitCode
	if p.Counts != p.Printed {
		return p, &SummaryMismatch{Engine: w.Engine.Profile.Name, JSON: p.Counts, Printed: p.Printed, Log: w.citedLog(call)}
	}
	return p, nil
}

// SummaryMismatch is a plan whose printed summary line disagrees with its
// own JSON plan: an engine finding (a person reviewing the plan reads the
// line), not a failure of gauntlet's machinery.
type SummaryMismatch struct {
	Engine        string
	JSON, Printed Counts
	Log           string
}

func (e *SummaryMismatch) Error() string {
	return fmt.Sprintf("%s plan: the JSON plan counts %s but the CLI printed %s (log: %s)", e.Engine, e.JSON, e.Printed, e.Log)
}

// ShowPlan runs show -json of a plan file and parses it.
func (w *Workspace) ShowPlan(ctx context.Context, file string) (*tfjson.Plan, error) {
	call, err := w.Run(ctx, []string{"show", "-json", "-no-color", file})
	if err != nil {
		return nil, err
	}
	var p tfjson.Plan
	if err := json.NewDecoder(strings.NewReader(jsonPart(call.Output))).Decode(&p); err != nil {
		return nil, fmt.Errorf("%s show -json %s: %w (log: %s)", w.Engine.Profile.Name, file, err, w.citedLog(call))
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s show -json %s: %w (log: %s)", w.Engine.Profile.Name, file, err, w.citedLog(call))
	}
	return &p, nil
}

// summarize turns a JSON plan into changes and their counts.
func summarize(raw *tfjson.Plan) *Plan {
	p := &Plan{Raw: raw}
	for _, rc := range raw.ResourceChanges {
		if rc.Change == nil || rc.Mode == tfjson.DataResourceMode || ephemeral(rc.Mode, rc.Change.Actions) {
			continue
		}
		c := Change{Address: rc.Address, PreviousAddress: rc.PreviousAddress, Importing: rc.Change.Importing != nil, Deposed: rc.DeposedKey}
		for _, a := range rc.Change.Actions {
			c.Actions = append(c.Actions, string(a))
		}
		if c.Deposed != "" {
			c.Address += " (deposed object " + c.Deposed + ")"
		}
		p.Counts.take(c)
		p.Changes = append(p.Changes, c)
	}
	sort.Slice(p.Changes, func(i, j int) bool { return p.Changes[i].Address < p.Changes[j].Address })
	return p
}

// ephemeral reports an ephemeral resource's entry: opened, renewed or
// closed on every run and never a change to the world or the state, so
// it is left out as a data source's read is. OpenTofu 1.11 lists it with
// the action "open" (mode "ephemeral"); a reader that counted it saw a
// change in every plan of a root with an ephemeral resource.
func ephemeral(mode tfjson.ResourceMode, actions tfjson.Actions) bool {
	if mode == "ephemeral" {
		return true
	}
	if len(actions) == 0 {
		return false
	}
	for _, a := range actions {
		if !ephemeralAction(string(a)) {
			return false
		}
	}
	return true
}

func ephemeralAction(a string) bool { return a == "open" || a == "renew" || a == "close" }

var (
	planLineRE = regexp.MustCompile(`(?m)^Plan: (?:(\d+) to import, )?(\d+) to add, (\d+) to change, (\d+) to destroy\.`)
	noChangeRE = regexp.MustCompile(`(?m)^No changes\.`)
)

// PrintedPlan reads the plan summary a call printed ("Plan: 1 to add,
// ..." or "No changes."), if it printed one.
func PrintedPlan(output string) (Counts, bool) { return parsePlanLine(output) }

// parsePlanLine reads the CLI's summary, plain or the stream's
// change_summary; "No changes." is all zeros.
func parsePlanLine(out string) (Counts, bool) {
	if s := readStream(out); s.summary {
		return s.printed, true
	}
	if m := planLineRE.FindStringSubmatch(out); m != nil {
		return Counts{Import: atoi(m[1]), Add: atoi(m[2]), Change: atoi(m[3]), Destroy: atoi(m[4])}, true
	}
	if noChangeRE.MatchString(out) || strings.Contains(out, "You can apply this plan to save these new output values") {
		return Counts{}, true
	}
	return Counts{}, false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// jsonPart drops anything a CLI printed before its JSON document (warnings
// some versions print on stdout).
func jsonPart(s string) string {
	if i := strings.IndexByte(s, '{'); i > 0 {
		return s[i:]
	}
	return s
}
