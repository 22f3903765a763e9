package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/corpus"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/derive"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/toolchain"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TODO is what estate new writes where only the user knows the value;
// loading the estate then fails naming it.
const TODO = "TODO"

func estateNewCommand() cli.Command {
	return cli.Command{
		Name:    "estate new",
		Summary: "write an estate for a root: a directory offline, or repository/commit/paths online",
		Doc: "Writes estates/<name>/estate.yaml for a Terraform root, its files pinned by sha256: from a directory (offline; a " +
			"folder laid out like ../shared/corpus gives the repository and commit, and the files are cached so a run finds them), " +
			"or from a repository's paths at a commit (online, a shallow git fetch). A variable a kubernetes provider's config_path " +
			"reads is set to the run's kubeconfig; variables with no default are named for you to fill in. Then prints the stage " +
			"plans a run would derive from the configuration.",
		Examples: []cli.Example{
			{What: "an estate for a root in the shared corpus, offline", Command: "gauntlet estate new --dir ../shared/corpus/github.com/owner/repo/<commit>/examples/basic"},
			{What: "an estate for a repository's folder at a commit, online", Command: "gauntlet estate new --repository https://github.com/owner/repo --commit <40-hex> --path examples/basic --name my-root"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var f estateNewFlags
			fs.StringVar(&f.dir, "dir", "", "offline: the `DIR` holding the root's .tf files (its subfolders are its local modules)")
			fs.BoolVar(&f.flatten, "flatten", false, "with --dir: every .tf file below DIR becomes a root file named after its folder (documentation snippets combined into one root)")
			fs.StringVar(&f.repo, "repository", "", "the `URL` of the repository the files come from (https://host/owner/repo)")
			fs.StringVar(&f.commit, "commit", "", "the full 40-hex `COMMIT` the files are pinned at")
			fs.StringVar(&f.repoDir, "repo-dir", "", "with --dir: the root's `FOLDER` inside the repository (inferred from a corpus layout .../<owner>/<repo>/<commit>/<dir>)")
			fs.Var(&f.paths, "path", "online: a file or folder `PATH` of the repository (repeatable)")
			fs.StringVar(&f.name, "name", "", "the estate's `NAME` (default: corpus-<folder>)")
			fs.StringVar(&f.title, "title", "", "the estate's `TITLE` (default: the repository and folder)")
			fs.StringVar(&f.license, "license", "", "the files' license, an SPDX `ID`")
			estates := registerEstates(fs)
			registerCache(fs, &f.cache)
			fs.BoolVar(&f.force, "force", false, "overwrite an existing estate.yaml")
			return func(ctx context.Context, _ []string) error {
				if (f.dir == "") == (len(f.paths) == 0) {
					return cli.Usagef("estate new", "give --dir DIR (offline) or --repository R --commit C --path P... (online)")
				}
				if f.dir == "" && (f.repo == "" || f.commit == "") {
					return cli.Usagef("estate new", "--path needs --repository and --commit")
				}
				f.estates = *estates
				return newEstate(ctx, f)
			}
		},
	}
}

// estateNewFlags are estate new's flags.
type estateNewFlags struct {
	dir, repo, commit, repoDir, name, title, license, cache, estates string
	flatten, force                                                   bool
	paths                                                            multiFlag
}

// newEstate writes the estate.
func newEstate(ctx context.Context, f estateNewFlags) error {
	var files map[string][]byte // root path -> content
	src := &estate.Source{Repository: f.repo, Commit: f.commit, License: f.license}
	if f.dir != "" {
		abs, err := filepath.Abs(f.dir)
		if err != nil {
			return err
		}
		if r, c, d, ok := corpusLayout(abs); ok {
			src.Repository, src.Commit = orDefault(f.repo, r), orDefault(f.commit, c)
			if f.repoDir == "" {
				f.repoDir = d
			}
		}
		src.Dir = f.repoDir
		if files, err = readDir(abs); err != nil {
			return err
		}
		if f.name == "" {
			f.name = "corpus-" + slug(filepath.Base(abs))
		}
	} else {
		tree, err := corpus.ReadTree(ctx, f.repo, f.commit, f.paths)
		if err != nil {
			return err
		}
		src.Dir = commonDir(corpus.SortedPaths(tree))
		files = map[string][]byte{}
		for p, b := range tree {
			files[strings.TrimPrefix(strings.TrimPrefix(p, src.Dir), "/")] = b
		}
		if f.name == "" {
			f.name = "corpus-" + slug(path.Base(orDefault(src.Dir, strings.TrimSuffix(path.Base(f.paths[0]), ".tf"))))
		}
	}
	if src.Repository == "" {
		src.Repository = TODO
	}
	if src.Commit == "" {
		src.Commit = TODO
	}
	rootFiles := sortedKeys(files)
	for _, rel := range rootFiles {
		sf := estate.SourceFile{Path: rel, SHA256: corpus.Sum(files[rel])}
		if f.flatten && strings.Contains(rel, "/") {
			sf.As = flatName(rel, rootFiles)
		}
		src.Files = append(src.Files, sf)
	}
	if f.title == "" {
		f.title = strings.TrimPrefix(src.Repository, "https://github.com/") + " " + orDefault(src.Dir, "root")
	}
	// The root as a run lays it out, for the preview and the variables.
	work, err := os.MkdirTemp("", "gauntlet-estate-new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	for _, sf := range src.Files {
		to := orDefault(sf.As, sf.Path)
		if err := os.MkdirAll(filepath.Join(work, filepath.Dir(to)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(work, to), files[sf.Path], 0o644); err != nil {
			return err
		}
	}
	vars, required, err := rootVariables(work)
	if err != nil {
		return err
	}
	out := filepath.Join(f.estates, f.name, "estate.yaml")
	if _, err := os.Stat(out); err == nil && !f.force {
		return fmt.Errorf("estate new: %s exists (--force overwrites it)", out)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(out, []byte(specYAML(f.name, f.title, src, vars)), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d file(s) pinned by sha256 at %s@%s\n", out, len(src.Files), src.Repository, src.Commit)
	if f.dir != "" && src.Repository != TODO && src.Commit != TODO {
		// The run finds the files verified in the cache, offline.
		c := f.cache
		if c == "" {
			if c, err = toolchain.DefaultCacheDir(); err != nil {
				return err
			}
		}
		for _, sf := range src.Files {
			p, err := corpus.Path(c, src, path.Join(src.Dir, sf.Path))
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, files[sf.Path], 0o644); err != nil {
				return err
			}
		}
		fmt.Printf("cached the files under %s\n", filepath.Join(c, "corpus"))
	}
	if src.Repository == TODO || src.Commit == TODO {
		fmt.Printf("TODO: fill in source.repository and source.commit in %s (or pass --repository and --commit): the estate does not load until they are set\n", out)
	}
	if len(required) > 0 {
		fmt.Printf("TODO: the root requires variables with no default: %s - add them under variables: in %s\n", strings.Join(required, ", "), out)
	}
	return printPreview(os.Stdout, work)
}

// printPreview prints the stage plans a run would derive, from the
// configuration alone.
func printPreview(w io.Writer, dir string) error {
	p, objs, err := derive.Preview(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d object(s) in the configuration; stage plans gauntlet derives (a run derives again from the live objects):\n", len(objs))
	for _, st := range []string{"drift_reconverge", "day2_rename", "day2_remove", "plan_approval"} {
		fmt.Fprintf(w, "  %-17s %s\n", st, p.Why[st])
	}
	return nil
}

// corpusLayout recognises a folder laid out like shared/corpus:
// .../[host/]<owner>/<repo>/<40-hex commit>/<dir>.
func corpusLayout(abs string) (repository, commit, dir string, ok bool) {
	parts := strings.Split(filepath.ToSlash(abs), "/")
	hex := regexp.MustCompile(`^[0-9a-f]{40}$`)
	for i := 2; i < len(parts); i++ {
		if !hex.MatchString(parts[i]) {
			continue
		}
		host := "github.com"
		if i >= 3 && strings.Contains(parts[i-3], ".") {
			host = parts[i-3]
		}
		return "https://" + host + "/" + parts[i-2] + "/" + parts[i-1], parts[i], strings.Join(parts[i+1:], "/"), true
	}
	return "", "", "", false
}

// readDir reads every .tf file below dir, keyed by slash path.
func readDir(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".tf" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("estate new: no .tf file in %s", dir)
	}
	return out, err
}

// commonDir is the longest folder holding every path.
func commonDir(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	d := path.Dir(paths[0])
	for _, p := range paths[1:] {
		for d != "." && !strings.HasPrefix(p, d+"/") {
			d = path.Dir(d)
		}
	}
	if d == "." {
		return ""
	}
	return d
}

// flatName names a file from a subfolder in a flattened root: its folder
// ("cron_job_v1.tf"), or folder and name when the folder holds several.
func flatName(rel string, all []string) string {
	folder := path.Dir(rel)
	n := 0
	for _, o := range all {
		if path.Dir(o) == folder {
			n++
		}
	}
	name := strings.ReplaceAll(folder, "/", "_")
	if n > 1 {
		name += "_" + strings.TrimSuffix(path.Base(rel), ".tf")
	}
	return name + ".tf"
}

// rootVariables finds what the variables: section must hold: a variable
// a provider block's config_path reads is set to the run's kubeconfig;
// variables with no default are required (returned for the user).
func rootVariables(dir string) (map[string]string, []string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, nil, err
	}
	vars := map[string]string{}
	var required []string
	for _, p := range m {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		f, diags := hclsyntax.ParseConfig(b, filepath.Base(p), hcl.InitialPos)
		if diags.HasErrors() {
			return nil, nil, fmt.Errorf("estate new: %s", diags.Error())
		}
		for _, blk := range f.Body.(*hclsyntax.Body).Blocks {
			switch {
			case blk.Type == "variable" && len(blk.Labels) == 1:
				if _, ok := blk.Body.Attributes["default"]; !ok {
					required = append(required, blk.Labels[0])
				}
			case blk.Type == "provider" && len(blk.Labels) == 1 && blk.Labels[0] == "kubernetes":
				if a, ok := blk.Body.Attributes["config_path"]; ok {
					for _, t := range a.Expr.Variables() {
						if t.RootName() == "var" && len(t) > 1 {
							if s, ok := t[1].(hcl.TraverseAttr); ok {
								vars[s.Name] = "${kubeconfig}"
							}
						}
					}
				}
			}
		}
	}
	var req []string
	for _, r := range required {
		if _, ok := vars[r]; !ok {
			req = append(req, r)
		}
	}
	sort.Strings(req)
	return vars, req, nil
}

func specYAML(name, title string, src *estate.Source, vars map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `gauntlet estate new`: the root's files pinned by sha256. The stage plans\n")
	fmt.Fprintf(&b, "# (drift, rename, remove, plan_approval) are derived from the root at run time; a section\n")
	fmt.Fprintf(&b, "# written here overrides its derived plan.\n")
	fmt.Fprintf(&b, "name: %s\ntitle: %q\n", name, title)
	fmt.Fprintf(&b, "source:\n  repository: %s\n  commit: %q\n", src.Repository, src.Commit)
	if src.License != "" {
		fmt.Fprintf(&b, "  license: %s\n", src.License)
	}
	fmt.Fprintf(&b, "  dir: %q\n  files:\n", src.Dir)
	for _, f := range src.Files {
		if f.As != "" {
			fmt.Fprintf(&b, "    - {path: %s, sha256: %s, as: %s}\n", f.Path, f.SHA256, f.As)
		} else {
			fmt.Fprintf(&b, "    - {path: %s, sha256: %s}\n", f.Path, f.SHA256)
		}
	}
	if len(vars) > 0 {
		b.WriteString("variables:\n")
		for _, k := range sortedKeys(vars) {
			fmt.Fprintf(&b, "  %s: %q\n", k, vars[k])
		}
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func slug(s string) string {
	s = strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(s, "-"))
	return strings.Trim(s, "-")
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
