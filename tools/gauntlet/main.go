// Command gauntlet runs estates through their life on real Kubernetes API
// servers and says how the engine under test compares with the oracle.
//
//	gauntlet run <estate> [--engine PATH] [--substrate local|kind|kubeconfig] [--out DIR]
//	gauntlet matrix <estate> --engines tofu@1.9.4,terraform@1.5.7,... [--oracle terraform@1.11.4|tofu@1.12.6]
//	gauntlet compare --engine PATH|tofu@X --baseline tofu@Y [--estates all|a,b] [--shard I/N] [-n 3] [--out DIR]
//	gauntlet mutants <estate> [--mutants a,b] [--all-stages]
//	gauntlet status [--requirements ID,... | --require-all | --hygiene] [--json] [--md FILE]
//	gauntlet list
//	gauntlet bench <estate> [-n N] | soak <estate> [-n N]
//	gauntlet corpus fetch | import DIR
//	gauntlet estate new (--dir DIR | --repository R --commit C --path P...) [--name N]
//	gauntlet toolchain [--cache DIR] [--offline] [--tool NAME=PATH]...
//	gauntlet cluster up [--substrate local|kind|kubeconfig] [--dir DIR]
//	gauntlet kind node-image [--repin] [--load=false]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string) error
}

func commands() []command {
	return []command{
		{"run", "run an estate's gauntlet and write its evidence", runRun},
		{"list", "list the estates", runList},
		{"matrix", "run an estate with many pinned engines against one oracle and write the parity table", runMatrix},
		{"compare", "run estates with an engine build and a baseline engine and report what the build changes", runCompare},
		{"mutants", "run the gauntlet with each mutant engine as the subject and write the kill matrix", runMutants},
		{"soak", "run an estate n times and report any stage whose verdicts or figures differ", runSoak},
		{"bench", "time whole runs of an estate per stage, with engine calls and API requests", runBench},
		{"corpus", "fetch or import the pinned corpus files into the cache", runCorpus},
		{"estate", "estate new: write an estate for a root (a directory offline, or repository/commit/paths online)", runEstate},
		{"status", "requirement coverage and proof from the conformance ledger", runStatus},
		{"toolchain", "resolve, build and verify every pinned tool into the cache", runToolchain},
		{"cluster", "cluster up: start a substrate cluster and keep it until Ctrl-C", runCluster},
		{"kind", "kind node-image: build the pinned kind node image and load it into Docker", runKind},
	}
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		return 2
	}
	// Ctrl-C cancels the context, with the signal as its cause, so every
	// cluster and engine is torn down and a run says it was cancelled.
	// Later signals are still caught (go run forwards its own, so two
	// arrive at once): teardown is bounded and always finishes.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "gauntlet: %s: stopping and cleaning up (bounded; further signals are ignored)\n", sig)
		cancel(gauntlet.SignalCause{Sig: sig})
	}()
	for _, c := range commands() {
		if c.name == args[0] {
			// What a gauntlet process killed with SIGKILL left - process
			// groups, adopted orphans, temp dirs, mounts - ends here.
			gauntlet.SweepKilled(ctx, "", log.New(os.Stderr))
			err := c.run(ctx, args[1:])
			if err == nil {
				return 0
			}
			if errors.Is(err, flag.ErrHelp) {
				return 2
			}
			fmt.Fprintf(os.Stderr, "gauntlet %s: %v\n", c.name, err)
			var ec exitCoder
			if errors.As(err, &ec) {
				return ec.ExitCode()
			}
			var sc gauntlet.SignalCause
			if errors.As(context.Cause(ctx), &sc) {
				if n, ok := sc.Sig.(syscall.Signal); ok {
					return 128 + int(n)
				}
			}
			return 1
		}
	}
	fmt.Fprintf(os.Stderr, "gauntlet: unknown command %q\n", args[0])
	usage()
	return 2
}

type exitCoder interface{ ExitCode() int }

func usage() {
	fmt.Fprintln(os.Stderr, "usage: gauntlet <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", c.name, c.summary)
	}
}
