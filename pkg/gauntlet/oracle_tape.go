package gauntlet

import (
	"github.com/gauntlet-k8s/gauntlet/internal/tape"
)

// OracleTape is the oracle's side of one run, recorded so that runs of
// the same estate, oracle and stages against other subjects replay it
// instead of running it again (the oracle's plans and observations do
// not depend on the subject). The first run given an empty tape records
// it; every run given a recorded one replays it, starting no oracle
// cluster and no oracle engine. A replay that asks anything the
// recording did not hold fails with ErrOracleDiverged: run that subject
// again without the tape.
type OracleTape struct{ t *tape.Tape }

// NewOracleTape returns an empty tape.
func NewOracleTape() *OracleTape { return &OracleTape{t: tape.New()} }

// Recorded reports whether a run has recorded the tape whole.
func (o *OracleTape) Recorded() bool { return o.t.Recorded() }

// RecordedWith names the subject of the run that recorded it.
func (o *OracleTape) RecordedWith() string { return o.t.RecordedWith() }

// Entries is how many answers the tape holds.
func (o *OracleTape) Entries() int { return o.t.Entries() }

// ErrOracleDiverged is the error of a run whose replayed oracle was asked
// something its recording did not hold.
var ErrOracleDiverged = tape.ErrDiverged

// WithOracleTape records the oracle's side into t, or replays it from t
// once recorded. Default: the oracle runs live. Only the local substrate
// takes it (a kind run's oracle is the container daemon's).
func WithOracleTape(t *OracleTape) Option {
	return optionFunc(func(o *options) { o.oracleTape = t })
}
