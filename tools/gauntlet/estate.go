package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gauntlet-k8s/gauntlet/internal/corpus"
	"github.com/gauntlet-k8s/gauntlet/internal/derive"
	"github.com/gauntlet-k8s/gauntlet/internal/slashpath"
	"github.com/gauntlet-k8s/gauntlet/internal/toolchain"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/estate"
	"github.com/gauntlet-k8s/gauntlet/tools/gauntlet/internal/cli"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TODO is what estate new writes where only the user knows the value;
// loading the estate then fails naming it.
const TODO = "TODO"

func estateNewCommand(stdout io.Writer) cli.Command {
	return cli.Command{
		Name:    "estate new",
		Summary: "write an estate for a root: a directory offline, or repository/commit/paths online",
		Doc: "Writes estates/<name>/estate.yaml for a Terraform root, pinning by sha256 every file the root reads - its .tf files, " +
			"the local modules it calls and the files it reads (file(), templatefile(), ...), from outside its folder too: from a " +
			"directory (offline; a folder laid out like ../shared/corpus gives the repository and commit, and the files are cached " +
			"so a run finds them; a plain folder without --repository and --commit has its files copied beside estate.yaml, " +
			"under files:), or from a repository's paths at a commit (online, a shallow git fetch). A variable a kubernetes " +
			"provider's config_path reads is set to the run's kubeconfig; a variable with no default is written as TODO, and the " +
			"estate does not load until it has a value. Then reports what it took, what it could not resolve, the literal cluster " +
			"settings a run overrides, the providers the toolchain cannot supply (with a commented relax_providers: where the " +
			"root's constraints exclude the pins), and prints the stage plans a run would derive from the configuration.",
		Examples: []cli.Example{
			{What: "an estate for a root in the shared corpus, offline", Command: "gauntlet estate new --dir ../shared/corpus/github.com/owner/repo/<commit>/examples/basic"},
			{What: "an ordered estate: a CRD's root, then its custom resources' (the acted root)", Command: "gauntlet estate new --dir ./crd --dir ./app --name my-app"},
			{What: "an estate for a repository's folder at a commit, online", Command: "gauntlet estate new --repository https://github.com/owner/repo --commit <40-hex> --path examples/basic --name my-root"},
		},
		Setup: func(fs *cli.FlagSet) cli.Action {
			var f estateNewFlags
			fs.Var(&f.dirs, "dir", "offline: the root's folder, `DIR` (the local modules it calls and the files it reads are taken with it, from outside the folder too); repeated, an ordered estate (roots:) applied in the order given, the stages acting on the last")
			fs.BoolVar(&f.flatten, "flatten", false, "with --dir: every .tf file below DIR becomes a root file named after its folder (documentation snippets combined into one root)")
			fs.StringVar(&f.repo, "repository", "", "the `URL` of the repository the files come from (https://host/owner/repo)")
			fs.StringVar(&f.commit, "commit", "", "the full 40-hex `COMMIT` the files are pinned at")
			fs.StringVar(&f.repoDir, "repo-dir", "", "with --dir: the root's `FOLDER` inside the repository (inferred from a corpus layout .../<owner>/<repo>/<commit>/<dir>)")
			fs.Var(&f.paths, "path", "online: the root's folder, or files of one folder, in the repository, a `PATH` (repeatable)")
			fs.StringVar(&f.name, "name", "", "the estate's `NAME` (default: corpus-<folder>, or corpus-<repository> for a root at the repository's top; <folder> for a plain folder copied beside estate.yaml)")
			fs.StringVar(&f.title, "title", "", "the estate's `TITLE` (default: the repository and folder)")
			fs.StringVar(&f.license, "license", "", "the files' license, an SPDX `ID`")
			estates := registerEstates(fs)
			registerCache(fs, &f.cache)
			fs.BoolVar(&f.force, "force", false, "overwrite an existing estate.yaml")
			return func(ctx context.Context, _ []string) error {
				if (len(f.dirs) == 0) == (len(f.paths) == 0) {
					return cli.Usagef("estate new", "give --dir DIR... (offline) or --repository R --commit C --path P... (online)")
				}
				if len(f.dirs) > 1 && (f.flatten || f.repoDir != "") {
					return cli.Usagef("estate new", "--flatten and --repo-dir go with one --dir")
				}
				if len(f.dirs) == 0 && (f.repo == "" || f.commit == "") {
					return cli.Usagef("estate new", "--path needs --repository and --commit")
				}
				f.estates = *estates
				return newEstate(ctx, f, stdout)
			}
		},
	}
}

