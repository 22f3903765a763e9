// Package errtree asks questions of an error's whole tree, followed
// through every wrap and every join.
package errtree

import "errors"

// Every reports whether every branch of err's tree reaches an error that
// leaf accepts. leaf is asked at each error on the way down: decided says
// it has the answer there (ok), otherwise the walk goes on to what the
// error wraps. A nil error, a branch that ends undecided, or a join of
// nothing is false.
func Every(err error, leaf func(error) (ok, decided bool)) bool {
	if err == nil {
		return false
	}
	if ok, decided := leaf(err); decided {
		return ok
	}
	if j, isJoin := err.(interface{ Unwrap() []error }); isJoin {
		parts := j.Unwrap()
		for _, p := range parts {
			if !Every(p, leaf) {
				return false
			}
		}
		return len(parts) > 0
	}
	return Every(errors.Unwrap(err), leaf)
}
