package conformance

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompiledStaleness: a proof goes stale when the compiled code of the
// run's closure changes, and only then. A comment reworded on its line and
// a change to a renderer or to the CLI (outside pkg/gauntlet's closure)
// keep it fresh; a comment that shifts the lines below it changes the line
// tables compiled into the package, and reformatting an inlinable body
// moves the positions its export data carries: both make it stale (the
// compiled code is not identical), as does a real change, naming the file.
func TestCompiledStaleness(t *testing.T) {
	r := newRepo(t)
	r.provenBoth()
	orig := mustRead(t, filepath.Join(r.dir, "pkg/stage/record.go"))
	wantProof(t, r.report(), reqCrash, Proven, "")

	steps := []struct {
		name, path, content string
		want                Proof
		whyHas              string
	}{
		{"a comment reworded on its line", "pkg/stage/record.go",
			strings.Replace(orig, "// Failed says whether a check failed.", "// Failed reports whether any check failed.", 1), Proven, ""},
		{"a renderer", "pkg/evidence/page.go", "package evidence\n\n// Title heads a page.\nconst Title = \"pages\"\n\nfunc Render() string { return Title }\n", Proven, ""},
		{"the CLI", "tools/gauntlet/main.go", "package main\n\nimport (\n\t\"fmt\"\n\n\t_ \"example.com/g/pkg/evidence\"\n\t_ \"example.com/g/pkg/gauntlet\"\n)\n\nfunc main() { fmt.Println() }\n", Proven, ""},
		{"a comment that adds a line", "pkg/stage/record.go",
			strings.Replace(orig, "// Failed says whether a check failed.", "// Failed says whether a check failed.\n// It is the verdict's input.", 1), Stale, "pkg/stage/record.go (compiled pkg/stage differs)"},
		{"the original text again", "pkg/stage/record.go", orig, Proven, ""},
		// Failed is inlinable: its body travels in the export data with
		// the columns of its tokens, so moving one is a compiled change.
		{"an inlinable body reformatted on its line", "pkg/stage/record.go",
			strings.Replace(orig, "{ return true }", "{ return  true }", 1), Stale, "pkg/stage/record.go (compiled pkg/stage differs)"},
		{"a real change", "pkg/stage/record.go",
			strings.Replace(orig, "return true", "return false", 1), Stale, "pkg/stage/record.go (compiled pkg/stage differs)"},
	}
	for _, s := range steps {
		r.write(s.path, s.content)
		rep := r.report()
		st := proofOf(t, rep, reqCrash)
		if st.Proof != s.want || !strings.Contains(st.Why, s.whyHas) {
			t.Errorf("%s: %s (%s), want %s mentioning %q", s.name, st.Proof, st.Why, s.want, s.whyHas)
		}
	}
	// A package the closure gains is judged like the rest from then on.
	r.write("pkg/unrelated/u.go", "package unrelated\n\nvar X = true\n")
	r.write("pkg/stage/record.go", "package stage\n\nimport \"example.com/g/pkg/unrelated\"\n\n// Failed says whether a check failed.\nfunc Failed() bool { return unrelated.X }\n")
	wantProof(t, r.report(), reqCrash, Stale, "compiled pkg/unrelated (added to the run's closure)")
	r.commit("stage reads unrelated")
	r.provenBoth()
	wantProof(t, r.report(), reqCrash, Proven, "")
	r.write("pkg/unrelated/u.go", "package unrelated\n\n// X is exported.\nvar X = true\n")
	wantProof(t, r.report(), reqCrash, Stale, "pkg/unrelated/u.go (compiled pkg/unrelated differs)")
	if got := describeCompiled("pkg/stage", map[string]string{"pkg/stage/a.go": "1"}, map[string]string{"pkg/stage/a.go": "1"}); !strings.Contains(got, "none of its files changed") {
		t.Errorf("a package recompiled for its imports: %q", got)
	}
}

