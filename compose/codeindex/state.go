package codeindex

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kgctx/kgctx/compose/codeindex/langs"
)

// State is what the previous run left: per package its facts (files and
// their hashes, nodes, edges), the implements edges, and the triplets it
// wrote.
//
// A state names what a later run deletes, so it is input to judge: it is
// kept in files only its user may read or write (readPrivate,
// writePrivate, PrepareStateDir) and is bound to the store, tenant and
// module it describes (Binding); a run given a state of another binding
// ignores it, and a run deletes only nodes and edges of the kinds it
// writes (Run).
type State struct {
	Version int                  `json:"version"`
	Binding Binding              `json:"binding"`
	Module  string               `json:"module"`
	NoTests bool                 `json:"noTests,omitempty"`
	Pkgs    map[string]*pkgFacts `json:"pkgs"` // by import path
	// Impl are the implements and implemented_by edges (loader.implements),
	// computed over the whole module: [source, relationship, target,
	// package of the implementing type].
	Impl [][4]string `json:"impl,omitempty"`
	// Files are the facts of each source of another language than Go
	// (Python, TypeScript, JavaScript, Java, Rust), by root-relative
	// path, extracted by langs.Version (LangVersion); Crates the Rust
	// crates (Cargo.toml directories and names).
	Files       map[string]*langs.File `json:"files,omitempty"`
	Crates      map[string]string      `json:"crates,omitempty"`
	LangVersion int                    `json:"langVersion,omitempty"`
	// Marker names the node whose presence in the store says the state
	// still describes it, when the tree has no Go package (else the
	// module's root package is).
	Marker string `json:"marker,omitempty"`
	// Written are the triplets in the store, as
	// "source\x00rel\x00target\x00fingerprint" (fingerprint: of the
	// endpoints' types, descriptions and aliases), sorted.
	Written []string `json:"written"`
}

// stateVersion: 4 added Binding; 5 made names exact (no #2 suffixes),
// added locations, signatures and implemented_by, and computes
// implements with go/types.
const stateVersion = 5

// legacyVersion is the state version whose names were folded: a run given
// such a state indexes afresh, and first deletes the nodes it wrote (they
// would otherwise stay beside their exact namesakes; see Run).
const legacyVersion = 4

// Binding names what a state describes. A state is used only by a run of
// the same binding: one of another store, tenant or module (copied,
// planted, or left by a store since replaced at the same path) is ignored.
type Binding struct {
	// Store is where the index is written: "store:" and the store's ID
	// (engine.Store.ID) offline, "server:" and its URL through a server.
	Store   string
	Org     string
	Project string
	// Root is the module's directory, absolute, links resolved.
	Root string
}

// LoadState reads the state in file for a run of binding want. A missing
// file is no state (nil, "", nil). A file that is not to be trusted
// (another user's, or writable by group or others, or no regular file),
// that does not decode, is of another version or of another binding is
// ignored: no state, and ignored says why, for the person. err is an I/O
// error.
func LoadState(file string, want Binding) (s *State, ignored string, err error) {
	b, err := readPrivate(file)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, "", nil
	case errors.Is(err, ErrUntrusted):
		return nil, err.Error(), nil
	case err != nil:
		return nil, "", err
	}
	var st State
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&st); err != nil {
		return nil, fmt.Sprintf("the state in %s does not decode (%v)", file, err), nil
	}
	if st.Version != stateVersion && st.Version != legacyVersion {
		return nil, fmt.Sprintf("the state in %s is of version %d, this build's is %d", file, st.Version, stateVersion), nil
	}
	if st.Binding != want {
		return nil, fmt.Sprintf("the state in %s describes another store, project or module (%s %s/%s %s)",
			file, st.Binding.Store, st.Binding.Org, st.Binding.Project, st.Binding.Root), nil
	}
	return &st, "", nil
}

// Save writes s to file atomically, readable and writable by its owner
// alone (0600; the directory, when Save makes it, 0700).
func (s *State) Save(file string) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		return err
	}
	return writePrivate(file, buf.Bytes())
}

// PrepareStateDir makes dir ready to keep states in: it is created 0700
// (with its missing parents) when missing. When tighten is set (a
// directory this program names, never one a person gave, which may be
// shared) and the directory is its user's, it is made 0700. A directory of
// another user, or one that group or others may write, is refused with
// ErrUntrusted: whoever can write there could plant a state.
func PrepareStateDir(dir string, tighten bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if tighten && fi.Mode().Perm()&0o077 != 0 && owned(fi) {
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
		if fi, err = os.Stat(dir); err != nil {
			return err
		}
	}
	if why := untrusted(fi); why != "" {
		return fmt.Errorf("%w: the directory %s is %s", ErrUntrusted, dir, why)
	}
	return nil
}

// maxPrivate bounds what readPrivate reads: a state of a large repository
// is a few MiB.
const maxPrivate = 1 << 30

// readPrivate reads a file of the state directory: a regular file that no
// other user owns or may write (else ErrUntrusted), not through a link.
func readPrivate(file string) ([]byte, error) {
	fi, err := os.Lstat(file)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrUntrusted, file)
	}
	if why := untrusted(fi); why != "" {
		return nil, fmt.Errorf("%w: %s is %s", ErrUntrusted, file, why)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxPrivate))
}

// writePrivate replaces file with data atomically: a temporary file of
// mode 0600 in the same directory (made 0700 if missing), renamed over it.
func writePrivate(file string, data []byte) (err error) {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), file)
}
