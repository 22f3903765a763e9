package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
)

// Init runs init against the toolchain's provider mirror only.
func (w *Workspace) Init(ctx context.Context) (Call, error) {
	return w.Run(ctx, []string{"init", "-input=false", "-no-color"})
}

// Validate runs validate.
func (w *Workspace) Validate(ctx context.Context) (Call, error) {
	return w.Run(ctx, []string{"validate", "-no-color"})
}

// State runs show -json on the current state.
func (w *Workspace) State(ctx context.Context) (*tfjson.State, error) {
	call, err := w.Run(ctx, []string{"show", "-json", "-no-color"})
	if err != nil {
		return nil, err
	}
	var s tfjson.State
	if err := json.NewDecoder(strings.NewReader(jsonPart(call.Output))).Decode(&s); err != nil {
		return nil, fmt.Errorf("%s show -json: %w (log: %s)", w.Engine.Profile.Name, err, w.citedLog(call))
	}
	return &s, nil
}

// StateList runs state list and returns the addresses, sorted. An absent
// state is an empty list.
func (w *Workspace) StateList(ctx context.Context) ([]string, error) {
	call, err := w.Run(ctx, []string{"state", "list"})
	if err != nil {
		if strings.Contains(call.Output, "No state file was found") {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(call.Output, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out, nil
}

// StateRm runs state rm for the addresses.
func (w *Workspace) StateRm(ctx context.Context, addrs ...string) (Call, error) {
	// -no-color: what it prints lands in evidence.md verbatim.
	return w.Run(ctx, append([]string{"state", "rm", "-no-color"}, addrs...))
}

// StatePull runs state pull: the raw state document, with the fields
// show -json leaves out (an instance's create_before_destroy among them).
func (w *Workspace) StatePull(ctx context.Context) ([]byte, error) {
	call, err := w.Run(ctx, []string{"state", "pull"})
	if err != nil {
		return nil, err
	}
	raw := jsonPart(call.Output)
	if !json.Valid([]byte(raw)) {
		return nil, fmt.Errorf("%s state pull: not a JSON document (log: %s)", w.Engine.Profile.Name, w.citedLog(call))
	}
	return []byte(raw), nil
}

// StatePush runs state push -force with doc: the state replaced whole,
// whatever its serial or lineage. Only a BREAK that corrupts the state,
// or its undo, does this.
func (w *Workspace) StatePush(ctx context.Context, doc []byte) (Call, error) {
	f, err := os.CreateTemp(w.Dir, ".gauntlet-push-*.tfstate")
	if err != nil {
		return Call{}, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(doc); err != nil {
		f.Close()
		return Call{}, err
	}
	if err := f.Close(); err != nil {
		return Call{}, err
	}
	return w.Run(ctx, []string{"state", "push", "-force", filepath.Base(f.Name())})
}

// Import is one import block.
type Import struct {
	To, ID string
}

// WriteImports writes import blocks to name in the workspace (replacing
// it); an empty list removes the file.
func (w *Workspace) WriteImports(name string, imports []Import) error {
	path := filepath.Join(w.Dir, name)
	if len(imports) == 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	var b strings.Builder
	b.WriteString("# Written by gauntlet: one import block per live object.\n")
	for _, im := range imports {
		fmt.Fprintf(&b, "\nimport {\n  to = %s\n  id = %s\n}\n", im.To, strconv.Quote(im.ID))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