// TestV1Inputs: a run recorded before compiled inputs (v1: the source of
// the whole CLI's closure) is judged as it was: fresh while those files are
// the same, stale naming the file when one changes - a renderer included.
func TestV1Inputs(t *testing.T) {
	r := newRepo(t)
	tree, err := NewTree(context.Background(), r.dir)
	if err != nil {
		t.Fatal(err)
	}
	now, err := tree.Inputs("e1", "local", nil)
	if err != nil {
		t.Fatal(err)
	}
	v1 := *now
	v1.Schema, v1.Compiled, v1.Code = InputsSchemaV1, nil, tree.v1code
	raw, err := v1.Encode()
	if err != nil {
		t.Fatal(err)
	}
	then, err := ParseInputs(raw)
	if err != nil {
		t.Fatal(err)
	}
	if c := Changed(then, now); len(c) != 0 {
		t.Errorf("an unchanged tree: %v", c)
	}
	if _, ok := then.Code["pkg/evidence/page.go"]; !ok {
		t.Fatalf("v1 code is the CLI's closure: %v", then.Code)
	}
	r.write("pkg/evidence/page.go", "package evidence\n")
	tree, err = NewTree(context.Background(), r.dir)
	if err != nil {
		t.Fatal(err)
	}
	now, _ = tree.Inputs("e1", "local", nil)
	if c := Changed(then, now); !slices.Contains(c, "pkg/evidence/page.go") {
		t.Errorf("a renderer change under v1: %v", c)
	}
}

// TestRunClosure: the packages a recorded run executes are pkg/gauntlet's
// closure - runner, stages, clusters, engine - and the renderers and the
// CLI are not in it, so changing them stales no proof.
func TestRunClosure(t *testing.T) {
	needTools(t)
	root := repoRoot(t)
	cmd := exec.Command("go", "list", "-deps", RunPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", RunPackage, err)
	}
	deps := strings.Fields(string(out))
	const mod = "github.com/gauntlet-k8s/gauntlet/"
	for _, in := range []string{"pkg/gauntlet", "pkg/gauntlet/stage", "internal/substrate/local", "internal/substrate/kind", "pkg/gauntlet/engine", "internal/toolchain", "pkg/gauntlet/result"} {
		if !slices.Contains(deps, mod+in) {
			t.Errorf("%s is not in the run's closure", in)
		}
	}
	for _, out := range []string{"internal/evidence", "internal/conformance", "internal/matrix", "internal/mutant", "tools/gauntlet"} {
		if slices.Contains(deps, mod+out) {
			t.Errorf("%s is in the run's closure: a change to it would stale every proof", out)
		}
	}
}

// TestStageCommentCompiles: on gauntlet's own code, a copy in another
// directory compiles to the same content, a comment reworded in a stage
// file compiles to the same package, and a changed check name does not. It compiles pkg/gauntlet's closure (from the build cache when warm;
// minutes cold), so -short skips it.
func TestStageCommentCompiles(t *testing.T) {
	needTools(t)
	if testing.Short() {
		t.Skip("compiles pkg/gauntlet's closure three times (from the build cache when warm)")
	}
	dir := t.TempDir()
	root := repoRoot(t)
	for _, p := range []string{"go.mod", "go.sum", "pkg", "internal", "third_party"} {
		copyTree(t, filepath.Join(root, p), filepath.Join(dir, p))
	}
	drift := filepath.Join(dir, "pkg/gauntlet/stage/drift.go")
	orig := mustRead(t, drift)
	compiled := func(content string) map[string]string {
		t.Helper()
		if err := os.WriteFile(drift, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := compiledClosure(context.Background(), dir, RunPackage)
		if err != nil {
			t.Fatal(err)
		}
		return c.compiled
	}
	base := compiled(orig)
	// -trimpath: the checkout's path is not part of the content, so two
	// clones (two shards' machines) key the same code alike.
	here, err := compiledClosure(context.Background(), root, RunPackage)
	if err != nil {
		t.Fatal(err)
	}
	if diff := changedCompiled(&Inputs{Compiled: here.compiled}, &Inputs{Compiled: base}); len(diff) != 0 {
		t.Errorf("the same code in another directory compiled differently: %v", diff)
	}
	comment := compiled(mustReplace(t, orig, "// Run tampers one object out of band", "// Run tampers a single object out of band"))
	code := compiled(mustReplace(t, orig, `"next plan empty"`, `"next plan is empty"`))
	const stage = "pkg/gauntlet/stage"
	if base[stage] == "" || base[stage] != comment[stage] {
		t.Errorf("a reworded comment changed the compiled stage package: %s -> %s", base[stage], comment[stage])
	}
	if diff := changedCompiled(&Inputs{Compiled: base}, &Inputs{Compiled: comment}); len(diff) != 0 {
		t.Errorf("a reworded comment changed %v", diff)
	}
	if base[stage] == code[stage] {
		t.Error("a changed check name compiled to the same stage package")
	}
	if _, ok := base["internal/evidence"]; ok {
		t.Error("the renderer is in the run's compiled closure")
	}
}

func mustReplace(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("the text has no %q any more: update the test", old)
	}
	return strings.Replace(s, old, new, 1)
}

// repoRoot is the repository holding this package (two levels above pkg/).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("needs the repository's sources (go.mod above pkg/): %v", err)
	}
	return root
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
