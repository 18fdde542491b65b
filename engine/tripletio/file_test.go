package tripletio

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "t.tsv")
	gz := filepath.Join(dir, "t.tsv.gz")
	notgz := filepath.Join(dir, "bad.gz")
	in := []byte(sampleInputs[TSV])
	must(t, os.WriteFile(plain, in, 0o600))
	must(t, os.WriteFile(gz, gzipBytes(t, in), 0o600))
	must(t, os.WriteFile(notgz, in, 0o600))

	for _, p := range []string{plain, gz} {
		rc, err := OpenFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		must(t, err)
		must(t, rc.Close())
		if !reflect.DeepEqual(got, in) {
			t.Errorf("%s: read %q", p, got)
		}
	}
	if _, err := OpenFile(notgz); err == nil {
		t.Error("a .gz file that is not gzip opened without error")
	}
	if _, err := OpenFile(filepath.Join(dir, "missing.tsv")); !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}

	// "-" is standard input, which Close must leave open.
	rc, err := OpenFile("-")
	must(t, err)
	must(t, rc.Close())
	if _, err := os.Stdin.Stat(); err != nil {
		t.Errorf("stdin closed: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
