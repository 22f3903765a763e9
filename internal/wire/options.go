package wire

import (
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// Option configures a Proxy.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	logger    log.Logger
	bodyLimit int64
}

// WithLogger receives upstream errors and other things worth a warning.
// Default: log.Discard().
func WithLogger(l log.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithBodyLimit caps how much of a create request's body the proxy reads
// to learn the new object's name. A larger body is still forwarded
// unchanged, but its Request has no Name. Default: 4 MiB (a ConfigMap or
// Secret tops out at about 1 MiB; CRDs with big schemas are the largest
// objects an estate creates). n <= 0 never reads a body.
func WithBodyLimit(n int64) Option { return optionFunc(func(o *options) { o.bodyLimit = n }) }

func defaults() *options {
	return &options{logger: log.Discard(), bodyLimit: 4 << 20}
}
