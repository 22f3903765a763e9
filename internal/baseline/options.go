package baseline

import "time"

// Option configures Take.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	quiet time.Duration
}

// WithSettle makes Take wait until two snapshots quiet apart agree, and
// return the later one, bounded by Take's context. Use it for the first
// snapshot after a control plane starts, while controllers still create
// their own objects. Default: 0, one snapshot, taken at once.
func WithSettle(quiet time.Duration) Option {
	return optionFunc(func(o *options) { o.quiet = quiet })
}

func defaults() *options { return &options{} }
