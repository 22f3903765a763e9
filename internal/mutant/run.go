package mutant

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

// Options configure Run.
type Options struct {
	// Mutants to run; default All().
	Mutants []Mutant
	// Substrate is the cluster provider, default "local".
	Substrate string
	// CacheDir is the toolchain cache; default the toolchain's.
	CacheDir string
	Offline  bool
	Logger   log.Logger
	// AllStages runs every stage for every mutant (a full matrix) instead
	// of the mutant's expected stages and what they depend on, stopping
	// once one of them caught it.
	AllStages bool
	// WorkDir receives the mutant engines' scripts; default a temporary
	// directory removed afterwards.
	WorkDir string
	// FailedLogs, when set, keeps the log of every engine call that
	// failed in FailedLogs/<mutant>, and the rows' details cite it there
	// rather than in a run's work directory, removed after it. Default:
	// none kept.
	FailedLogs string
}

// Run runs the estate's gauntlet once per mutant, each time with that
// mutant as the subject, and returns the kill matrix. An error is a
// matrix that could not be made; a matrix with survivors is returned with
// a nil error (see Matrix.Err).
func Run(ctx context.Context, spec *estate.Spec, o Options) (*Matrix, error) {
	if o.Logger == nil {
		o.Logger = log.Discard()
	}
	if o.Substrate == "" {
		o.Substrate = "local"
	}
	if len(o.Mutants) == 0 {
		o.Mutants = All()
	}
	topts := []toolchain.Option{toolchain.WithTools("tofu", "gauntlet-mutant"), toolchain.WithLogger(o.Logger), toolchain.WithOffline(o.Offline)}
	if o.CacheDir != "" {
		topts = append(topts, toolchain.WithCacheDir(o.CacheDir))
	}
	tc, err := toolchain.Resolve(ctx, topts...)
	if err != nil {
		return nil, err
	}
	work := o.WorkDir
	if work == "" {
		if work, err = os.MkdirTemp("", "gauntlet-mutants-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	}
	m := &Matrix{Estate: spec.Name, Substrate: o.Substrate, AllStages: o.AllStages, StartedAt: time.Now().UTC()}
	start := time.Now()
	for i, mu := range o.Mutants {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		eng, err := WriteEngine(filepath.Join(work, mu.Name), tc.Path("gauntlet-mutant"), tc.Path("tofu"), mu.Name)
		if err != nil {
			return nil, err
		}
		o.Logger.Infof("mutant %d/%d %s: %s (must be caught by %s)", i+1, len(o.Mutants), mu.Name, mu.Promise, strings.Join(mu.Expect, " or "))
		gopts := []gauntlet.Option{
			gauntlet.WithEngine(eng), gauntlet.WithSubstrate(o.Substrate), gauntlet.WithOffline(o.Offline),
			gauntlet.WithLogger(log.Prefixed(o.Logger, mu.Name+": ")),
		}
		if o.CacheDir != "" {
			gopts = append(gopts, gauntlet.WithCacheDir(o.CacheDir))
		}
		if o.FailedLogs != "" {
			gopts = append(gopts, gauntlet.WithFailedLogs(filepath.Join(o.FailedLogs, mu.Name)))
		}
		if !o.AllStages {
			// migrate is where the subject's engine first runs (its init):
			// every stage the subject acts in needs it, whether or not the
			// stage's own dependencies say so (day2_teardown names only
			// cold_deploy).
			gopts = append(gopts, gauntlet.WithStages(append([]string{"migrate"}, mu.Expect...)...), gauntlet.WithStopAfter(StopAfter(mu)))
		}
		res, runErr := gauntlet.Run(ctx, spec, gopts...)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		row := Score(mu, res, runErr)
		if res != nil && m.Engine == "" {
			m.Engine = res.Subject.Display
		}
		o.Logger.Infof("mutant %s: %s%s in %s", mu.Name, row.Status, by(row), row.Duration.Round(100*time.Millisecond))
		m.Rows = append(m.Rows, row)
	}
	m.Duration = time.Since(start)
	return m, nil
}

func by(r Row) string {
	if r.Status == Killed {
		return " by " + r.KilledBy + " (" + r.Check + ")"
	}
	return ": " + r.Why
}

// WriteEngine writes the mutant engine for one mutation into dir and
// returns its path: a script that runs gauntlet-mutant with the mutation
// and the wrapped tofu in its environment (gauntlet gives engines an
// environment of its own, so they cannot come from the caller's).
func WriteEngine(dir, mutantBin, tofu, mutation string) (string, error) {
	if mutantBin == "" || tofu == "" {
		return "", fmt.Errorf("mutant engine %s: gauntlet-mutant and tofu must be resolved (toolchain.WithTools)", mutation)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "tofu")
	script := fmt.Sprintf("#!/bin/sh\n# Written by gauntlet mutants: tofu with the mutation %s.\nGAUNTLET_MUTANT=%s GAUNTLET_MUTANT_TOFU=%s exec %s \"$@\"\n",
		mutation, shellQuote(mutation), shellQuote(tofu), shellQuote(mutantBin))
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return "", err
	}
	return path, nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
