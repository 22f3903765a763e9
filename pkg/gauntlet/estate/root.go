package estate

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Root is an estate's Terraform root materialised for one side of a run.
// Stages change it as the estate's life goes on (a moved block, a removed
// block, an added file); every text change asserts how often it matched,
// so a source that moved under a pin fails loudly instead of silently
// testing something else.
type Root struct {
	Dir string
	// Main is the estate's own file (the corpus file or the first of
	// Files) that edits apply to.
	Main string
	// Applied are the deltas this root carries.
	Applied []Delta
}

// Materialise writes the estate's root into dir for a substrate: the
// source file (already verified by the caller; empty for reference
// estates), the deltas for that substrate, and providersTF as
// gauntlet_providers.tf.
func (s *Spec) Materialise(dir, sourceFile, substrate, providersTF string) (*Root, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r := &Root{Dir: dir}
	if s.Source != nil {
		b, err := os.ReadFile(sourceFile)
		if err != nil {
			return nil, fmt.Errorf("estate %s: %w", s.Name, err)
		}
		r.Main = filepath.Base(s.Source.Path)
		if err := os.WriteFile(filepath.Join(dir, r.Main), b, 0o644); err != nil {
			return nil, err
		}
	} else {
		for i, f := range s.Files {
			b, err := os.ReadFile(filepath.Join(s.Dir, f))
			if err != nil {
				return nil, fmt.Errorf("estate %s: %w", s.Name, err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
				return nil, err
			}
			if i == 0 {
				r.Main = filepath.Base(f)
			}
		}
	}
	for _, d := range s.Deltas {
		if len(d.Substrates) > 0 && !slices.Contains(d.Substrates, substrate) {
			continue
		}
		if err := r.Edit(d.Edit); err != nil {
			return nil, fmt.Errorf("estate %s: delta %s (%s): %w", s.Name, d.Name, d.Why, err)
		}
		r.Applied = append(r.Applied, d)
	}
	if err := r.WriteFile("gauntlet_providers.tf", providersTF); err != nil {
		return nil, err
	}
	return r, nil
}

// Edit replaces e.Old with e.New in the main file, exactly e.Count times
// (default 1).
func (r *Root) Edit(e Edit) error {
	path := filepath.Join(r.Dir, r.Main)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	want := e.Count
	if want == 0 {
		want = 1
	}
	if got := strings.Count(string(b), e.Old); got != want {
		return fmt.Errorf("expected %d occurrence(s) of %q in %s, found %d: the pinned source moved", want, clip(e.Old), r.Main, got)
	}
	return os.WriteFile(path, []byte(strings.ReplaceAll(string(b), e.Old, e.New)), 0o644)
}

// Snapshot returns the main file's content, to Restore after a temporary
// change (a BREAK).
func (r *Root) Snapshot() (string, error) {
	b, err := os.ReadFile(filepath.Join(r.Dir, r.Main))
	return string(b), err
}

// Restore puts back content taken by Snapshot.
func (r *Root) Restore(content string) error {
	return os.WriteFile(filepath.Join(r.Dir, r.Main), []byte(content), 0o644)
}

// WriteFile writes a gauntlet-owned file (a stage addition) in the root.
func (r *Root) WriteFile(name, content string) error {
	return os.WriteFile(filepath.Join(r.Dir, name), []byte(content), 0o644)
}

// RemoveFile removes a gauntlet-owned file; a missing file is fine.
func (r *Root) RemoveFile(name string) error {
	if err := os.Remove(filepath.Join(r.Dir, name)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

var addrRE = regexp.MustCompile(`^([a-z0-9_]+)\.([A-Za-z0-9_-]+)$`)

// RemoveBlock deletes the resource block at address ("type.name") from
// the main file; it must be there exactly once.
func (r *Root) RemoveBlock(address string) error {
	m := addrRE.FindStringSubmatch(address)
	if m == nil {
		return fmt.Errorf("remove block: %q is not a resource address type.name", address)
	}
	path := filepath.Join(r.Dir, r.Main)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	src := string(b)
	head := regexp.MustCompile(`(?m)^resource\s+"` + regexp.QuoteMeta(m[1]) + `"\s+"` + regexp.QuoteMeta(m[2]) + `"\s*\{`)
	locs := head.FindAllStringIndex(src, -1)
	if len(locs) != 1 {
		return fmt.Errorf("remove block: %d blocks for %s in %s, want 1", len(locs), address, r.Main)
	}
	end, err := closingBrace(src, locs[0][1]-1)
	if err != nil {
		return fmt.Errorf("remove block %s: %w", address, err)
	}
	out := src[:locs[0][0]] + strings.TrimLeft(src[end+1:], "\n")
	return os.WriteFile(path, []byte(out), 0o644)
}

// closingBrace finds the brace closing the one at open, skipping quoted
// strings and comments (HCL interpolations inside strings are balanced).
func closingBrace(s string, open int) (int, error) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case c == '#' || (c == '/' && i+1 < len(s) && s[i+1] == '/'):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return 0, fmt.Errorf("unterminated comment")
			}
			i += j + 3
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced braces")
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
