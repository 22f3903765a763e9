// Package atomicfile puts files in place whole: written under a temporary
// name of their own beside the destination, then renamed over it, so a
// reader sees the old file or the new one, never half of one, and two
// writers (two goroutines of one process included) never share a
// temporary file.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data to path with mode.
func Write(path string, data []byte, mode os.FileMode) error {
	return Place(path, func(tmp string) error {
		return os.WriteFile(tmp, data, mode)
	})
}

// Place has fill create the file at a fresh temporary path beside path
// (which does not exist when fill is called), then renames it to path.
// Whatever fill left is removed if it or the rename fails.
func Place(path string, fill func(tmp string) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	// The name is ours; fill makes the file (a write, a hard link).
	err = errors.Join(f.Close(), os.Remove(tmp))
	if err == nil {
		err = fill(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
