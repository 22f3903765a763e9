package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/corpus"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/log"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
)

func runCorpus(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "fetch" && args[0] != "import") {
		return fmt.Errorf("usage: gauntlet corpus fetch [estate...] | gauntlet corpus import DIR [estate...]")
	}
	verb := args[0]
	fs := flag.NewFlagSet("corpus "+verb, flag.ContinueOnError)
	cache := fs.String("cache", "", "cache directory (default $"+toolchain.CacheEnv+", else the user cache dir)")
	estates := fs.String("estates", "estates", "directory holding the estates")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	rest := fs.Args()
	dir := ""
	if verb == "import" {
		if len(rest) == 0 {
			return fmt.Errorf("usage: gauntlet corpus import DIR [estate...]")
		}
		dir, rest = rest[0], rest[1:]
	}
	if *cache == "" {
		d, err := toolchain.DefaultCacheDir()
		if err != nil {
			return err
		}
		*cache = d
	}
	names := rest
	if len(names) == 0 {
		var err error
		if names, err = estate.List(*estates); err != nil {
			return err
		}
	}
	n := 0
	for _, name := range names {
		spec, err := estate.Load(*estates, name)
		if err != nil {
			return err
		}
		for _, src := range spec.Sources() {
			var ps []string
			if verb == "import" {
				ps, err = corpus.Import(*cache, dir, src)
			} else {
				ps, err = corpus.Fetch(ctx, *cache, src)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			for i, pf := range src.Pinned() {
				fmt.Printf("%s: %s (sha256 %s verified)\n", name, ps[i], pf.SHA256[:12])
			}
			n += len(ps)
		}
	}
	fmt.Printf("%d corpus file(s) in %s\n", n, *cache)
	return nil
}

// ensureCorpus brings an estate's corpus files into the cache if they are
// not there yet, so `gauntlet run` needs no separate set-up: from
// $GAUNTLET_CORPUS_DIR, else ../shared/corpus beside the checkout, else a
// fetch when online. Each attempt is said out loud.
func ensureCorpus(ctx context.Context, spec *estate.Spec, cache string, offline bool, l log.Logger) error {
	if cache == "" {
		d, err := toolchain.DefaultCacheDir()
		if err != nil {
			return err
		}
		cache = d
	}
	var dirs []string
	if d := os.Getenv("GAUNTLET_CORPUS_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	return corpus.Ensure(ctx, cache, spec, append(dirs, filepath.Join("..", "shared", "corpus")), offline, l)
}
