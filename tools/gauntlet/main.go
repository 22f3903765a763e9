// Command gauntlet runs estates through their life on real Kubernetes API
// servers and says how the engine under test compares with the oracle.
//
// `gauntlet -h` lists the commands, `gauntlet <command> -h` shows one;
// docs/cli.md is the whole reference, generated from the command table
// below by `gauntlet docs cli`.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

// commands is the command table: one entry per command, each declaring
// its flags, usage and examples in its own file. A command that reports
// at length (estate new) writes its report to stdout.
func commands(stdout io.Writer) []cli.Command {
	return []cli.Command{
		runCommand(),
		listCommand(),
		matrixCommand(),
		bisectCommand(),
		compareCommand(),
		mutantsCommand(),
		recordCommand(),
		mergeCommand(),
		soakCommand(),
		benchCommand(),
		corpusFetchCommand(),
		corpusImportCommand(),
		estateNewCommand(stdout),
		statusCommand(),
		toolchainCommand(),
		clusterUpCommand(),
		kindNodeImageCommand(),
		versionCommand(),
		docsCLICommand(),
		docsBugsCommand(),
		docsCoverageCommand(),
		docsStagesCommand(),
	}
}

// app is gauntlet's command line, writing to stdout and stderr.
func app(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name: "gauntlet",
		Doc: "gauntlet runs Terraform roots (estates) through a fixed life on real Kubernetes API servers, with the engine under " +
			"test on one cluster and a pinned stock oracle on another, every check proven by a BREAK, and says how the engine " +
			"compares.",
		Commands: commands(stdout),
		Exits: cli.Exits(cli.Exit{Code: fmt.Sprint(conformance.ExitWaiting),
			Meaning: "status gates only: nothing failed, but some requirements are not proven yet (not run, partial)"}),
		ExitNote: "`go run` prints a non-zero code as `exit status N` and itself exits 1; where the code matters, build the binary " +
			"(`go build -o bin/gauntlet ./tools/gauntlet`).",
		// What a gauntlet process killed with SIGKILL left - process
		// groups, adopted orphans, temp dirs, mounts - ends here.
		Before: func(ctx context.Context) { gauntlet.SweepKilled(ctx, "", log.New(stderr)) },
		Stdout: stdout,
		Stderr: stderr,
	}
}

func main() {
	// Ctrl-C cancels the context, with the signal as its cause, so every
	// cluster and engine is torn down and a run says it was cancelled.
	// Later signals are still caught (go run forwards its own, so two
	// arrive at once): teardown is bounded and always finishes.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "gauntlet: %s: stopping and cleaning up (bounded; further signals are ignored)\n", sig)
		cancel(gauntlet.SignalCause{Sig: sig})
	}()
	code := app(os.Stdout, os.Stderr).Run(ctx, os.Args[1:])
	signal.Stop(sigs)
	cancel(nil)
	os.Exit(code)
}
