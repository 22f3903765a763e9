package estate

import "fmt"

// Fence: plan Root (default: the acted root) as a restricted Identity that
// may read every listable kind but Secrets and Leases, manage Root's kinds
// and its own records, and nothing of Reads.Root's records. The plan must
// be refused naming Reads.Root's state Secret, then be empty once the
// identity may get that one Secret; Reads.Root's state namespace must not
// change across either plan. Both roots keep their state on the
// kubernetes backend (the stage reads each backend block).
type Fence struct {
	// Identity names the ServiceAccount ("app-planner").
	Identity string `json:"identity"`
	// Root names the root planned as the identity (default: the last).
	Root string `json:"root,omitempty"`
	// Reads names the root whose outputs Root reads.
	Reads FenceReads `json:"reads"`
}

// FenceReads names the root whose records the fence closes.
type FenceReads struct {
	Root string `json:"root"`
}

// validate checks the fence against the estate's roots; acted is the
// root it plans.
func (f *Fence) validate(roots map[string]bool, acted string) error {
	switch {
	case !nameRE.MatchString(f.Identity):
		return fmt.Errorf("fence: identity %q: lowercase letters, digits and dashes", f.Identity)
	case f.Root != "" && !roots[f.Root]:
		return fmt.Errorf("fence: no root %q", f.Root)
	case !roots[f.Reads.Root]:
		return fmt.Errorf("fence: reads.root %q is not a root of the estate", f.Reads.Root)
	case f.Reads.Root == acted:
		return fmt.Errorf("fence: root %s reads itself: the fence closes another root's records", acted)
	}
	return nil
}
