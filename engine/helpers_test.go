package engine

import (
	"context"
	"testing"
)

// openTest opens a store in a temporary directory and checks its invariants
// when the test ends. It mirrors engine/enginetest, the kit of every other
// package's tests, which the package's own tests cannot import (the kit
// imports engine).
func openTest(t testing.TB, opts *Options) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	return openAt(t, dir, opts), dir
}

func reopen(t testing.TB, s *Store, dir string, opts *Options) *Store {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Fatalf("Check before close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return openAt(t, dir, opts)
}

// openAt opens the store in dir; when the test ends, unless the test
// closed it, it is checked and closed.
func openAt(t testing.TB, dir string, opts *Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.checkOpen(); err == nil {
			if err := s.Check(); err != nil {
				t.Errorf("Check: %v", err)
			}
			s.Close()
		}
	})
	return s
}

func tr(src, rel, dst string) TripletInput {
	return TripletInput{Source: src, Relationship: rel, Target: dst}
}

func mustImport(t testing.TB, s *Store, ten Tenant, ts ...TripletInput) ImportResult {
	t.Helper()
	res, err := s.Import(context.Background(), ten, ts, ImportOptions{})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return res
}

var (
	tenA  = Tenant{Org: "org_a", Project: "proj_1"}
	tenA2 = Tenant{Org: "org_a", Project: "proj_2"}
	tenB  = Tenant{Org: "org_b", Project: "proj_1"}
)

func f64(v float64) *float64 { return &v }
