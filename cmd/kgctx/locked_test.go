package main

import (
	"errors"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

// TestOpenTwiceIsErrLocked: a second Open of a directory another store
// holds fails with engine.ErrLocked, not Badger's raw message alone.
func TestOpenTwiceIsErrLocked(t *testing.T) {
	dir := t.TempDir()
	st, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = engine.Open(dir, nil)
	if !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("second open: %v, want engine.ErrLocked", err)
	}
}
