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
	ds "github.com/kgctx/kgctx/internal/datasets"
)

// EnvDatasets names the environment variable that overrides the search for
// the datasets folder (see FindDatasets).
const EnvDatasets = ds.Env

// FindDatasets returns the absolute path of the shared datasets folder:
// $KGCTX_DATASETS, or the first <dir>/shared/datasets walking up from start
// (the working directory when empty). See internal/datasets.Find.
func FindDatasets(start string) (string, error) { return ds.Find(start) }

func isDir(p string) bool { return ds.IsDir(p) }

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
