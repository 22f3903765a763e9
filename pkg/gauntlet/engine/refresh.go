package engine

import (
	"context"
	"fmt"
	"sort"
)

// Refresh is a refresh-only plan: what the engine says changed outside
// it, and the exit code it gave for that.
type Refresh struct {
	File string
	// ExitCode is the CLI's: with -detailed-exitcode, 0 for nothing to
	// record and 2 for changes outside the engine, as the engine says.
	ExitCode int
	// Drifted are the addresses the JSON plan's resource_drift lists:
	// the objects the engine found changed outside it.
	Drifted []string
	// NoChanges: the CLI printed "No changes.".
	NoChanges bool
	Call      Call
}

// RefreshOnlyPlan runs plan -refresh-only -detailed-exitcode -out=out and
// show -json of that file. Exit 2 is a success here (recorded in
// ExitCode); a plan the CLI did not finish is an error.
func (w *Workspace) RefreshOnlyPlan(ctx context.Context, out string, opts ...RunOption) (*Refresh, error) {
	args := []string{"plan", "-input=false", "-no-color", "-refresh-only", "-detailed-exitcode", "-out=" + out}
	call, err := w.Run(ctx, args, append(opts, AcceptExit(2))...)
	if err != nil {
		return nil, err
	}
	raw, err := w.ShowPlan(ctx, out)
	if err != nil {
		return nil, err
	}
	r := &Refresh{File: out, ExitCode: call.ExitCode, NoChanges: noChangeRE.MatchString(call.Output), Call: call}
	for _, rc := range raw.ResourceDrift {
		if rc != nil {
			r.Drifted = append(r.Drifted, rc.Address)
		}
	}
	sort.Strings(r.Drifted)
	return r, nil
}

// RefreshOnlyApply runs apply -refresh-only -auto-approve: the state takes
// what the engine reads of the world, and nothing in the world changes.
func (w *Workspace) RefreshOnlyApply(ctx context.Context, opts ...RunOption) (Applied, error) {
	call, err := w.Run(ctx, []string{"apply", "-input=false", "-no-color", "-refresh-only", "-auto-approve"}, opts...)
	a, ok := parseApplied(call.Output)
	a.Call = call
	if err != nil {
		return a, err
	}
	if !ok {
		return a, fmt.Errorf("%s apply -refresh-only: exit 0 but no completion line (log: %s)", w.Engine.Profile.Name, w.citedLog(call))
	}
	return a, nil
}
