package conformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// InputsSchema names the format of a run folder's inputs.json: v2 keys
// the run's code by compiled content (Compiled); v1, the format before,
// by the source files of the whole CLI's closure (Code), and is still
// read and judged that way.
const (
	InputsSchema   = "gauntlet.inputs/v2"
	InputsSchemaV1 = "gauntlet.inputs/v1"
)

// Inputs is everything a recorded run ran, by content: the compiled
// packages of the run's dependency closure, the estate's files, its corpus file's
// sha256 and the pins of engine, oracle, providers and substrate. A proof
// is stale as soon as one of them differs from the tree's: no hand-kept
// path list, no git history needed (a shallow clone can check it).
type Inputs struct {
	Schema    string `json:"schema"`
	Estate    string `json:"estate"`
	Substrate string `json:"substrate"`
	// Stages is the run's --stages selection; empty means every stage.
	// Only selected stages get ledger rows.
	Stages []string `json:"stages,omitempty"`
	// Compiled maps each package of the run's closure to its compiled
	// content (see compiledClosure): what staleness compares (v2).
	Compiled map[string]string `json:"compiled,omitempty"`
	// Code maps each repository file compiled into the run to its sha256:
	// in v2 it only names the files behind a changed package; in v1 it is
	// what staleness compares (the CLI's closure, go.mod and go.sum).
	Code map[string]string `json:"code"`
	// v1Code is the tree's code as v1 keyed it, to judge a v1 recording.
	v1Code map[string]string
	// EstateFiles maps each file under estates/<estate>/ to its sha256.
	EstateFiles map[string]string `json:"estate_files"`
	// Corpus is the sha256 of the estate's pinned corpus file, if any.
	Corpus string `json:"corpus_sha256,omitempty"`
	// Pins maps each pin the run used ("tool:tofu", "kind", "go", ...) to
	// the sha256 of its pins.json entry and its tool module files.
	Pins map[string]string `json:"pins"`
	// Requirements maps every requirement of the registry the run was
	// recorded under to its EntryHash: a proof of one is fresh only while
	// its entry is unchanged, and a stage claiming an ID not here is
	// refused. Runs recorded before it have none, and prove nothing now.
	Requirements map[string]string `json:"requirements"`
}

// RequirementChanged says why a recorded run no longer speaks for
// requirement q as the registry states it now, or "".
func RequirementChanged(then *Inputs, q Requirement) string {
	h, ok := then.Requirements[q.ID]
	switch {
	case then.Requirements == nil:
		return "the run predates proofs keyed to the registry entry (" + q.ID + "'s entry is not in its inputs.json)"
	case !ok:
		return q.ID + " was not in the registry the run was recorded under"
	case h != q.EntryHash():
		return q.ID + "'s registry entry (statement, estates or substrates)"
	}
	return ""
}

// Encode is the canonical inputs.json.
func (in *Inputs) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(in, "", " ")
	if err != nil {
		return nil, fmt.Errorf("encode inputs: %w", err)
	}
	return append(b, '\n'), nil
}

// ParseInputs reads an inputs.json strictly.
func ParseInputs(raw []byte) (*Inputs, error) {
	var in Inputs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("inputs.json: %w", err)
	}
	if in.Schema != InputsSchema && in.Schema != InputsSchemaV1 {
		return nil, fmt.Errorf("inputs.json: schema %q, want %q (or %q)", in.Schema, InputsSchema, InputsSchemaV1)
	}
	return &in, nil
}

