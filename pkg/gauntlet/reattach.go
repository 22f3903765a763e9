package gauntlet

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/stage"
)

// manifestBlock is a block the kubernetes provider serves through its
// manifest machinery: a kubernetes_manifest resource, or a
// kubernetes_resource or kubernetes_resources data source.
var manifestBlock = regexp.MustCompile(`(?m)^\s*(resource\s+"kubernetes_manifest"|data\s+"kubernetes_resources?")`)

// reattachProviders turns WithReattachedProviders on for both engines,
// their plugins stopped at teardown. The kubernetes provider stays per
// call where a side's materialised roots declare a kubernetes_manifest
// resource or a kubernetes_resource(s) data source: those cache the
// cluster's discovery and OpenAPI schema for the life of the plugin
// process, so a reattached plugin asks the API for them once instead of
// once per call - measured on the pair (manifests) and on
// corpus-rbac-example (a kubernetes_resource data source), every stage's
// request counts moved (verdicts did not) - and would plan a custom
// resource against the API as it was before its CRD was applied. It
// returns the reason, or "".
func reattachProviders(sides []*stage.Side, td *teardown, engines ...*engine.Engine) (string, error) {
	manifest, err := anyDeclaresManifest(sides)
	if err != nil {
		return "", err
	}
	var except []string
	why := ""
	if manifest {
		except = append(except, "kubernetes")
		why = "the kubernetes provider started with each call: the estate has kubernetes_manifest resources or kubernetes_resource(s) data sources, which cache the cluster's API discovery for the life of the plugin, so a reattached one would send fewer requests than production"
	}
	seen := map[*engine.Engine]bool{}
	for _, e := range engines {
		if seen[e] {
			continue
		}
		seen[e] = true
		e.ReattachProviders(except...)
		td.push(func(context.Context) error { return e.Close() })
	}
	return why, nil
}

// reattachedSentence is the run's ReattachedProviders: the types the
// engines reattached, and why the kubernetes provider was not.
func reattachedSentence(why string, engines ...*engine.Engine) string {
	var types []string
	for _, e := range engines {
		for _, t := range e.Reattached() {
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	slices.Sort(types)
	s := strings.Join(types, ", ")
	if s == "" {
		s = "none"
	}
	if why != "" {
		s += "; " + why
	}
	return s
}

// anyDeclaresManifest says whether any root of the sides, or of the roots
// they stand on, declares a manifestBlock. Each tree is read once (a
// multi-root estate's roots may share one), and the first match ends the
// search.
func anyDeclaresManifest(sides []*stage.Side) (bool, error) {
	walked := map[string]bool{}
	for _, sd := range sides {
		roots := []*estate.Root{sd.Root}
		for _, other := range sd.Others {
			roots = append(roots, other.Root)
		}
		for _, root := range roots {
			// Base, not Dir: a root's modules may sit beside it, outside
			// its own folder (corpus-rbac-example's ../../modules/rbac).
			// A Root built by hand, not materialised, may have no Base.
			tree := root.Base
			if tree == "" {
				tree = root.Dir
			}
			if walked[tree] {
				continue
			}
			walked[tree] = true
			if m, err := declaresManifest(tree); err != nil || m {
				return m, err
			}
		}
	}
	return false, nil
}

// declaresManifest says whether a .tf file under dir declares a
// manifestBlock; the engines' own folders (.terraform,
// logs, .home) are not the root's.
func declaresManifest(dir string) (bool, error) {
	found := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".terraform" || n == "logs" || n == ".home" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(p, ".tf") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found = manifestBlock.Match(b)
		return nil
	})
	return found, err
}
