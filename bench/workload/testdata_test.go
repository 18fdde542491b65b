package workload

import (
	"errors"
	"io/fs"
	"testing"
)

// datasets returns the datasets root or skips the test: the data lives
// outside the repository and is absent on some machines.
func datasets(t testing.TB) string {
	t.Helper()
	dir, err := FindDatasets("")
	if err != nil {
		t.Skipf("datasets not available (%v); set %s to run this test", err, EnvDatasets)
	}
	return dir
}

// skipIfMissing skips when one data set folder or file is absent.
func skipIfMissing(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrDatasetsNotFound) || errors.Is(err, fs.ErrNotExist) {
		t.Skipf("dataset not available: %v", err)
	}
}