// Changed lists what differs between a recorded run's inputs and the
// tree's now, by name ("pkg/gauntlet/runner.go", "pin tool:tofu"); empty
// means the proof still describes this tree.
func Changed(then, now *Inputs) []string {
	var out []string
	diff := func(prefix string, a, b map[string]string) {
		for _, k := range unionKeys(a, b) {
			va, okA := a[k]
			vb, okB := b[k]
			switch {
			case !okA:
				out = append(out, prefix+k+" (added)")
			case !okB:
				out = append(out, prefix+k+" (removed)")
			case va != vb:
				out = append(out, prefix+k)
			}
		}
	}
	if then.Schema == InputsSchemaV1 {
		v1 := now.v1Code
		if now.Schema == InputsSchemaV1 {
			v1 = now.Code
		}
		diff("", then.Code, v1)
	} else {
		out = append(out, changedCompiled(then, now)...)
	}
	diff("", then.EstateFiles, now.EstateFiles)
	diff("pin ", then.Pins, now.Pins)
	if then.Corpus != now.Corpus {
		out = append(out, "corpus file sha256")
	}
	return out
}

func unionKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// RunnerPackage is the main package whose source closure v1 inputs keyed
// (the whole CLI, renderers included).
const RunnerPackage = "./tools/gauntlet"

// Tree computes the inputs of a run from a checkout's content.
type Tree struct {
	// Dir is the repository root.
	Dir string
	// run is the run's compiled closure, v1code the CLI's source
	// closure (for v1 recordings); each computed once.
	run    *closure
	v1code map[string]string
	pins   map[string]json.RawMessage
	// scope says which runs use each pin: scopeAll, a substrate, or none.
	scope map[string]string
	raw   pinsFile
	// reqs is the registry's EntryHash of each requirement.
	reqs map[string]string
	// clis maps the pin key of every engine ("cli:tofu",
	// "engines:tofu-1.9.4") to the engine and version it builds.
	clis map[string]cliPin
}

type cliPin struct{ engine, version string }

type pinsFile struct {
	Go            json.RawMessage   `json:"go"`
	Tools         []json.RawMessage `json:"tools"`
	Providers     []json.RawMessage `json:"providers"`
	ProviderHosts json.RawMessage   `json:"provider_hosts"`
	Kind          json.RawMessage   `json:"kind"`
	Docker        json.RawMessage   `json:"docker"`
}

// NewTree compiles the run's closure (`go list -export -deps`, bounded by
// ctx), reads the CLI's source closure, the pins and the requirement
// registry of the checkout at dir.
func NewTree(ctx context.Context, dir string) (*Tree, error) {
	t := &Tree{Dir: dir}
	run, err := compiledClosure(ctx, dir, RunPackage)
	if err != nil {
		return nil, err
	}
	t.run = run
	if t.v1code, err = goClosure(ctx, dir); err != nil {
		return nil, err
	}
	if err := t.readPins(); err != nil {
		return nil, err
	}
	reg, err := LoadRegistry(filepath.Join(dir, RegistryPath))
	if err != nil {
		return nil, err
	}
	t.reqs = map[string]string{}
	for _, q := range reg.Requirements {
		t.reqs[q.ID] = q.EntryHash()
	}
	return t, nil
}

// Inputs are what a run of estate on substrate would run from this tree.
// clis are the pin keys of the two engines it ran (see CLIKey); none means
// today's pair, the pinned tofu and terraform ("cli:tofu", "cli:terraform"),
// so a run of another engine version is stale when its own pin changes and
// not when the default one does.
func (t *Tree) Inputs(estate, substrate string, stages []string, clis ...string) (*Inputs, error) {
	in := &Inputs{Schema: InputsSchema, Estate: estate, Substrate: substrate, Stages: stages,
		Compiled: t.run.compiled, Code: t.run.code, v1Code: t.v1code, Pins: map[string]string{}, Requirements: t.reqs}
	edir := filepath.Join(t.Dir, "estates", estate)
	files, err := hashTree(t.Dir, edir)
	if err != nil {
		return nil, fmt.Errorf("estate %s: %w", estate, err)
	}
	in.EstateFiles = files
	if raw, err := os.ReadFile(filepath.Join(edir, "estate.yaml")); err == nil {
		in.Corpus = corpusSHA(raw)
	}
	for _, name := range t.pinsFor(substrate) {
		if len(clis) > 0 && strings.HasPrefix(name, "cli:") {
			continue
		}
		in.Pins[name] = hashBytes(t.pins[name])
	}
	for _, name := range clis {
		raw, ok := t.pins[name]
		if !ok {
			return nil, fmt.Errorf("no engine pin %q in third_party/pins.json", name)
		}
		in.Pins[name] = hashBytes(raw)
	}
	return in, nil
}

