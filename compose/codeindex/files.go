package codeindex

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// MaxFileSize is the largest source file read (1 MiB); a bigger one is
// skipped with a warning. Generated tables that size add little to a code
// graph, and a planted file must not exhaust memory.
const MaxFileSize = 1 << 20

// errNotRegular: a .go name that is no regular file (a FIFO would block the
// read for ever, a device would never end).
var errNotRegular = errors.New("not a regular file")

// tree reads the files of a module, which is untrusted input.
//
// Symbolic links: a .go file reached through a link whose target is inside
// the root is read as if it were where the link is (as go build does); one
// whose target leaves the root is skipped, and so is a linked directory
// that leaves it: nothing outside the root is read (a linked file's doc
// comment must not become a node's description). Directories are never
// walked through links, not even links that stay inside (the target is
// walked at its real path; a link loop cannot arise). Only regular files of
// at most MaxFileSize are read. The checks run before each read: a tree
// that an attacker changes while a run reads it is not defended against.
//
// Links skipped are counted and said once by report; each other skip is
// said once when it is met. Safe for concurrent use.
type tree struct {
	root string // absolute, links resolved
	warn func(string)

	mu        sync.Mutex
	seen      map[string]bool // paths already counted or said
	links     int
	firstLink string
}

func newTree(root string, warn func(string)) *tree {
	if warn == nil {
		warn = func(string) {}
	}
	return &tree{root: root, warn: warn, seen: map[string]bool{}}
}

// within says whether the clean absolute path p is the root or under it.
func (t *tree) within(p string) bool {
	return p == t.root || strings.HasPrefix(p, t.root+string(filepath.Separator))
}

// rel is p relative to the root, slash-separated, for messages.
func (t *tree) rel(p string) string {
	if r, err := filepath.Rel(t.root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// first records p as seen and says whether it was not before.
func (t *tree) first(p string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen[p] {
		return false
	}
	t.seen[p] = true
	return true
}

// skipLink counts a link that leaves the root.
func (t *tree) skipLink(p, target string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen[p] {
		return
	}
	t.seen[p] = true
	t.links++
	if t.firstLink == "" {
		t.firstLink = t.rel(p) + " -> " + target
	}
}

// skipped records a file that check refused.
func (t *tree) skipped(p string, fi fs.FileInfo, err error) {
	var out *outsideError
	switch {
	case errors.As(err, &out):
		t.skipLink(p, out.target)
	case errors.Is(err, ErrTooLarge) && fi != nil:
		if t.first(p) {
			t.warn(fmt.Sprintf("skipped %s: %.1f MiB (%d bytes), over the %d MiB limit", t.rel(p), float64(fi.Size())/(1<<20), fi.Size(), MaxFileSize>>20))
		}
	default:
		if t.first(p) {
			t.warn(fmt.Sprintf("skipped %s: %v", t.rel(p), err))
		}
	}
}

// report says how many links leaving the root were skipped, if any.
func (t *tree) report() {
	t.mu.Lock()
	n, first := t.links, t.firstLink
	t.mu.Unlock()
	if n > 0 {
		t.warn(fmt.Sprintf("skipped %d file(s) or directories reached through symbolic links that leave %s (the first: %s)", n, t.root, first))
	}
}

// outsideError is ErrOutsideRoot with the link's target.
type outsideError struct{ path, target string }

func (e *outsideError) Error() string {
	return ErrOutsideRoot.Error() + ": " + e.path + " -> " + e.target
}
func (e *outsideError) Unwrap() error { return ErrOutsideRoot }

// check says whether the file p, in a directory of the tree, may be read,
// and returns its (the link target's) FileInfo: ErrOutsideRoot,
// ErrTooLarge (the FileInfo is returned too), errNotRegular, or the error
// of a link that leads nowhere.
func (t *tree) check(p string) (fs.FileInfo, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, err
		}
		if !t.within(target) {
			return nil, &outsideError{path: p, target: target}
		}
		if fi, err = os.Stat(p); err != nil {
			return nil, err
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	if fi.Size() > MaxFileSize {
		return fi, fmt.Errorf("%w: %s (%d bytes)", ErrTooLarge, p, fi.Size())
	}
	return fi, nil
}

// listGo lists the .go files of dir that may be read (see check), the
// others recorded as skipped. A FileInfo is its target's, under the
// link's name.
func (t *tree) listGo(dir string) ([]fs.FileInfo, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []fs.FileInfo
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := t.check(p)
		if err != nil {
			t.skipped(p, fi, err)
			continue
		}
		out = append(out, fi)
	}
	return out, nil
}

// readFile reads the file p of the tree, checked first (see check).
func (t *tree) readFile(p string) ([]byte, error) {
	if _, err := t.check(p); err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%w: %s grew past %d bytes while read", ErrTooLarge, p, MaxFileSize)
	}
	return b, nil
}

// open opens the file p of the tree for go/build, which reads the
// header of the files listGo listed.
func (t *tree) open(p string) (io.ReadCloser, error) {
	if _, err := t.check(p); err != nil {
		return nil, err
	}
	return os.Open(p)
}

// linkedDir records the entry p of a walked directory if it is a link to
// a directory outside the root (links are never walked).
func (t *tree) linkedDir(p string) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil || t.within(target) {
		return
	}
	if fi, err := os.Stat(target); err == nil && fi.IsDir() {
		t.skipLink(p, target)
	}
}

// readDirInfo is go/build's default directory listing, for directories
// outside the tree (the standard library's).
func readDirInfo(dir string) ([]fs.FileInfo, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, 0, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // gone since the listing
		}
		out = append(out, fi)
	}
	return out, nil
}

// validImportPath says whether p, an import path as a source file writes
// it, is clean: no empty, "." or ".." element, not absolute, no backslash
// or NUL. The loader looks such a path up as a directory: a dirty one
// could name a directory outside the module or the standard library.
func validImportPath(p string) bool {
	if p == "" || path.IsAbs(p) || strings.ContainsAny(p, "\\\x00") {
		return false
	}
	for _, e := range strings.Split(p, "/") {
		if e == "" || e == "." || e == ".." {
			return false
		}
	}
	return true
}
