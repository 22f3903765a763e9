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
)

// manifestResource is a kubernetes_manifest resource block.
var manifestResource = regexp.MustCompile(`(?m)^\s*resource\s+"kubernetes_manifest"`)

// apiChange is what adds to or takes from the cluster's API while a run
// goes on: a CRD or an aggregated APIService, in any file a root reads.
var apiChange = regexp.MustCompile(`CustomResourceDefinition|APIService|kubernetes_api_service`)

// reattachProviders turns WithReattachedProviders on for both engines,
// their plugins stopped at teardown. The kubernetes provider stays per
// call where the materialised roots (their folders in roots) declare a
// kubernetes_manifest and also a CRD or an APIService: kubernetes_manifest
// caches the cluster's discovery and OpenAPI schema for the life of the
// plugin process, so one plugin serving a whole run would plan a custom
// resource against the API as it was before its CRD was applied. It
// returns the reason, or "".
func reattachProviders(roots []string, td *teardown, engines ...*engine.Engine) (string, error) {
	manifest, changes := false, false
	for _, dir := range roots {
		m, err := declaresManifest(dir)
		if err != nil {
			return "", err
		}
		c, err := changesAPI(dir)
		if err != nil {
			return "", err
		}
		manifest, changes = manifest || m, changes || c
	}
	var except []string
	why := ""
	if manifest && changes {
		except = append(except, "kubernetes")
		why = "the kubernetes provider started with each call: the estate has kubernetes_manifest resources, which cache the cluster's API discovery for the life of the plugin, and a CRD or an APIService that changes that API during the run"
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

// declaresManifest says whether any .tf file under dir declares a
// kubernetes_manifest resource.
func declaresManifest(dir string) (bool, error) {
	return anyFile(dir, func(p string) bool { return strings.HasSuffix(p, ".tf") }, manifestResource)
}

// changesAPI says whether any file a root under dir reads (.tf, YAML,
// JSON, templates) names a CRD or an APIService.
func changesAPI(dir string) (bool, error) {
	return anyFile(dir, func(string) bool { return true }, apiChange)
}

// anyFile says whether a file under dir that want picks matches re; the
// engines' own folders (.terraform, logs, .home) are not the roots'.
func anyFile(dir string, want func(string) bool, re *regexp.Regexp) (bool, error) {
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
		if !d.Type().IsRegular() || !want(p) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found = re.Match(b)
		return nil
	})
	return found, err
}