// corpusSHA picks the corpus file's sha256 out of estate.yaml without
// depending on the estate package's full schema.
func corpusSHA(raw []byte) string {
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == "sha256" {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

// pinsFor names the pins a run on substrate uses: Go (it builds every
// binary), the two CLIs, the providers and the substrate's own (see
// groupScope).
func (t *Tree) pinsFor(substrate string) []string {
	var names []string
	for name := range t.pins {
		if scope := t.scope[name]; scope == scopeAll || scope == substrate {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Which runs a pin is an input of: every run, one substrate's, or none
// (an engine version a run names by its own pin key, a mutant).
const (
	scopeAll  = "all"
	scopeNone = ""
)

// groupScope says, for each group of tools in pins.json, which runs use
// it. A group missing here is refused by readPins: a pin in no substrate's
// set would leave every proof fresh when it changes.
var groupScope = map[string]string{
	"kind-node":     "kind",    // the binaries baked into the kind node image
	"docker-engine": "kind",    // gauntlet-runc: every kind container runs through it
	"engines":       scopeNone, // other engine versions: a run names them (CLIKey)
	"mutants":       scopeNone, // broken engines for the kill matrix, never recorded
	"":              "local",   // the local substrate's control plane, etcd, kwok
}

// readPins splits third_party/pins.json into one entry per pin, each with
// the tool module files (third_party/tools/<dir>/) it builds from.
func (t *Tree) readPins() error {
	path := filepath.Join(t.Dir, "third_party", "pins.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read pins: %w", err)
	}
	if err := json.Unmarshal(raw, &t.raw); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	t.pins = map[string]json.RawMessage{"go": t.raw.Go, "provider_hosts": t.raw.ProviderHosts}
	t.scope = map[string]string{"go": scopeAll, "provider_hosts": scopeAll}
	if len(t.raw.Kind) > 0 {
		t.pins["kind"], t.scope["kind"] = t.raw.Kind, "kind"
	}
	if len(t.raw.Docker) > 0 {
		t.pins["docker"], t.scope["docker"] = t.raw.Docker, "kind"
	}
	providerTools := map[string]bool{}
	for _, p := range t.raw.Providers {
		var pv struct{ Namespace, Type, Tool string }
		if err := json.Unmarshal(p, &pv); err != nil {
			return fmt.Errorf("%s: provider: %w", path, err)
		}
		providerTools[pv.Tool] = true
		t.pins["provider:"+pv.Namespace+"/"+pv.Type] = p
		t.scope["provider:"+pv.Namespace+"/"+pv.Type] = scopeAll
	}
	for _, tool := range t.raw.Tools {
		var tp struct {
			Name, Role, Group, Engine, Version string
			Wrapper                            *struct{ Dir string }
		}
		if err := json.Unmarshal(tool, &tp); err != nil {
			return fmt.Errorf("%s: tool: %w", path, err)
		}
		entry := append(json.RawMessage{}, tool...)
		if tp.Wrapper != nil {
			files, err := hashTree(t.Dir, filepath.Join(t.Dir, "third_party", "tools", tp.Wrapper.Dir))
			if err != nil {
				return fmt.Errorf("pin %s: %w", tp.Name, err)
			}
			fb, _ := json.Marshal(files) // map keys are sorted: canonical
			entry = append(entry, fb...)
		}
		var key, scope string
		switch {
		case tp.Role != "":
			key, scope = "cli:"+tp.Name, scopeAll
		case providerTools[tp.Name]:
			key, scope = "provider:"+tp.Name, scopeAll
		default:
			var known bool
			if scope, known = groupScope[tp.Group]; !known {
				return fmt.Errorf("%s: tool %s is in group %q, which no substrate's pin set names: say in groupScope (internal/conformance/inputs.go) which runs use it", path, tp.Name, tp.Group)
			}
			switch tp.Group {
			case "kind-node":
				key = "kind:" + tp.Name
			case "":
				key = "local:" + tp.Name
			default:
				key = tp.Group + ":" + tp.Name
			}
		}
		t.pins[key], t.scope[key] = entry, scope
		if tp.Role != "" || tp.Engine != "" {
			if t.clis == nil {
				t.clis = map[string]cliPin{}
			}
			t.clis[key] = cliPin{engine: orElse(tp.Engine, tp.Name), version: tp.Version}
		}
	}
	return nil
}

// CLIKey names the pin an engine identity was resolved from - "cli:tofu"
// for today's two CLIs, "engines:tofu-1.9.4" for the other versions - or
// "" when no pin of that engine builds that version (an engine given by
// path). A pin of today's pair wins over an extra pin of the same version.
func (t *Tree) CLIKey(engine, version string) string {
	best := ""
	for key, c := range t.clis {
		if c.engine == engine && c.version == version && (best == "" || strings.HasPrefix(key, "cli:")) {
			best = key
		}
	}
	return best
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// PinnedCLI is the pinned version of a CLI ("tofu") and, when its build is
// reproducible, the sha256 of the exact binary.
func (t *Tree) PinnedCLI(name string) (version, sha string, ok bool) {
	raw, ok := t.pins["cli:"+name]
	if !ok {
		return "", "", false
	}
	var tp struct{ Version, SHA256 string }
	// The entry may carry the module files' JSON after it: decode the first value.
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&tp); err != nil {
		return "", "", false
	}
	return tp.Version, tp.SHA256, true
}

// goClosure hashes every repository file compiled into the runner: the Go
// (and cgo, assembly, embedded) files of each main-module package in its
// `go list -deps` closure, plus go.mod and go.sum for the modules outside.
// Files embedded from third_party/ are the pins: they count per pin, so a
// pin bump invalidates exactly the proofs that used it.
func goClosure(ctx context.Context, dir string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-json=Dir,ImportPath,Module,GoFiles,CgoFiles,CFiles,HFiles,SFiles,EmbedFiles", RunnerPackage)
	cmd.Dir = dir
	// Runs happen on Linux (the substrates need it): a status computed on
	// another OS must see the same closure.
	cmd.Env = append(os.Environ(), "GOOS=linux")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps %s (the runner's closure): %w: %s", RunnerPackage, err, strings.TrimSpace(stderr.String()))
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	code := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Dir, ImportPath                                       string
			Module                                                *struct{ Main bool }
			GoFiles, CgoFiles, CFiles, HFiles, SFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		var files []string
		for _, l := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.HFiles, p.SFiles} {
			files = append(files, l...)
		}
		for _, f := range p.EmbedFiles {
			if rel, err := filepath.Rel(root, filepath.Join(p.Dir, f)); err == nil && strings.HasPrefix(rel, "third_party"+string(filepath.Separator)) {
				continue
			}
			files = append(files, f)
		}
		for _, f := range files {
			abs := filepath.Join(p.Dir, f)
			rel, err := filepath.Rel(root, abs)
			if err != nil {
				return nil, err
			}
			h, err := hashFile(abs)
			if err != nil {
				return nil, err
			}
			code[filepath.ToSlash(rel)] = h
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		h, err := hashFile(filepath.Join(root, f))
		if errors.Is(err, fs.ErrNotExist) && f == "go.sum" {
			continue // a module with no dependencies has none
		}
		if err != nil {
			return nil, err
		}
		code[f] = h
	}
	return code, nil
}

// hashTree hashes every regular file under dir, keyed relative to root.
func hashTree(root, dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		h, err := hashFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = h
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func hashFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hashBytes(b), nil
}

func hashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
