package nodeimage

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// tree is a file system about to become one image layer. Entries are
// keyed by their clean slash path without a leading "/"; the layer is
// written in path order with every time set to one epoch and owners by
// number only, so the same tree always gives the same bytes.
type tree struct {
	entries map[string]*entry
	epoch   time.Time
}

type entry struct {
	typ  byte // tar.TypeDir, TypeReg, TypeSymlink
	mode int64
	uid  int
	gid  int
	// src is the file on disk a regular file's bytes come from; data is
	// used when src is empty.
	src  string
	data []byte
	link string
	// inode identifies hard links among files read from disk.
	inode [2]uint64
}

func newTree(epoch time.Time) *tree { return &tree{entries: map[string]*entry{}, epoch: epoch} }

func clean(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }

// addDisk adds the directory root as the tree's root, skipping paths for
// which skip returns true (and everything below them).
func (t *tree) addDisk(root string, skip func(rel string) bool) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		e, err := diskEntry(p)
		if err != nil {
			return err
		}
		if e != nil {
			t.entries[rel] = e
		}
		return nil
	})
}

// diskEntry reads one file's metadata; sockets, fifos and devices are
// left out (a container runtime provides /dev).
func diskEntry(p string) (*entry, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	e := &entry{mode: int64(fi.Mode().Perm())}
	if st != nil {
		e.uid, e.gid = int(st.Uid), int(st.Gid)
		e.mode = int64(st.Mode & 0o7777)
	}
	switch {
	case fi.Mode().IsDir():
		e.typ = tar.TypeDir
	case fi.Mode()&fs.ModeSymlink != 0:
		e.typ = tar.TypeSymlink
		if e.link, err = os.Readlink(p); err != nil {
			return nil, err
		}
	case fi.Mode().IsRegular():
		e.typ = tar.TypeReg
		e.src = p
		if st != nil && st.Nlink > 1 {
			e.inode = [2]uint64{uint64(st.Dev), st.Ino}
		}
	default:
		return nil, nil
	}
	return e, nil
}

// file adds a regular file from disk (mode as given, owned by root).
func (t *tree) file(p, src string, mode int64) {
	t.parents(p)
	t.entries[clean(p)] = &entry{typ: tar.TypeReg, mode: mode, src: src}
}

// data adds a regular file with the given content, owned by root.
func (t *tree) data(p string, b []byte, mode int64) {
	t.parents(p)
	t.entries[clean(p)] = &entry{typ: tar.TypeReg, mode: mode, data: b}
}

// symlink adds a symbolic link.
func (t *tree) symlink(p, target string) {
	t.parents(p)
	t.entries[clean(p)] = &entry{typ: tar.TypeSymlink, mode: 0o777, link: target}
}

// dir adds a directory (parents too) unless it is there already.
func (t *tree) dir(p string, mode int64) {
	p = clean(p)
	if p == "" {
		return
	}
	t.parents(p)
	if _, ok := t.entries[p]; !ok {
		t.entries[p] = &entry{typ: tar.TypeDir, mode: mode}
	}
}

func (t *tree) parents(p string) {
	if d := path.Dir(clean(p)); d != "." && d != "" {
		t.dir(d, 0o755)
	}
}

// remove deletes p and everything below it.
func (t *tree) remove(p string) {
	p = clean(p)
	for k := range t.entries {
		if k == p || strings.HasPrefix(k, p+"/") {
			delete(t.entries, k)
		}
	}
}

// paths lists the entries in the order they are written.
func (t *tree) paths() []string {
	out := make([]string, 0, len(t.entries))
	for k := range t.entries {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// write writes the tree as a tar stream and returns the sha256 of the
// stream (the layer's diff ID) and its size.
func (t *tree) write(w io.Writer) (string, int64, error) {
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(w, h)}
	tw := tar.NewWriter(cw)
	links := map[[2]uint64]string{}
	for _, p := range t.paths() {
		e := t.entries[p]
		hdr := &tar.Header{
			Name: p, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: t.epoch,
			Typeflag: e.typ, Linkname: e.link, Format: tar.FormatPAX,
		}
		if e.typ == tar.TypeDir {
			hdr.Name += "/"
		}
		if e.typ == tar.TypeReg && e.inode != [2]uint64{} {
			if first, ok := links[e.inode]; ok {
				hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
				if err := tw.WriteHeader(hdr); err != nil {
					return "", 0, err
				}
				continue
			}
			links[e.inode] = p
		}
		if e.typ == tar.TypeReg {
			if err := writeFile(tw, hdr, e); err != nil {
				return "", 0, fmt.Errorf("%s: %w", p, err)
			}
			continue
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return "", 0, err
		}
	}
	if err := tw.Close(); err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), cw.n, nil
}

func writeFile(tw *tar.Writer, hdr *tar.Header, e *entry) error {
	if e.src == "" {
		hdr.Size = int64(len(e.data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(e.data)
		return err
	}
	f, err := os.Open(e.src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	hdr.Size = fi.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, f)
	if err == nil && n != hdr.Size {
		err = fmt.Errorf("changed size while being read")
	}
	return err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
