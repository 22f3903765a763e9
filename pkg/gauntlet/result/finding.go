package result

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/secret"
)

// Finding is what a check found wrong, as data: which check, on which
// side, about which victim (a state address, a live object, or both),
// which field, what was wanted and what was got. A BREAK proves a check
// only by a Finding matching its Prediction; no proof reads error text.
// A *Finding is an error so a check returns it where it returns any
// failure; errors.Join of several findings names every victim.
type Finding struct {
	Check string `json:"check,omitempty"`
	// Side is "subject" or "oracle"; empty until the side that measured
	// it stamps it (StampSide).
	Side string `json:"side,omitempty"`
	// Address is the state address the finding is about, e.g.
	// "kubernetes_config_map.a"; Object the live object, e.g.
	// "ConfigMap ns/a". At least one is set.
	Address string `json:"address,omitempty"`
	Object  string `json:"object,omitempty"`
	// Field is what was measured of the victim: "exists", "plan",
	// "data.x", "lineage"...
	Field string `json:"field"`
	Want  string `json:"want"`
	Got   string `json:"got"`
	// Detail is what a reader needs beyond want and got (the values a
	// "moved" resourceVersion moved between); a prediction never reads it.
	Detail string `json:"detail,omitempty"`
}

// Victim is the finding's address and object as one phrase.
func (f *Finding) Victim() string {
	switch {
	case f.Address != "" && f.Object != "":
		return f.Address + " (" + f.Object + ")"
	case f.Address != "":
		return f.Address
	default:
		return f.Object
	}
}

func (f *Finding) Error() string {
	s := fmt.Sprintf("%s %s: want %s, got %s", f.Victim(), f.Field, orNothing(f.Want), orNothing(f.Got))
	if f.Detail != "" {
		s += " (" + f.Detail + ")"
	}
	if f.Side != "" {
		s = f.Side + ": " + s
	}
	return s
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// MeasurementError is a measurement that could not be made: a read that
// failed, an engine that crashed, a wait that timed out, a BREAK that
// panicked. It is never a finding and never proves anything; a check that
// returns one failed to measure, and a BREAK that meets one could not run.
type MeasurementError struct {
	Side string `json:"side,omitempty"`
	// Op is what was being measured: "read Secret ns/x", "plan".
	Op  string `json:"op"`
	Err error  `json:"-"`
	// Stack is set when the measurement panicked.
	Stack string `json:"stack,omitempty"`
}

// Measure wraps err (if not nil) as a MeasurementError of op.
func Measure(op string, err error) error {
	if err == nil {
		return nil
	}
	var m *MeasurementError
	if errors.As(err, &m) {
		return err
	}
	return &MeasurementError{Op: op, Err: err}
}

func (m *MeasurementError) Error() string {
	s := "could not measure (" + m.Op + "): " + fmt.Sprint(m.Err)
	if m.Side != "" {
		s = m.Side + ": " + s
	}
	return s
}

func (m *MeasurementError) Unwrap() error { return m.Err }

// walk calls f on every error in err's tree (errors.Join and %w chains),
// stopping at findings and measurement errors.
func walk(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch e := err.(type) {
	case *Finding, *MeasurementError:
	case interface{ Unwrap() []error }:
		for _, x := range e.Unwrap() {
			walk(x, f)
		}
	case interface{ Unwrap() error }:
		walk(e.Unwrap(), f)
	}
}

// FindingsIn lists every Finding in err's tree.
func FindingsIn(err error) []*Finding {
	var out []*Finding
	walk(err, func(e error) {
		if f, ok := e.(*Finding); ok {
			out = append(out, f)
		}
	})
	return out
}

// MeasurementErrorsIn lists every MeasurementError in err's tree.
func MeasurementErrorsIn(err error) []*MeasurementError {
	var out []*MeasurementError
	walk(err, func(e error) {
		if m, ok := e.(*MeasurementError); ok {
			out = append(out, m)
		}
	})
	return out
}

// Unclassified reports whether err failed without a single finding or
// measurement error in it: text only, which can never prove anything.
func Unclassified(err error) bool {
	return err != nil && len(FindingsIn(err)) == 0 && len(MeasurementErrorsIn(err)) == 0
}

// Stamp sets the check and the side on every finding and measurement
// error in err that does not have them yet, and returns err.
func Stamp(err error, check, side string) error {
	walk(err, func(e error) {
		switch x := e.(type) {
		case *Finding:
			if x.Check == "" {
				x.Check = check
			}
			if x.Side == "" {
				x.Side = side
			}
		case *MeasurementError:
			if x.Side == "" {
				x.Side = side
			}
		}
	})
	return err
}

// Copies returns copies of the findings in err's tree, each naming check
// and side where it names none. A check keeps copies, never the findings
// themselves: one finding two checks share (a measurement that answers
// both) then carries each check's name, where stamping it in place would
// leave it the first check's.
func Copies(err error, check, side string) []Finding {
	var out []Finding
	for _, f := range FindingsIn(err) {
		c := *f
		if c.Check == "" {
			c.Check = check
		}
		if c.Side == "" {
			c.Side = side
		}
		out = append(out, c)
	}
	return out
}

// Findings joins findings into one error (nil when there are none), so a
// check names every victim, not the first.
func Findings(fs ...*Finding) error {
	errs := make([]error, 0, len(fs))
	for _, f := range fs {
		if f != nil {
			errs = append(errs, f)
		}
	}
	return errors.Join(errs...)
}

// Prediction is what a BREAK says its covered check must now report: the
// victim it corrupted, the field, and the value the check must read
// there ("absent", "tampered", "create", ...). Empty fields match
// anything; Check limits it to one covered check (empty: every one).
type Prediction struct {
	Check   string `json:"check,omitempty"`
	Address string `json:"address,omitempty"`
	Object  string `json:"object,omitempty"`
	Field   string `json:"field"`
	Got     string `json:"got"`
}

// Matches reports whether f, measured by check on side, is the predicted
// finding.
func (p Prediction) Matches(check, side string, f *Finding) bool {
	return (p.Check == "" || p.Check == check) &&
		(f.Side == "" || f.Side == side) &&
		(f.Check == "" || f.Check == check) &&
		(p.Address == "" || p.Address == f.Address) &&
		(p.Object == "" || p.Object == f.Object) &&
		p.Field == f.Field && sameGot(p, f)
}

// sameGot compares a prediction's value with a finding's; on secret data,
// where a finding carries the digest of what it read, by digest.
func sameGot(p Prediction, f *Finding) bool {
	if p.Got == f.Got {
		return true
	}
	return secret.IsSecretField(f.Object, f.Address, f.Field) && secret.Shown(p.Got) == secret.Shown(f.Got)
}

func (p Prediction) String() string {
	v := (&Finding{Address: p.Address, Object: p.Object}).Victim()
	s := fmt.Sprintf("%s %s = %s", v, p.Field, orNothing(p.Got))
	if p.Check != "" {
		s = p.Check + ": " + s
	}
	return strings.TrimSpace(s)
}
