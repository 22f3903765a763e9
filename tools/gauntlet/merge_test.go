package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/internal/conformance"
)

// fixtureRuns are recorded run folders of three cells, from
// conformance/runs (a ledger only grows: they stay).
var fixtureRuns = []string{
	"20261201T212153Z-corpus-k8s-metrics-server-local-82357d49f47f",
	"20261201T212552Z-reference-k8s-platform-app-local-1b9a08c455b3",
	"20261201T213254Z-corpus-k8s-metrics-server-kind-724e88dcf504",
}

// cellOf is a run folder's cell name, estate/substrate.
func cellOf(t *testing.T, id string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", runsDir, id, conformance.InputsJSON))
	if err != nil {
		t.Skipf("needs the recorded run folders of conformance/runs: %v", err)
	}
	in, err := conformance.ParseInputs(raw)
	if err != nil {
		t.Fatal(err)
	}
	return in.Estate + "/" + in.Substrate
}

// TestShardDir: a shard's default output folder is where `gauntlet merge`
// is told to look (out/shards/<command>-I-of-N); the whole keeps the
// command's own.
func TestShardDir(t *testing.T) {
	if got := (shard{}).dir("matrix", filepath.Join("out", "matrix")); got != filepath.Join("out", "matrix") {
		t.Errorf("no shard: %s", got)
	}
	if got := (shard{2, 3}).dir("run", "out"); got != filepath.Join("out", "shards", "run-2-of-3") {
		t.Errorf("shard 2/3 of run: %s", got)
	}
}

func TestShardPick(t *testing.T) {
	items := []string{"e3/local", "e1/kind", "e2/local", "e1/local", "e4/kind"}
	var all []string
	for i := 1; i <= 3; i++ {
		part := shard{i, 3}.pick(items)
		all = append(all, part...)
	}
	slices.Sort(all)
	want := slices.Sorted(slices.Values(items))
	if !slices.Equal(all, want) {
		t.Errorf("three shards cover %v, want each of %v once", all, want)
	}
	// The split depends on the names alone, not on their order.
	rev := slices.Clone(items)
	slices.Reverse(rev)
	if a, b := (shard{2, 3}).pick(items), (shard{2, 3}).pick(rev); !slices.Equal(a, b) || !slices.Equal(a, []string{"e1/local", "e4/kind"}) {
		t.Errorf("shard 2/3: %v and %v, want [e1/local e4/kind]", a, b)
	}
	if got := (shard{}).pick(items); !slices.Equal(got, want) {
		t.Errorf("no shard: %v", got)
	}
	for _, bad := range []string{"0/2", "3/2", "1", "a/b", "1/0"} {
		if _, err := parseShard(bad); err == nil {
			t.Errorf("--shard %s accepted", bad)
		}
	}
	if s, err := parseShard("2/5"); err != nil || s != (shard{2, 5}) {
		t.Errorf("2/5: %v %v", s, err)
	}
}

// recordShard writes what `record --stale --shard I/N` leaves: shard.json
// and a copy of each run folder it recorded.
func recordShard(t *testing.T, dir string, sh shard, all []string, byCell map[string]string) {
	t.Helper()
	items := sh.pick(all)
	m := newManifest("record", sh, "abc", all, items)
	for _, cell := range items {
		id := byCell[cell]
		if err := copyDir(filepath.Join("..", "..", runsDir, id), filepath.Join(dir, "runs", id)); err != nil {
			t.Fatal(err)
		}
		m.Runs = append(m.Runs, id)
		m.Dirs[cell] = "runs/" + id
	}
	if err := m.write(dir); err != nil {
		t.Fatal(err)
	}
}

