package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kgctx/kgctx/engine/tripletio"
)

// EnvDatasets names the environment variable that overrides the search for
// the datasets folder. It wins over the walk-up search so CI can point at a
// cache anywhere on disk.
const EnvDatasets = "KGCTX_DATASETS"

// FindDatasets returns the absolute path of the shared datasets folder.
//
// KGCTX_DATASETS, when set, is used as is (it must be a directory).
// Otherwise the search starts at start (the working directory when start
// is empty) and walks up to the filesystem root, returning the first
// <dir>/shared/datasets that exists. Walking up covers both the repository
// root (whose sibling is shared/) and any package directory below it, which
// is where `go test` runs. The path is never hard-coded because the
// datasets live outside the repository and their location differs between
// machines.
func FindDatasets(start string) (string, error) {
	if env := os.Getenv(EnvDatasets); env != "" {
		if isDir(env) {
			return filepath.Abs(env)
		}
		return "", fmt.Errorf("%w: %s=%q is not a directory", ErrDatasetsNotFound, EnvDatasets, env)
	}
	if start == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrDatasetsNotFound, err)
		}
		start = wd
	}
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrDatasetsNotFound, err)
	}
	for {
		cand := filepath.Join(dir, "shared", "datasets")
		if isDir(cand) {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no shared/datasets above %s (set %s)", ErrDatasetsNotFound, start, EnvDatasets)
		}
		dir = parent
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// datasetDir resolves the folder of one data set. dir may be empty (search
// with FindDatasets), the datasets root (which holds sub), or the data set
// folder itself; accepting all three keeps call sites short.
func datasetDir(dir, sub string) (string, error) {
	if dir == "" {
		root, err := FindDatasets("")
		if err != nil {
			return "", err
		}
		dir = root
	}
	if cand := filepath.Join(dir, sub); isDir(cand) {
		return cand, nil
	}
	if isDir(dir) {
		return dir, nil
	}
	return "", fmt.Errorf("%w: %s is not a directory", ErrDatasetsNotFound, dir)
}

// openData opens dir/name, preferring dir/name.gz (decompressed on the fly)
// so callers do not care which form the folder ships. The returned closer
// closes both the gzip stream and the file.
func openData(dir, name string) (io.ReadCloser, string, error) {
	gz := filepath.Join(dir, name+".gz")
	if rc, err := tripletio.OpenFile(gz); err == nil {
		return rc, gz, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, gz, fmt.Errorf("workload: open %s: %w", gz, err)
	}
	plain := filepath.Join(dir, name)
	f, err := os.Open(plain)
	if err != nil {
		return nil, plain, fmt.Errorf("workload: open %s: %w", plain, err)
	}
	return f, plain, nil
}

// eachLine calls fn for every non-empty line of dir/name (or name.gz) with
// the trailing "\r" removed: the FB15k splits ship with CRLF endings and a
// stray "\r" would otherwise end up inside entity ids.
func eachLine(dir, name string, fn func(lineNo int, line string) error) error {
	rc, path, err := openData(dir, name)
	if err != nil {
		return err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		if err := fn(n, line); err != nil {
			return fmt.Errorf("workload: %s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("workload: read %s: %w", path, err)
	}
	return nil
}
