// Package datasets finds the shared datasets folder (FB15k-237, WN18RR,
// SIFT and the others), which lives outside the repository. It sits in
// internal, below every other folder, so that tests and benchmarks of any
// package look for it the same way.
package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Env names the environment variable that overrides the search. It wins
// over the walk-up search so CI can point at a cache anywhere on disk.
const Env = "KGCTX_DATASETS"

// ErrNotFound reports that no datasets folder was found.
var ErrNotFound = errors.New("datasets not found")

// Find returns the absolute path of the shared datasets folder.
//
// $KGCTX_DATASETS, when set, is used as is (it must be a directory).
// Otherwise the search starts at start (the working directory when start
// is empty) and walks up to the filesystem root, returning the first
// <dir>/shared/datasets that exists. Walking up covers both the repository
// root (whose sibling is shared/) and any package directory below it,
// which is where `go test` runs. The path is never hard-coded because the
// datasets' location differs between machines.
func Find(start string) (string, error) {
	if env := os.Getenv(Env); env != "" {
		if IsDir(env) {
			return filepath.Abs(env)
		}
		return "", fmt.Errorf("%w: %s=%q is not a directory", ErrNotFound, Env, env)
	}
	if start == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		start = wd
	}
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	for {
		cand := filepath.Join(dir, "shared", "datasets")
		if IsDir(cand) {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no shared/datasets above %s (set %s)", ErrNotFound, start, Env)
		}
		dir = parent
	}
}

// IsDir reports whether p is an existing directory.
func IsDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
