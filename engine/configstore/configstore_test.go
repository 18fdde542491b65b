package configstore

import (
	"errors"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/enginetest"
)

func TestConfig(t *testing.T) {
	st, dir := enginetest.OpenDir(t, nil)
	s := New(st)
	if _, err := s.Get("policies", "active"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatal(err)
	}
	if err := s.Put("policies", "active", []byte("permit(principal, action, resource);")); err != nil {
		t.Fatal(err)
	}
	s = New(enginetest.Reopen(t, st, dir, nil))
	v, err := s.Get("policies", "active")
	if err != nil || string(v) != "permit(principal, action, resource);" {
		t.Fatalf("%q %v", v, err)
	}
	if err := s.Delete("policies", "active"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("policies", "active"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatal(err)
	}
}