// estateNewFlags are estate new's flags.
type estateNewFlags struct {
	repo, commit, repoDir, name, title, license, cache, estates string
	flatten, force                                              bool
	dirs, paths                                                 multiFlag
}

// newEstate writes the estate and prints its report on w: what the root
// reads, what a run changes so it reaches each side's cluster, what the
// toolchain cannot supply and what only the user knows. Several --dir
// folders make an ordered estate (roots:, applied in the order given: a
// CRD's root before its custom resources'); the last is the acted root.
func newEstate(ctx context.Context, f estateNewFlags, w io.Writer) error {
	// The roots as a run lays them out - overrides included - for the
	// report, the preview and the variables.
	work, err := os.MkdirTemp("", "gauntlet-estate-new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	var roots []*takenRoot
	if len(f.dirs) > 0 {
		for i, dir := range f.dirs {
			tr, err := takeDir(f, dir, filepath.Join(work, fmt.Sprint(i)))
			if err != nil {
				return err
			}
			roots = append(roots, tr)
		}
	} else {
		tr, err := takeOnline(ctx, f, work)
		if err != nil {
			return err
		}
		roots = append(roots, tr)
	}
	acted := roots[len(roots)-1]
	if f.name == "" {
		f.name = acted.name
	}
	if f.title == "" {
		f.title = orDefault(acted.title, strings.TrimPrefix(acted.src.Repository, "https://github.com/")+" "+orDefault(acted.src.Dir, "root"))
	}
	if len(roots) > 1 {
		seen := map[string]int{}
		for _, r := range roots {
			r.rootName = strings.TrimPrefix(r.name, "corpus-")
			if r.rootName == "" {
				r.rootName = "root"
			}
			if seen[r.rootName]++; seen[r.rootName] > 1 {
				r.rootName += fmt.Sprint("-", seen[r.rootName])
			}
		}
	}
	out := filepath.Join(f.estates, f.name, "estate.yaml")
	if _, err := os.Stat(out); err == nil && !f.force {
		return fmt.Errorf("estate new: %s exists (--force overwrites it)", out)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	body := ""
	if len(roots) == 1 {
		body = specYAML(f.name, f.title, acted)
	} else {
		body = rootsYAML(f.name, f.title, roots)
	}
	if err := os.WriteFile(out, []byte(body), 0o644); err != nil {
		return err
	}
	for _, r := range roots {
		paths, files := r.besideFiles(len(roots) > 1)
		for _, p := range paths {
			dst := filepath.Join(filepath.Dir(out), filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, files[p], 0o644); err != nil {
				return err
			}
		}
	}
	for _, r := range roots {
		if err := writeTaken(w, f, out, r, len(roots) > 1); err != nil {
			return err
		}
	}
	if len(roots) > 1 {
		fmt.Fprintf(w, "\nthe stages act on the last root, %s; the others are applied before it in the order given and destroyed after it\n", acted.rootName)
	}
	return printPreview(w, acted.root.Dir)
}

// takenRoot is one root as estate new took it.
type takenRoot struct {
	name     string // the estate's default name for this root alone
	rootName string // its name under roots: in an ordered estate
	title    string // the estate's default title, when not the repository's
	src      *estate.Source
	files    map[string][]byte // path relative to the root's folder -> content
	taken    *estate.Taken     // nil with --flatten
	laid     *estate.Taken
	root     *estate.Root
	vars     map[string]string
	required []string
	needs    []estate.ProviderNeed
	// bars are the root's required_version lines a default engine
	// does not meet.
	bars []versionBar
	// beside: the root came from a plain folder with no repository or
	// commit given, so its files are copied beside estate.yaml (files:)
	// instead of pinned to a repository (source:).
	beside bool
}

// takeDir takes the root in a folder (offline), laid out in work.
func takeDir(f estateNewFlags, dir, work string) (*takenRoot, error) {
	tr := &takenRoot{src: &estate.Source{Repository: f.repo, Commit: f.commit, License: f.license}}
	src, repoDir := tr.src, f.repoDir
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	base, rootRel := filepath.Dir(abs), filepath.Base(abs)
	if r, c, d, ok := corpusLayout(abs); ok {
		src.Repository, src.Commit = orDefault(f.repo, r), orDefault(f.commit, c)
		if repoDir == "" {
			repoDir = d
		}
		base, rootRel = strings.TrimSuffix(strings.TrimSuffix(filepath.ToSlash(abs), d), "/"), orDefault(d, ".")
	} else {
		// Outside a corpus layout the tree is the whole file system;
		// the estate's dir becomes the part the root's files share.
		base, rootRel = "/", strings.TrimPrefix(filepath.ToSlash(abs), "/")
		tr.beside = f.repo == "" && f.commit == ""
	}
	if f.flatten {
		if tr.files, err = readDir(abs); err != nil {
			return nil, err
		}
		src.Dir = repoDir
	} else {
		if tr.taken, err = estate.Closure(estate.DirTree(base), rootRel); err != nil {
			return nil, fmt.Errorf("estate new: %w", err)
		}
		var up int
		if tr.files, up, err = takenFiles(estate.DirTree(base), tr.taken); err != nil {
			return nil, err
		}
		src.Dir = repoDir
		if src.Dir == "" && up > 0 {
			// Outside a corpus layout: the folders the files climb to
			// stand for the repository's.
			segs := strings.Split(rootRel, "/")
			src.Dir = strings.Join(segs[max(0, len(segs)-up):], "/")
		}
	}
	tr.name = "corpus-" + slug(orDefault(path.Base(src.Dir), repoName(src.Repository)))
	if src.Dir == "" || src.Dir == "." {
		tr.name = "corpus-" + slug(orDefault(repoName(src.Repository), filepath.Base(abs)))
	}
	if tr.beside {
		// The user's own root, not a third party's: named and titled
		// after its folder.
		tr.name, tr.title = slug(filepath.Base(abs)), "the root in "+filepath.Base(abs)
	}
	return tr, tr.lay(f, work)
}

// takeOnline takes the root at the repository's paths (online).
func takeOnline(ctx context.Context, f estateNewFlags, work string) (*takenRoot, error) {
	tr := &takenRoot{src: &estate.Source{Repository: f.repo, Commit: f.commit, License: f.license}}
	tree, err := corpus.OpenTree(ctx, f.repo, f.commit)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	root, only := onlinePaths(tree, f.paths)
	if tr.taken, err = estate.Closure(tree, root, only...); err != nil {
		return nil, fmt.Errorf("estate new: %w", err)
	}
	if tr.files, _, err = takenFiles(tree, tr.taken); err != nil {
		return nil, err
	}
	tr.src.Dir = strings.TrimPrefix(tr.taken.Root, ".")
	tr.name = "corpus-" + slug(repoName(f.repo))
	if tr.src.Dir != "" {
		tr.name = "corpus-" + slug(path.Base(tr.src.Dir))
	}
	return tr, tr.lay(f, work)
}

// lay pins the root's files and lays the root out in work as a run would,
// reading its variables and the providers the toolchain cannot supply.
func (tr *takenRoot) lay(f estateNewFlags, work string) error {
	src := tr.src
	if src.Repository == "" {
		src.Repository = TODO
	}
	if src.Commit == "" {
		src.Commit = TODO
	}
	rootFiles := slices.Sorted(maps.Keys(tr.files))
	for _, rel := range rootFiles {
		sf := estate.SourceFile{Path: rel, SHA256: corpus.Sum(tr.files[rel])}
		if f.flatten && strings.Contains(rel, "/") {
			sf.As = flatName(rel, rootFiles)
		}
		src.Files = append(src.Files, sf)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	var err error
	if tr.root, err = layOut(work, src, tr.files); err != nil {
		return err
	}
	if tr.laid, err = tr.root.Taken(); err != nil {
		return err
	}
	files, err := parseRoot(tr.root.Dir)
	if err != nil {
		return err
	}
	tr.vars, tr.required = rootVariables(files)
	for _, r := range tr.required {
		tr.vars[r] = TODO
	}
	tr.needs = tr.laid.ProviderNeeds(supplied(), nil)
	engines, err := defaultEngines()
	if err != nil {
		return err
	}
	tr.bars = versionBars(files, engines)
	return nil
}

// writeTaken says what was written for the root, caches its files so a
// run finds them offline, and reports what it found.
func writeTaken(w io.Writer, f estateNewFlags, out string, tr *takenRoot, several bool) error {
	src := tr.src
	if several {
		fmt.Fprintf(w, "\n== root %s\n", tr.rootName)
	}
	if tr.beside {
		paths, _ := tr.besideFiles(several)
		fmt.Fprintf(w, "wrote %s and copied the root's %d file(s) beside it (files:): the estate is its own source now; every proof keys on each file's sha256\n", out, len(paths))
	} else {
		fmt.Fprintf(w, "wrote %s: %d file(s) pinned by sha256 at %s@%s\n", out, len(src.Files), src.Repository, src.Commit)
	}
	if len(f.dirs) > 0 && !tr.beside && src.Repository != TODO && src.Commit != TODO {
		// The run finds the files verified in the cache, offline.
		c, err := cacheOrDefault(f.cache)
		if err != nil {
			return err
		}
		for _, sf := range src.Files {
			p, err := corpus.Path(c, src, path.Join(src.Dir, sf.Path))
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, tr.files[sf.Path], 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "cached the files under %s\n", filepath.Join(c, "corpus"))
	}
	report(w, tr.taken, tr.laid, tr.root, tr.needs)
	var bars []string
	for _, b := range tr.bars {
		bars = append(bars, b.String())
	}
	section(w, "engine versions the root refuses (every run stops at init; a commented delta is in estate.yaml)", bars)
	if !tr.beside && (src.Repository == TODO || src.Commit == TODO) {
		fmt.Fprintf(w, "TODO: fill in source.repository and source.commit in %s (or pass --repository and --commit): the estate does not load until they are set\n", out)
	}
	if len(tr.required) > 0 {
		fmt.Fprintf(w, "TODO: the root requires variables with no default: %s - written as TODO under variables: in %s; the estate does not load until each has a value\n", strings.Join(tr.required, ", "), out)
	}
	return nil
}

// report says what estate new found: the files and modules taken besides
// the root's own .tf files, what could not be resolved or taken, the
// cluster settings a run overrides, and the providers it cannot supply.
func report(w io.Writer, taken, laid *estate.Taken, root *estate.Root, needs []estate.ProviderNeed) {
	if taken != nil {
		// Paths are said from the root's folder, as estate.yaml pins them.
		from := func(p string) string { return fromRoot(taken.Root, p) }
		var extra []string
		for _, p := range taken.SortedFiles() {
			if why := taken.Files[p]; why != "the root" && !strings.HasPrefix(why, "module ") {
				at := strings.LastIndex(why, " at ")
				if at > 0 {
					why = why[:at+4] + from(why[at+4:])
				}
				extra = append(extra, fmt.Sprintf("%s (%s)", from(p), why))
			}
		}
		section(w, "files the configuration reads, taken and pinned", extra)
		var mods []string
		for _, m := range taken.Modules[1:] {
			mods = append(mods, slashpath.Rel(taken.Root, m))
		}
		section(w, "local modules taken, by their path from the root's folder (each folder's .tf files)", mods)
		section(w, "references that cannot be resolved statically (not taken: their path is known only at plan time)", refs(taken.Root, taken.Unresolved))
		section(w, "references to files that do not exist or lie outside the repository", refs(taken.Root, taken.Missing))
		section(w, "module sources that are not local paths (the engines' init would need the network)", refs(taken.Root, taken.Remote))
	}
	var cluster []string
	for _, cs := range laid.Cluster {
		cs.Pos = fromRoot(laid.Root, cs.Pos)
		cluster = append(cluster, cs.String()+" - a run points it at each side's cluster through "+estate.ClusterOverride)
	}
	section(w, "literal cluster settings", cluster)
	var ns []string
	for _, n := range needs {
		n.Use.Pos = fromRoot(laid.Root, n.Use.Pos)
		for i, a := range n.Also {
			if at := strings.LastIndex(a, " at "); at > 0 {
				n.Also[i] = a[:at+4] + fromRoot(laid.Root, a[at+4:])
			}
		}
		ns = append(ns, n.String())
	}
	section(w, "providers the toolchain cannot supply (a run is refused before any cluster starts)", ns)
	var applied []string
	for _, d := range root.Applied {
		applied = append(applied, d.Name+": "+d.Why)
	}
	section(w, "what a run changes in the root (shown on the evidence page)", applied)
}

func section(w io.Writer, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

func refs(root string, rs []estate.Reference) []string {
	var out []string
	for _, r := range rs {
		r.Pos = fromRoot(root, r.Pos)
		if r.Path != "" {
			r.Path = fromRoot(root, r.Path)
		}
		out = append(out, r.String())
	}
	return out
}

// fromRoot says a tree path ("examples/app/main.tf:3") from the root's
// folder ("main.tf:3"), a line number kept.
func fromRoot(root, p string) string {
	line := ""
	if i := strings.LastIndex(p, ":"); i > 0 {
		p, line = p[:i], p[i:]
	}
	return slashpath.Rel(root, p) + line
}

// takenFiles reads every taken file, keyed by its path relative to the
// root's folder ("../../main.tf" for a module called from above it), and
// says how many folders they climb above it.
func takenFiles(t estate.Tree, tk *estate.Taken) (map[string][]byte, int, error) {
	all := tk.SortedFiles()
	if len(all) == 0 {
		return nil, 0, fmt.Errorf("estate new: no .tf file in %s", tk.Root)
	}
	files := map[string][]byte{}
	up := 0
	for _, p := range all {
		b, err := t.ReadFile(p)
		if err != nil {
			return nil, 0, fmt.Errorf("estate new: %w", err)
		}
		rel := slashpath.Rel(tk.Root, p)
		files[rel] = b
		n, _ := slashpath.Climb(rel)
		up = max(up, n)
	}
	return files, up, nil
}

// onlinePaths turns --path arguments into the root's folder and, when
// they name files, the only root files to read.
func onlinePaths(t estate.Tree, paths []string) (string, []string) {
	if len(paths) == 1 && !strings.HasSuffix(paths[0], ".tf") {
		return strings.Trim(paths[0], "/"), nil
	}
	var only []string
	for _, p := range paths {
		if strings.HasSuffix(p, ".tf") {
			only = append(only, p)
		}
	}
	return commonDir(paths), only
}

// layOut materialises the root as a run would (a placeholder
// kubeconfig: nothing reaches a cluster), so what the report says is what
// a run does.
func layOut(work string, src *estate.Source, files map[string][]byte) (*estate.Root, error) {
	spec := &estate.Spec{Name: "estate-new", Source: src}
	var fetched []estate.Fetched
	for i, p := range src.Pinned() {
		f := filepath.Join(work, "files", fmt.Sprint(i))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(f, files[src.Files[i].Path], 0o644); err != nil {
			return nil, err
		}
		fetched = append(fetched, estate.Fetched{RootPath: p.RootPath, File: f})
	}
	kc := filepath.Join(work, "placeholder.kubeconfig")
	const placeholder = "apiVersion: v1\nkind: Config\nclusters: [{name: p, cluster: {server: \"https://127.0.0.1:1\"}}]\nusers: [{name: p, user: {token: p}}]\ncontexts: [{name: p, context: {cluster: p, user: p}}]\ncurrent-context: p\n"
	if err := os.WriteFile(kc, []byte(placeholder), 0o600); err != nil {
		return nil, err
	}
	pins := supplied()
	var kube []estate.ProviderPin
	for _, p := range pins {
		if p.Name == "kubernetes" {
			kube = append(kube, p)
		}
	}
	return spec.Materialise(filepath.Join(work, "root"), estate.DefaultRoot, estate.Materials{
		Fetched: fetched, Substrate: "local", Providers: kube, Supplied: pins, Kubeconfig: kc})
}

// supplied are the providers the toolchain pins.
func supplied() []estate.ProviderPin {
	pins, err := toolchain.DefaultPins()
	if err != nil {
		return nil
	}
	var out []estate.ProviderPin
	for _, pr := range pins.Providers {
		out = append(out, estate.ProviderPin{Name: pr.Type, Source: pr.Namespace + "/" + pr.Type, Version: pr.Version})
	}
	return out
}

// repoName is a repository URL's last part ("terraform-kubernetes-agent").
func repoName(repository string) string {
	if repository == "" || repository == TODO {
		return ""
	}
	return path.Base(strings.TrimSuffix(repository, ".git"))
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
func rootVariables(files []rootFile) (map[string]string, []string) {
	vars := map[string]string{}
	var required []string
	for _, f := range files {
		for _, blk := range f.body.Blocks {
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
	return vars, req
}

// rootFile is one of a root's .tf files, parsed.
type rootFile struct {
	name string // the file's name in the root's folder
	body *hclsyntax.Body
}

// parseRoot reads and parses the .tf files of the root in dir, for what
// estate new reads of the configuration (variables, required_version).
func parseRoot(dir string) ([]rootFile, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	var out []rootFile
	for _, p := range m {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f, diags := hclsyntax.ParseConfig(b, filepath.Base(p), hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("estate new: %s", diags.Error())
		}
		out = append(out, rootFile{name: filepath.Base(p), body: f.Body.(*hclsyntax.Body)})
	}
	return out, nil
}

func specYAML(name, title string, tr *takenRoot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\n", estate.APIVersion)
	if tr.beside {
		fmt.Fprintf(&b, "# Written by `gauntlet estate new`: the root's files copied beside this file. The stage plans\n")
	} else {
		fmt.Fprintf(&b, "# Written by `gauntlet estate new`: the root's files pinned by sha256. The stage plans\n")
	}
	fmt.Fprintf(&b, "# (drift, rename, remove, plan_approval) are derived from the root at run time; a section\n")
	fmt.Fprintf(&b, "# written here overrides its derived plan.\n")
	fmt.Fprintf(&b, "name: %s\ntitle: %q\n", name, title)
	tr.writeFiles(&b, "", false)
	writeVariables(&b, "", tr.vars, tr.required)
	var relax []estate.ProviderNeed
	for _, n := range tr.needs {
		if n.Relaxable {
			relax = append(relax, n)
		}
	}
	if len(relax) > 0 {
		b.WriteString("# The root's version constraints exclude the pinned providers; to run it on the pins,\n# declare each relaxation (the evidence page shows it) by uncommenting:\n# relax_providers:\n")
		for _, n := range relax {
			fmt.Fprintf(&b, "#   - {provider: %s, constraint: %q, why: \"...\"}  # %s\n", n.Use.Name, n.Use.Constraint, n.Use.Pos)
		}
	}
	if len(tr.bars) > 0 {
		b.WriteString("# The root's required_version excludes the pinned engines, which refuse it at init; where the root\n# does not need an older engine, remove the line with a delta (the evidence page shows it) by uncommenting:\n# deltas:\n")
		for _, v := range tr.bars {
			fmt.Fprintf(&b, "#   - {name: required-version, why: \"...\", file: %s, old: 'required_version = %q', new: ''}  # %s\n", v.file, v.constraint, v.line)
		}
	}
	return b.String()
}

// rootsYAML is the estate.yaml of an ordered estate: each root with its
// pinned source and its variables, in apply order.
func rootsYAML(name, title string, roots []*takenRoot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\n", estate.APIVersion)
	fmt.Fprintf(&b, "# Written by `gauntlet estate new`: each root's files pinned by sha256, the roots applied in\n")
	fmt.Fprintf(&b, "# order and destroyed in reverse; the stages act on the last. The stage plans are derived\n")
	fmt.Fprintf(&b, "# from the acted root at run time; a section written here overrides its derived plan.\n")
	fmt.Fprintf(&b, "name: %s\ntitle: %q\nroots:\n", name, title)
	for _, r := range roots {
		fmt.Fprintf(&b, "  - name: %s\n", r.rootName)
		r.writeFiles(&b, "    ", true)
		writeVariables(&b, "    ", r.vars, r.required)
	}
	return b.String()
}

// writeFiles writes the root's source: block, or its files: list when
// its files are copied beside estate.yaml.
func (tr *takenRoot) writeFiles(b *strings.Builder, in string, several bool) {
	if !tr.beside {
		writeSource(b, in, tr.src)
		return
	}
	paths, _ := tr.besideFiles(several)
	fmt.Fprintf(b, "%sfiles:\n", in)
	for _, p := range paths {
		fmt.Fprintf(b, "%s  - %s\n", in, p)
	}
}

// besideFiles are the root's files as estate new copies them beside
// estate.yaml, by their path from its folder: the root's own files first
// (the loader reads the first file's folder as the root's), the local
// modules and read files keeping their paths from the root, which sits as
// deep as they climb; in an ordered estate, under the root's name.
func (tr *takenRoot) besideFiles(several bool) ([]string, map[string][]byte) {
	if !tr.beside {
		return nil, nil
	}
	prefix := ""
	if slices.ContainsFunc(slices.Collect(maps.Keys(tr.files)), func(p string) bool { return strings.HasPrefix(p, "../") }) {
		prefix = tr.src.Dir // the folders they climb to, named as on disk
	}
	if several {
		prefix = path.Join(tr.rootName, prefix)
	}
	files := map[string][]byte{}
	var own, others []string
	for _, sf := range tr.src.Files {
		p := path.Join(prefix, orDefault(sf.As, sf.Path))
		files[p] = tr.files[sf.Path]
		if path.Dir(orDefault(sf.As, sf.Path)) == "." {
			own = append(own, p)
		} else {
			others = append(others, p)
		}
	}
	// A .tf file first: the loader applies a delta with no file to it.
	notTF := func(p string) int {
		if path.Ext(p) == ".tf" {
			return 0
		}
		return 1
	}
	slices.SortFunc(own, func(a, b string) int { return cmp.Or(cmp.Compare(notTF(a), notTF(b)), strings.Compare(a, b)) })
	slices.Sort(others)
	return append(own, others...), files
}

// writeSource writes a source: block, each line indented by in.
func writeSource(b *strings.Builder, in string, src *estate.Source) {
	fmt.Fprintf(b, "%ssource:\n%s  repository: %s\n%s  commit: %q\n", in, in, src.Repository, in, src.Commit)
	if src.License != "" {
		fmt.Fprintf(b, "%s  license: %s\n", in, src.License)
	}
	fmt.Fprintf(b, "%s  dir: %q\n%s  files:\n", in, src.Dir, in)
	for _, f := range src.Files {
		if f.As != "" {
			fmt.Fprintf(b, "%s    - {path: %s, sha256: %s, as: %s}\n", in, f.Path, f.SHA256, f.As)
		} else {
			fmt.Fprintf(b, "%s    - {path: %s, sha256: %s}\n", in, f.Path, f.SHA256)
		}
	}
}

// writeVariables writes a variables: block, each line indented by in; a
// required variable with no value yet is a TODO the loader refuses.
func writeVariables(b *strings.Builder, in string, vars map[string]string, required []string) {
	if len(vars) == 0 {
		return
	}
	fmt.Fprintf(b, "%svariables:\n", in)
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if vars[k] == TODO && slices.Contains(required, k) {
			fmt.Fprintf(b, "%s  %s: %s # required by the root (no default): the estate does not load until it has a value\n", in, k, TODO)
			continue
		}
		fmt.Fprintf(b, "%s  %s: %q\n", in, k, vars[k])
	}
}

func slug(s string) string {
	s = strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(s, "-"))
	return strings.Trim(s, "-")
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
