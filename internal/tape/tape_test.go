package tape

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
	"k8s.io/client-go/rest"
)

// A request recorded once is answered from the tape in a replay, with the
// recording run's work folder rewritten into the replaying run's; one it
// never saw makes the replay diverge, naming it.
func TestHTTPRecordedThenReplayed(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"path":"/work-a/root","n":`+string(rune('0'+hits))+`}`)
	}))
	defer srv.Close()
	tp := New()
	rec, err := tp.Record("/work-a")
	if err != nil {
		t.Fatal(err)
	}
	rec.Scope("drift")
	get := func(s *Side, host, path string) (string, error) {
		cfg := s.Wrap(&rest.Config{Host: host})
		rt, err := rest.TransportFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", host+path, nil)
		res, err := rt.RoundTrip(req)
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return string(b), err
	}
	first, err := get(rec, srv.URL, "/api/v1/namespaces/x")
	if err != nil {
		t.Fatal(err)
	}
	second, _ := get(rec, srv.URL, "/api/v1/namespaces/x")
	if first == second {
		t.Fatalf("the server should answer differently each time: %s", first)
	}
	rec.Finish("tofu@1.12.6")

	rep, err := tp.Replay("/work-b")
	if err != nil {
		t.Fatal(err)
	}
	rep.Scope("drift")
	a, err := get(rep, "https://nowhere.invalid", "/api/v1/namespaces/x")
	b, _ := get(rep, "https://nowhere.invalid", "/api/v1/namespaces/x")
	if err != nil || a != strings.ReplaceAll(first, "/work-a", "/work-b") || b != strings.ReplaceAll(second, "/work-a", "/work-b") {
		t.Fatalf("replay: got %q then %q (%v), want the recorded answers in order", a, b, err)
	}
	if hits != 2 {
		t.Errorf("the replay reached the server: %d hits", hits)
	}
	if err := rep.Diverged(); err != nil {
		t.Fatalf("diverged: %v", err)
	}
	if _, err := get(rep, "https://nowhere.invalid", "/api/v1/namespaces/x"); !errors.Is(err, ErrDiverged) {
		t.Fatalf("a third ask must diverge, got %v", err)
	}
	if err := rep.Diverged(); err == nil || !strings.Contains(err.Error(), "GET /api/v1/namespaces/x") {
		t.Fatalf("Diverged must name the question: %v", err)
	}
	other, _ := tp.Replay("/work-c")
	other.Scope("rename")
	if _, err := get(other, "https://nowhere.invalid", "/api/v1/namespaces/x"); !errors.Is(err, ErrDiverged) {
		t.Fatalf("another stage's answers must not serve: %v", err)
	}
}

// An engine call is recorded with its output, exit and the files it
// left; the replay runs no engine, ends the same and leaves the same
// files (paths rewritten into the replaying run's folder).
func TestCallRecordedThenReplayed(t *testing.T) {
	base := t.TempDir()
	script := filepath.Join(base, "engine.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"planned in $PWD\"\necho \"$PWD\" > terraform.tfstate\nrm -f old.tfstate\nexit 2\n"), 0o755)
	workA, workB := filepath.Join(base, "a"), filepath.Join(base, "b")
	ws := func(work, bin string, s *Side) *engine.Workspace {
		dir := filepath.Join(work, "oracle", "root")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "old.tfstate"), []byte("old"), 0o644)
		w, err := (&engine.Engine{Bin: bin, Profile: engine.Profile{Name: "fake"}}).Workspace(dir, "/dev/null", filepath.Join(work, "logs"))
		if err != nil {
			t.Fatal(err)
		}
		w.SetTape(s)
		return w
	}
	tp := New()
	rec, _ := tp.Record(workA)
	rec.Scope("migrate")
	ca, errA := ws(workA, script, rec).Run(context.Background(), []string{"plan"})
	if engine.ExitCode(errA) != 2 {
		t.Fatalf("recorded call: %v", errA)
	}
	rec.Finish("x")
	rep, _ := tp.Replay(workB)
	rep.Scope("migrate")
	wb := ws(workB, "/nonexistent/engine", rep)
	cb, errB := wb.Run(context.Background(), []string{"plan"})
	if engine.ExitCode(errB) != 2 {
		t.Fatalf("replayed call: %v", errB)
	}
	if want := strings.ReplaceAll(ca.Output, workA, workB); cb.Output != want || ca.Duration != cb.Duration {
		t.Fatalf("replayed output %q in %s, want %q in %s", cb.Output, cb.Duration, want, ca.Duration)
	}
	state, err := os.ReadFile(filepath.Join(wb.Dir, "terraform.tfstate"))
	if err != nil || strings.TrimSpace(string(state)) != wb.Dir {
		t.Fatalf("state file: %q (%v), want %s", state, err, wb.Dir)
	}
	if _, err := os.Stat(filepath.Join(wb.Dir, "old.tfstate")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file the engine removed is still there: %v", err)
	}
	if _, err := wb.Run(context.Background(), []string{"apply"}); !errors.Is(err, ErrDiverged) {
		t.Fatalf("a call never recorded must diverge, got %v", err)
	}
}