// TestMergeShards: two record shards merged append the same ledger rows,
// byte for byte, as one machine recording the same runs; overlapping
// shards, a missing shard and a second merge are refused.
func TestMergeShards(t *testing.T) {
	byCell := map[string]string{}
	var cells []string
	for _, id := range fixtureRuns {
		c := cellOf(t, id)
		byCell[c] = id
		cells = append(cells, c)
	}

	// One machine: the runs recorded one after another.
	one := t.TempDir()
	for _, id := range fixtureRuns {
		if err := copyDir(filepath.Join("..", "..", runsDir, id), filepath.Join(one, id)); err != nil {
			t.Fatal(err)
		}
		if _, err := conformance.Append(filepath.Join(one, "ledger.jsonl"), one, id); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := os.ReadFile(filepath.Join(one, "ledger.jsonl"))

	// Two shards, merged.
	tmp := t.TempDir()
	s1, s2 := filepath.Join(tmp, "s1"), filepath.Join(tmp, "s2")
	recordShard(t, s1, shard{1, 2}, cells, byCell)
	recordShard(t, s2, shard{2, 2}, cells, byCell)
	merged := filepath.Join(tmp, "runs")
	opts := mergeOptions{RunsDir: merged, Ledger: filepath.Join(merged, "ledger.jsonl")}
	if _, err := mergeShards([]string{s1}, opts); err == nil || !strings.Contains(err.Error(), "2/2 missing") {
		t.Errorf("one shard of two merged: %v", err)
	}
	res, err := mergeShards([]string{s2, s1}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(opts.Ledger)
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("merged ledger differs from one machine's:\n%s\nwant\n%s", got, want)
	}
	if len(res.Runs) != 3 || res.Rows != len(bytes.Split(bytes.TrimSpace(want), []byte("\n"))) {
		t.Errorf("merge result %+v", res)
	}
	l, err := conformance.Verify(opts.Ledger, merged)
	if err != nil || len(l.Problems) > 0 {
		t.Errorf("the merged ledger does not verify: %v %v", err, l.Problems)
	}
	if _, err := mergeShards([]string{s1, s2}, opts); err == nil || !strings.Contains(err.Error(), "already in") {
		t.Errorf("a second merge: %v", err)
	}

	// Shard 2 claiming shard 1's cell too.
	m, err := readManifest(s2)
	if err != nil {
		t.Fatal(err)
	}
	m.Items = append(m.Items, (shard{1, 2}).pick(cells)[0])
	slices.Sort(m.Items)
	if err := m.write(s2); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(tmp, "fresh")
	if _, err := mergeShards([]string{s1, s2}, mergeOptions{RunsDir: fresh, Ledger: filepath.Join(fresh, "ledger.jsonl")}); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("overlapping shards: %v", err)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("a refused merge wrote something")
	}
}

// TestMergePages: shards of `run --all` fold into one folder per estate
// and one index listing every estate.
func TestMergePages(t *testing.T) {
	tmp := t.TempDir()
	all := []string{"a", "b", "c"}
	var dirs []string
	for i := 1; i <= 2; i++ {
		dir := filepath.Join(tmp, "shard", string(rune('0'+i)))
		sh := shard{i, 2}
		m := newManifest("run", sh, "abc", all, sh.pick(all))
		for _, e := range m.Items {
			if err := os.MkdirAll(filepath.Join(dir, e), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e, "evidence.md"), []byte("# "+e+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			m.Dirs[e], m.Results[e] = e, "clear "+e
		}
		if err := m.write(dir); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	out := filepath.Join(tmp, "out")
	if _, err := mergeShards(dirs, mergeOptions{Out: out, RunsDir: filepath.Join(tmp, "runs"), Ledger: filepath.Join(tmp, "runs", "ledger.jsonl")}); err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		if b, err := os.ReadFile(filepath.Join(out, e, "evidence.md")); err != nil || string(b) != "# "+e+"\n" {
			t.Errorf("%s: %q %v", e, b, err)
		}
	}
	idx, _ := os.ReadFile(filepath.Join(out, "index.md"))
	for _, e := range all {
		if !strings.Contains(string(idx), "| "+e+" | clear "+e+" |") {
			t.Errorf("index.md lacks %s:\n%s", e, idx)
		}
	}
}

// TestSessionForeign: within one `record` session, the ledger and the run
// folders it recorded are its own; any other change is the tree moving.
func TestSessionForeign(t *testing.T) {
	s := &recordSession{}
	s.wrote("conformance/runs/20261201T000000Z-e-local-abc")
	dirty := []string{
		"conformance/runs/ledger.jsonl (M)",
		"conformance/runs/20261201T000000Z-e-local-abc/run.json (??)",
		"conformance/runs/20261201T000000Z-e-local-abcd/run.json (??)",
		"pkg/gauntlet/stage/drift.go (M)",
	}
	got := s.foreign(dirty)
	if want := dirty[2:]; !slices.Equal(got, want) {
		t.Errorf("foreign %v, want %v", got, want)
	}
	var none *recordSession
	if got := none.foreign(dirty); !slices.Equal(got, dirty) {
		t.Errorf("without a session everything is foreign: %v", got)
	}
}

// TestCopyDirFollowsFileLinks: under Bazel a run folder's files are
// symlinks into the source tree; a copy holds their content.
func TestCopyDirFollowsFileLinks(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	real := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(real, []byte(`{"ok":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(src, "run.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(src, "a-dir")); err != nil {
		t.Fatal(err)
	}
	if err := copyDir(src, dst); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dst, "run.json"))
	if err != nil || string(got) != `{"ok":true}` {
		t.Errorf("run.json copied as %q, %v", got, err)
	}
	if fi, err := os.Lstat(filepath.Join(dst, "run.json")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("run.json in the copy is not a file: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "a-dir")); err == nil {
		t.Error("a link to a folder was copied")
	}
}
