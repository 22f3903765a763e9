package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// debugStartBound is how long a provider started in its debug mode may
// take to say where it listens.
const debugStartBound = 30 * time.Second

// ReattachProviders makes every later call of this Engine's workspaces
// reach provider plugins started once, in their debug mode, through
// TF_REATTACH_PROVIDERS, instead of starting each plugin afresh: a plan
// of a small root then takes about a third of the time, the plugins'
// start being most of an engine call's cost. One plugin process serves
// one provider binary (whatever links lead to it) against one cluster
// (kubeconfig), started with the environment the engine would give it.
//
// Left to start their own, as in production: init (it installs the
// plugins), calls whose process the caller watches (OnStart: they are
// interrupted or killed, and their plugins must live and die with them),
// calls made while another call holds the same plugin, and the provider
// types named in except ("kubernetes"), e.g. a provider that caches what
// it learns from the cluster for the life of its process. Call it before
// any workspace runs; Close stops the plugins. Default: every call starts
// its own.
func (e *Engine) ReattachProviders(except ...string) {
	r := &reattach{except: map[string]bool{}, running: map[string]*debugProvider{}, failed: map[string]error{}, types: map[string]bool{}}
	for _, t := range except {
		r.except[t] = true
	}
	e.reattach = r
}

// Reattached lists the provider types reattached so far ("kubernetes",
// "random"), sorted; nil when ReattachProviders was not called.
func (e *Engine) Reattached() []string {
	if e.reattach == nil {
		return nil
	}
	e.reattach.mu.Lock()
	defer e.reattach.mu.Unlock()
	var out []string
	for t := range e.reattach.types {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Close stops the provider plugins ReattachProviders started. Safe to
// call more than once; later calls start their own plugins.
func (e *Engine) Close() error {
	if e.reattach == nil {
		return nil
	}
	return e.reattach.close()
}

type reattach struct {
	except  map[string]bool
	mu      sync.Mutex
	running map[string]*debugProvider // by binary file and kubeconfig
	failed  map[string]error          // plugins that would not start: never retried
	types   map[string]bool
	closed  bool
}

// debugProvider is one plugin process in its debug mode.
type debugProvider struct {
	cmd    *exec.Cmd
	config json.RawMessage // its go-plugin reattach config
	busy   bool
	exited chan struct{}
}

// installed is one provider plugin init put in a workspace.
type installed struct {
	addr, typ, bin string
	// id names the file whatever links lead to it: init hard-links its
	// mirror's copy into each workspace, under each CLI's registry host.
	id string
}

// installedProviders lists the plugins under the workspace's
// .terraform/providers (host/namespace/type/version/platform/binary),
// binaries resolved through the links init may make to its mirror. An
// address installed in two versions is left out: which one a call would
// start is the engine's choice.
func installedProviders(dir string) ([]installed, error) {
	bins, err := filepath.Glob(filepath.Join(dir, ".terraform", "providers", "*", "*", "*", "*", "*", "terraform-provider-*"))
	if err != nil {
		return nil, err
	}
	byAddr := map[string][]installed{}
	for _, b := range bins {
		rel, err := filepath.Rel(filepath.Join(dir, ".terraform", "providers"), b)
		if err != nil {
			return nil, err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		real, err := filepath.EvalSymlinks(b)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, err
		}
		id := real
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			id = fmt.Sprintf("%d:%d", st.Dev, st.Ino)
		}
		addr := strings.Join(parts[:3], "/")
		byAddr[addr] = append(byAddr[addr], installed{addr: addr, typ: parts[2], bin: real, id: id})
	}
	var out []installed
	for _, list := range byAddr {
		if len(list) == 1 {
			out = append(out, list[0])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out, nil
}

// lease reserves, starting them where needed, the plugins a call in w
// reaches: the TF_REATTACH_PROVIDERS value (empty: none), the types it
// covers, and what gives them back.
func (r *reattach) lease(w *Workspace) (string, []string, func(), error) {
	inst, err := installedProviders(w.Dir)
	if err != nil {
		return "", nil, func() {}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", nil, func() {}, nil
	}
	conf := map[string]json.RawMessage{}
	var taken []*debugProvider
	var types []string
	leased := map[*debugProvider]bool{}
	var errs []error
	for _, p := range inst {
		if r.except[p.typ] {
			continue
		}
		key := p.id + "\x00" + w.Kubeconfig
		dp := r.running[key]
		if dp != nil && dp.gone() {
			delete(r.running, key)
			dp = nil
		}
		if r.failed[key] != nil {
			errs = append(errs, r.failed[key])
			continue
		}
		if dp == nil {
			if dp, err = startDebug(w, p); err != nil {
				r.failed[key] = err
				errs = append(errs, err)
				continue
			}
			r.running[key] = dp
		}
		if dp.busy && !leased[dp] {
			continue // another call holds it: this one starts its own
		}
		if !leased[dp] {
			dp.busy, leased[dp] = true, true
			taken = append(taken, dp)
		}
		conf[p.addr] = dp.config
		types = append(types, p.typ)
		r.types[p.typ] = true
	}
	release := func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, dp := range taken {
			dp.busy = false
		}
	}
	if len(conf) == 0 {
		return "", nil, release, errors.Join(errs...)
	}
	b, err := json.Marshal(conf)
	if err != nil {
		release()
		return "", nil, func() {}, err
	}
	sort.Strings(types)
	return string(b), slices.Compact(types), release, errors.Join(errs...)
}

// startDebug starts p's binary in its debug mode with the environment an
// engine call in w gives its plugins, and reads the reattach config it
// prints. Its output goes to a log beside the workspace's call logs.
func startDebug(w *Workspace, p installed) (*debugProvider, error) {
	logPath := filepath.Join(w.LogDir, fmt.Sprintf("provider-%s-debug-%d.log", p.typ, time.Now().UnixNano()))
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(p.bin, "-debug")
	cmd.Dir = w.Dir
	cmd.Env = w.env()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	// Its own group, ended with gauntlet if gauntlet dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("provider %s: start %s -debug: %w", p.addr, p.bin, err)
	}
	if w.Engine.started != nil {
		w.Engine.started(cmd.Process.Pid)
	}
	dp := &debugProvider{cmd: cmd, exited: make(chan struct{})}
	found := make(chan json.RawMessage, 1)
	go func() {
		found <- readReattach(out, logf)
		io.Copy(logf, out)
	}()
	go func() {
		cmd.Wait()
		logf.Close()
		close(dp.exited)
	}()
	fail := func(why string) (*debugProvider, error) {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-dp.exited
		return nil, fmt.Errorf("provider %s: %s -debug %s (its output: %s)", p.addr, p.bin, why, logPath)
	}
	select {
	case c := <-found:
		if c == nil {
			return fail("printed no TF_REATTACH_PROVIDERS line")
		}
		dp.config = c
		return dp, nil
	case <-dp.exited:
		return fail("exited before it printed where it listens")
	case <-time.After(debugStartBound):
		return fail(fmt.Sprintf("did not say where it listens within %s", debugStartBound))
	}
}

// readReattach reads a plugin's debug output, copying it to log, up to
// its TF_REATTACH_PROVIDERS='{"<address>": {...}}' line, and returns the
// one config in it; nil if the output ended first or the line is not one
// config.
func readReattach(r io.Reader, log io.Writer) json.RawMessage {
	const marker = "TF_REATTACH_PROVIDERS='"
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(log, line)
		i := strings.Index(line, marker)
		if i < 0 {
			continue
		}
		v, _, ok := strings.Cut(line[i+len(marker):], "'")
		if !ok {
			return nil
		}
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(v), &m) != nil || len(m) != 1 {
			return nil
		}
		for _, c := range m {
			return c
		}
	}
	return nil
}

