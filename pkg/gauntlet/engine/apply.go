package engine

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ApplyOptions are the apply flags gauntlet uses.
type ApplyOptions struct {
	// PlanFile applies a saved plan; empty means -auto-approve of a fresh one.
	PlanFile string
	// Parallelism passes -parallelism=N when > 0.
	Parallelism int
	// Destroy runs apply -destroy.
	Destroy bool
	// Targets pass -target=ADDR each (not with PlanFile).
	Targets []string
	// NoLock passes -lock=false: the apply takes no state lock.
	NoLock bool
	// NoRefresh passes -refresh=false (not with PlanFile: a saved plan
	// carries its own).
	NoRefresh bool
}

// Applied are the counts an apply printed.
type Applied struct {
	Imported, Added, Changed, Destroyed int
	// Forgotten counts objects a removed block (destroy = false) took out
	// of the state and left live; OpenTofu prints it, terraform does not.
	Forgotten int
	Call      Call
}

func (a Applied) String() string {
	s := fmt.Sprintf("%d added, %d changed, %d destroyed", a.Added, a.Changed, a.Destroyed)
	if a.Imported > 0 {
		s = fmt.Sprintf("%d imported, ", a.Imported) + s
	}
	if a.Forgotten > 0 {
		s += fmt.Sprintf(", %d forgotten", a.Forgotten)
	}
	return s
}

var (
	applyRE   = regexp.MustCompile(`(?m)^Apply complete! Resources: (?:(\d+) imported, )?(\d+) added, (\d+) changed, (\d+) destroyed(?:, (\d+) forgotten)?\.`)
	destroyRE = regexp.MustCompile(`(?m)^Destroy complete! Resources: (\d+) destroyed\.`)
)

// Apply runs apply. A failed or interrupted apply returns the *CallError
// and whatever counts were printed (usually none).
func (w *Workspace) Apply(ctx context.Context, o ApplyOptions, opts ...RunOption) (Applied, error) {
	args := []string{"apply", "-input=false", "-no-color"}
	if o.NoLock {
		args = append(args, "-lock=false")
	}
	if o.NoRefresh && o.PlanFile == "" {
		args = append(args, "-refresh=false")
	}
	args = append(args, scopeArgs(o.Parallelism, o.Destroy, o.Targets)...)
	if o.PlanFile != "" {
		args = append(args, o.PlanFile)
	} else {
		args = append(args, "-auto-approve")
	}
	call, err := w.Run(ctx, args, opts...)
	a, ok := parseApplied(call.Output)
	a.Call = call
	if err != nil {
		return a, err
	}
	if !ok {
		return a, fmt.Errorf("%s apply: exit 0 but no completion line (log: %s)", w.Engine.Profile.Name, w.citedLog(call))
	}
	return a, nil
}

// scopeArgs are the flags plan and apply share, in this order:
// -parallelism=N when parallelism > 0, -destroy, -target=ADDR for each
// target.
func scopeArgs(parallelism int, destroy bool, targets []string) []string {
	var args []string
	if parallelism > 0 {
		args = append(args, "-parallelism="+strconv.Itoa(parallelism))
	}
	if destroy {
		args = append(args, "-destroy")
	}
	for _, t := range targets {
		args = append(args, "-target="+t)
	}
	return args
}

func parseApplied(out string) (Applied, bool) {
	if m := applyRE.FindStringSubmatch(out); m != nil {
		return Applied{Imported: atoi(m[1]), Added: atoi(m[2]), Changed: atoi(m[3]), Destroyed: atoi(m[4]), Forgotten: atoi(m[5])}, true
	}
	if m := destroyRE.FindStringSubmatch(out); m != nil {
		return Applied{Destroyed: atoi(m[1])}, true
	}
	return Applied{}, false
}

// actedRE matches the CLI's per-resource completion lines, e.g.
// "kubernetes_config_map_v1.x: Creation complete after 0s [id=ns/x]".
var actedRE = regexp.MustCompile(`(?m)^(\S+?)(?: \(deposed object \w+\))?: (Creation|Modifications|Destruction|Import) complete`)

// Acted lists what the apply's output says it did, one "address: verb"
// per completed action, in order: what an apply count claims, by name.
func (a Applied) Acted() []string {
	var out []string
	for _, m := range actedRE.FindAllStringSubmatch(a.Call.Output, -1) {
		out = append(out, m[1]+": "+strings.ToLower(m[2]))
	}
	return out
}
