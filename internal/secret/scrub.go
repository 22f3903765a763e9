package secret

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxScrubbed bounds the files Scrub reads: larger ones are provider
// binaries, never a log or a state.
const maxScrubbed = 64 << 20

// Scrub takes every secret value out of the files under dir, a kept work
// folder whose clusters are gone: it first learns from every state file
// there (*.tfstate, *.tfstate.backup), then rewrites each regular file
// holding a kept value with the value's Digest. Symbolic links are not
// followed (a provider cache is not the run's). It returns the files it
// rewrote.
func (s *Values) Scrub(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		files = append(files, path)
		if strings.Contains(d.Name(), ".tfstate") {
			if b, err := os.ReadFile(path); err == nil {
				s.Learn(string(b))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scrub secrets in %s: %w", dir, err)
	}
	forms := s.forms()
	if len(forms) == 0 {
		return nil, nil
	}
	var rewrote []string
	for _, path := range files {
		st, err := os.Lstat(path)
		if err != nil || !st.Mode().IsRegular() || st.Size() > maxScrubbed {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return rewrote, fmt.Errorf("scrub secrets: %w", err)
		}
		out := b
		for _, f := range forms {
			out = bytes.ReplaceAll(out, []byte(f[0]), []byte(f[1]))
		}
		if bytes.Equal(out, b) {
			continue
		}
		if err := os.WriteFile(path, out, st.Mode().Perm()); err != nil {
			return rewrote, fmt.Errorf("scrub secrets: %w", err)
		}
		rewrote = append(rewrote, path)
	}
	return rewrote, nil
}
