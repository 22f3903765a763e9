package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/gauntlet-k8s/gauntlet/internal/corpus"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
)

func corpusFetchCommand() cli.Command {
	return cli.Command{
		Name: "corpus fetch", Args: "[estate...]", MaxArgs: -1,
		Summary: "fetch the estates' pinned corpus files into the cache (online)",
		Doc: "Fetches each named estate's pinned source files (every estate's when none is named) with git - a shallow, blobless " +
			"fetch of the pinned commit - verifies each file's sha256 and stores it in the cache, where runs find it offline. " +
			"`run` does this on its own when a file is missing; this is for preparing a machine.",
		Examples: []cli.Example{
			{What: "every estate's files", Command: "gauntlet corpus fetch"},
			{What: "one estate's files into another cache", Command: "gauntlet corpus fetch corpus-k8s-metrics-server --cache /tmp/gauntlet-cache"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var cache string
			registerCache(fs, &cache)
			estates := registerEstates(fs)
			return func(ctx context.Context, args []string) error {
				return storeCorpus(cache, *estates, args, func(cache string, src *estate.Source) ([]string, error) {
					return corpus.Fetch(ctx, cache, src)
				})
			}
		},
	}
}

func corpusImportCommand() cli.Command {
	return cli.Command{
		Name: "corpus import", Args: "DIR [estate...]", MinArgs: 1, MaxArgs: -1,
		Summary: "import the estates' pinned corpus files from a folder into the cache (offline)",
		Doc: "Imports each named estate's pinned source files (every estate's when none is named) from DIR, a folder laid out like " +
			"../shared/corpus (<host>/<owner>/<repo>/<commit>/<path>), verifying each file's sha256, into the cache, where runs " +
			"find them. Needs no network.",
		Examples: []cli.Example{
			{What: "every estate's files from the shared corpus", Command: "gauntlet corpus import ../shared/corpus"},
			{What: "one estate's files, estates from another folder", Command: "gauntlet corpus import ../shared/corpus corpus-k8s-metrics-server --estates ./my-estates"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var cache string
			registerCache(fs, &cache)
			estates := registerEstates(fs)
			return func(ctx context.Context, args []string) error {
				dir := args[0]
				return storeCorpus(cache, *estates, args[1:], func(cache string, src *estate.Source) ([]string, error) {
					return corpus.Import(cache, dir, src)
				})
			}
		},
	}
}

// storeCorpus stores the named estates' (all when none) source files in
// the cache with store, and says where each went.
func storeCorpus(cache, estates string, names []string, store func(cache string, src *estate.Source) ([]string, error)) error {
	cache, err := cacheOrDefault(cache)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		var err error
		if names, err = estate.List(estates); err != nil {
			return err
		}
	}
	n := 0
	for _, name := range names {
		spec, err := estate.Load(estates, name)
		if err != nil {
			return err
		}
		for _, src := range spec.Sources() {
			ps, err := store(cache, src)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			for i, pf := range src.Pinned() {
				fmt.Printf("%s: %s (sha256 %s verified)\n", name, ps[i], pf.SHA256[:12])
			}
			n += len(ps)
		}
	}
	fmt.Printf("%d corpus file(s) in %s\n", n, cache)
	return nil
}

// ensureCorpus brings an estate's corpus files into --cache if they are
// not there yet, so `gauntlet run` needs no separate set-up: from
// $GAUNTLET_CORPUS_DIR, else ../shared/corpus beside the checkout, else a
// fetch unless --offline. Each attempt is said out loud.
func (f *toolchainFlags) ensureCorpus(ctx context.Context, spec *estate.Spec, l log.Logger) error {
	cache, err := cacheOrDefault(f.cache)
	if err != nil {
		return err
	}
	return corpus.EnsureShared(ctx, cache, spec, filepath.Join("..", "shared", "corpus"), f.offline, l)
}
