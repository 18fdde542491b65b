package engine

import "testing"

// TestStoreID: a store keeps its identity across reopens; another store
// has another.
func TestStoreID(t *testing.T) {
	s, dir := openTest(t, nil)
	id, err := s.ID()
	if err != nil || len(id) != 36 {
		t.Fatalf("ID: %q %v", id, err)
	}
	if again, err := s.ID(); err != nil || again != id {
		t.Fatalf("asked twice: %q then %q (%v)", id, again, err)
	}
	s = reopen(t, s, dir, nil)
	if got, err := s.ID(); err != nil || got != id {
		t.Errorf("after reopening: %q, want %q (%v)", got, id, err)
	}
	other, _ := openTest(t, nil)
	if got, err := other.ID(); err != nil || got == id {
		t.Errorf("another store: %q (%v), the first's %q", got, err, id)
	}
}
