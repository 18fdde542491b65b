package enginetest

import (
	"errors"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

// Open opens a store in a fresh t.TempDir() (nil opts means defaults;
// with opts.InMemory the directory goes unused) and, when the test ends,
// checks and closes it (see CloseAtEnd).
func Open(t testing.TB, opts *engine.Options) *engine.Store {
	t.Helper()
	st, _ := OpenDir(t, opts)
	return st
}

// OpenDir is Open that also returns the store's directory, for tests that
// close the store and open the directory again (Reopen).
func OpenDir(t testing.TB, opts *engine.Options) (*engine.Store, string) {
	t.Helper()
	dir := t.TempDir()
	return OpenAt(t, dir, opts), dir
}

// OpenAt opens the store in dir and checks and closes it when the test
// ends (see CloseAtEnd).
func OpenAt(t testing.TB, dir string, opts *engine.Options) *engine.Store {
	t.Helper()
	st, err := engine.Open(dir, opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	CloseAtEnd(t, st)
	return st
}

// Reopen checks st (failing the test now on a violation), closes it and
// opens dir again, to be checked and closed when the test ends.
func Reopen(t testing.TB, st *engine.Store, dir string, opts *engine.Options) *engine.Store {
	t.Helper()
	if err := st.Check(); err != nil {
		t.Fatalf("Check before close: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("close store: %v", err)
	}
	return OpenAt(t, dir, opts)
}

// CloseAtEnd registers, for when the test ends: Check st (Check), then
// run closers in order (indexes attached to st are closed after the check,
// which checks them too, and before the store), then close st. A store the
// test closed itself is left alone.
func CloseAtEnd(t testing.TB, st *engine.Store, closers ...func() error) {
	t.Cleanup(func() {
		if Check(t, st) {
			return
		}
		for _, c := range closers {
			c()
		}
		st.Close()
	})
}

// Check runs st.Check and reports a violation with t.Errorf. It reports
// whether st was already closed, which is not a violation.
func Check(t testing.TB, st *engine.Store) (closed bool) {
	t.Helper()
	err := st.Check()
	if errors.Is(err, engine.ErrClosed) {
		return true
	}
	if err != nil {
		t.Errorf("Check: %v", err)
	}
	return false
}
