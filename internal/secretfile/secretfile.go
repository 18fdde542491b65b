// Package secretfile reads a secret from a file that only its owner may
// read: the operator token (serve --admin-token-file) and the cluster
// secret (serve --cluster-secret-file). It sits in internal, below every
// other folder, so cmd and compose/service/cluster share it.
package secretfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotPrivate: the file can be read by its group or by others.
var ErrNotPrivate = errors.New("secretfile: readable by others")

// Read returns the content of path, a regular file of mode 0600 or
// stricter (mode & 0o077 == 0) and of at most max bytes. The error names
// the path and says how to fix it.
func Read(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if p := fi.Mode().Perm(); p&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s can be read by group or others (mode %04o); make it private: chmod 600 %s", ErrNotPrivate, path, p, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("%s is over %d bytes", path, max)
	}
	return b, nil
}
