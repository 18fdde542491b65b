package engine

import (
	"errors"
	"testing"
)

// TestWhileLoading: the hook runs during Open with the store's dimension
// and auxiliary records readable; its error fails Open, and the store can
// be opened again afterwards (Open released it).
func TestWhileLoading(t *testing.T) {
	ten := Tenant{Org: "o", Project: "p"}
	s, dir := openTest(t, &Options{Dim: 4})
	mustImport(t, s, ten, tr("A", "calls", "B"))
	if err := s.WriteAux(func(w *AuxWriter) error { w.Set([]byte("x/k"), []byte("v")); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	boom := errors.New("boom")
	if _, err := Open(dir, &Options{Dim: 4, WhileLoading: func(*Store) error { return boom }}); !errors.Is(err, boom) {
		t.Fatalf("Open with a failing hook: %v, want boom", err)
	}

	var dim int
	var aux string
	s2, err := Open(dir, &Options{Dim: 4, WhileLoading: func(st *Store) error {
		dim = st.Dim()
		v, err := st.GetAux([]byte("x/k"))
		aux = string(v)
		return err
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if dim != 4 || aux != "v" {
		t.Fatalf("hook saw dim %d, aux %q", dim, aux)
	}
	if st, _ := s2.Stats(ten); st.Triplets != 1 {
		t.Fatalf("store after the hook: %+v", st)
	}
}
