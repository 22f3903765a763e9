package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/conformance"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/evidence"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/result"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

const (
	registryPath = "conformance/requirements.yaml"
	ledgerPath   = "conformance/runs/ledger.jsonl"
)

// record appends a run to the ledger and keeps its evidence beside it.
// Recording is explicit (run --record): a run that recorded itself
// silently is how a bad run becomes a lasting false proof.
func record(res *result.Run) (string, error) {
	dir := filepath.Join("conformance", "runs", conformance.RunID(res))
	if _, err := evidence.WriteAll(dir, res); err != nil {
		return "", err
	}
	if err := conformance.Append(ledgerPath, conformance.Rows(res)); err != nil {
		return "", err
	}
	return dir, nil
}

// stageClaims maps each stage to the requirements it verifies.
func stageClaims() map[string][]string {
	claims := map[string][]string{}
	for _, s := range stage.All() {
		claims[s.ID()] = s.Requirements()
	}
	return claims
}

type coverageError struct{ cov conformance.Coverage }

func (e coverageError) Error() string {
	return fmt.Sprintf("coverage is not clean: uncovered %v, unregistered %v", e.cov.Uncovered, e.cov.Unregistered)
}
func (e coverageError) ExitCode() int { return 1 }

func runStatus(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	strict := fs.Bool("strict-coverage", false, "fail when a requirement has no stage or a stage claims an unregistered one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	reg, err := conformance.LoadRegistry(registryPath)
	if err != nil {
		return err
	}
	cov := conformance.ComputeCoverage(reg, stageClaims())
	rows, err := conformance.Read(ledgerPath)
	if err != nil {
		return err
	}
	st, err := conformance.Derive(reg, cov, rows, conformance.Git{Dir: "."})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "requirement\tstages\tproof\twhy")
	for _, s := range st {
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\n", s.Requirement.ID, s.Stages, s.Proof, s.Why)
	}
	tw.Flush()
	fmt.Printf("\n%d requirements: %s. %d ledger rows in %s.\n", len(st), conformance.Summary(st), len(rows), ledgerPath)
	if len(cov.Uncovered) > 0 || len(cov.Unregistered) > 0 {
		fmt.Printf("coverage gaps: uncovered %v, unregistered %v\n", cov.Uncovered, cov.Unregistered)
		if *strict {
			return coverageError{cov}
		}
	}
	return nil
}
