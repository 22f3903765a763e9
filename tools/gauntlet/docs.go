package main

import (
	"context"
	"os"

	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

// regenerateCLIDoc is the command that rewrites docs/cli.md.
const regenerateCLIDoc = "go run ./tools/gauntlet docs cli > docs/cli.md"

func docsCLICommand() cli.Command {
	return cli.Command{
		Name:    "docs cli",
		Summary: "print the CLI reference (docs/cli.md) generated from the command table",
		Doc: "Prints the command-line reference - exit codes, every command with its paragraph, flags, defaults, environment " +
			"variables and examples - as markdown, from the same declarations that parse the command line and print -h. " +
			"docs/cli.md is its output; a test fails when the file is out of date.",
		Examples: []cli.Example{{What: "rewrite the reference after changing a command", Command: regenerateCLIDoc}},
		Setup: func(fs *cli.FlagSet) cli.Action {
			return func(ctx context.Context, _ []string) error {
				return app(os.Stdout, os.Stderr).Markdown(os.Stdout, regenerateCLIDoc)
			}
		},
	}
}