func (dp *debugProvider) gone() bool {
	select {
	case <-dp.exited:
		return true
	default:
		return false
	}
}

func (r *reattach) close() error {
	r.mu.Lock()
	r.closed = true
	running := r.running
	r.running = map[string]*debugProvider{}
	r.mu.Unlock()
	for _, dp := range running {
		syscall.Kill(-dp.cmd.Process.Pid, syscall.SIGKILL)
	}
	for _, dp := range running {
		select {
		case <-dp.exited:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("provider plugin %d did not exit within 10s of SIGKILL", dp.cmd.Process.Pid)
		}
	}
	return nil
}

// reattachEnv is the call's TF_REATTACH_PROVIDERS and what gives its
// plugins back, noting in the call's log what it reached.
func (w *Workspace) reattachEnv(args []string, o *runOpts, log io.Writer) ([]string, func()) {
	r := w.Engine.reattach
	if r == nil || len(args) == 0 || args[0] == "init" || args[0] == "version" || len(o.started) > 0 {
		return nil, func() {}
	}
	v, types, release, err := r.lease(w)
	if err != nil {
		fmt.Fprintf(log, "# providers: not all reattached, the rest start with the call (%v)\n", err)
	}
	if v == "" {
		return nil, release
	}
	fmt.Fprintf(log, "# providers reattached: %s\n", strings.Join(types, ", "))
	return []string{"TF_REATTACH_PROVIDERS=" + v}, release
}
