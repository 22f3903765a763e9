package tape

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gauntlet-k8s/gauntlet/internal/wire"
	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

// callEntry is an engine call as recorded: how it ended, what it left in
// its workspace, and what it sent through its wire proxy.
type callEntry struct {
	rec   engine.Recorded
	files map[string][]byte // by path in the workspace; nil: removed
	wire  []wire.Request
}

// Call implements engine.CallTape.
func (s *Side) Call(ctx context.Context, w *engine.Workspace, args []string, run func(*engine.Recorded, func()) (engine.Call, error)) (engine.Call, error) {
	key := s.key("call " + w.Dir + " " + strings.Join(args, " "))
	p := s.proxy(w.Kubeconfig)
	if s.replay {
		e, ok := s.next(key)
		if !ok || e.call == nil {
			err := s.diverge("no recorded %s %s in %s", w.Engine.Profile.Name, strings.Join(args, " "), w.Dir)
			return engine.Call{Args: args, ExitCode: -1}, &engine.CallError{Engine: w.Engine.Profile.Name, Call: engine.Call{Args: args, ExitCode: -1}, Err: err}
		}
		rec := e.call.rec
		rec.Output = string(s.localize([]byte(rec.Output)))
		fired0 := 0
		if p != nil {
			fired0 = p.Fired()
		}
		c, err := run(&rec, func() {
			if p != nil {
				p.Replay(e.call.wire)
			}
		})
		if rerr := s.restore(w.Dir, e.call.files); rerr != nil {
			return c, errors.Join(err, rerr)
		}
		if p != nil && (p.Fired() > fired0) != rec.Fired {
			s.diverge("%s %s in %s: a wire trigger fired %v when recorded, %v replayed", w.Engine.Profile.Name, strings.Join(args, " "), w.Dir, rec.Fired, !rec.Fired)
		}
		return c, err
	}
	before := snapshot(w.Dir)
	seq0, fired0 := 0, 0
	if p != nil {
		seq0, fired0 = p.Seq(), p.Fired()
	}
	c, err := run(nil, nil)
	e := &callEntry{rec: engine.Recorded{Output: c.Output, ExitCode: c.ExitCode, Duration: c.Duration, Signal: engine.Signal(err)}}
	e.files = changed(w.Dir, before, snapshot(w.Dir))
	if p != nil {
		e.rec.Fired = p.Fired() > fired0
		e.wire = p.Since(seq0)
	}
	s.add(key, entry{call: e})
	return c, err
}

// stat is what tells a file changed.
type stat struct {
	size int64
	mod  time.Time
}

// skipped are the workspace's folders no replay needs: the engine's home
// and the providers init links in, which only a live engine reads.
func skipped(rel string) bool {
	return rel == ".home" || rel == filepath.Join(".terraform", "providers")
}

func snapshot(dir string) map[string]stat {
	out := map[string]stat{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if skipped(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			out[rel] = stat{size: info.Size(), mod: info.ModTime()}
		}
		return nil
	})
	return out
}

// changed reads every file new or changed between two snapshots, and
// notes every file removed.
func changed(dir string, before, after map[string]stat) map[string][]byte {
	out := map[string][]byte{}
	for rel, st := range after {
		if b, ok := before[rel]; ok && b == st {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			continue
		}
		if body == nil {
			body = []byte{}
		}
		out[rel] = body
	}
	for rel := range before {
		if _, ok := after[rel]; !ok {
			out[rel] = nil
		}
	}
	return out
}

// restore leaves in dir what the recorded call left in its own.
func (s *Side) restore(dir string, files map[string][]byte) error {
	var errs []error
	for rel, body := range files {
		path := filepath.Join(dir, rel)
		if body == nil {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.WriteFile(path, s.localize(body), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
