package index

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/enginetest"
	"github.com/kgctx/kgctx/index/hnsw"
)

// A read error while the vectors stream in (a Badger failure midway) is
// reported as that error, naming what was read: not as the dimension
// mismatch or the missing vector the HNSW load then sees, and never as a
// graph loaded with part of its vectors.
func TestLoadVectorsReportsReadError(t *testing.T) {
	dir := t.TempDir()
	f := open(t, dir)
	var in []engine.TripletInput
	for i := range 40 {
		in = append(in, engine.TripletInput{Source: fmt.Sprintf("Service%d", i), Relationship: "calls", Target: fmt.Sprintf("Store%d", i%7)})
	}
	if _, err := f.st.Import(t.Context(), ten, in, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	f.close(t)

	st, err := engine.Open(filepath.Join(dir, "store"), &engine.Options{Vectorizer: NewVectorizer(f.emb)})
	if err != nil {
		t.Fatal(err)
	}
	enginetest.CloseAtEnd(t, st)
	hopts := hnsw.Options{Dim: f.emb.Dim(), Metric: hnsw.Cosine}
	injected := errors.New("injected: badger read failed")
	for _, after := range []int{0, 1, 10} {
		sent := 0
		failing := func(fn func(uint32, []float32) error) error {
			return st.EachVector(func(id uint32, v []float32) error {
				if sent == after {
					return injected
				}
				sent++
				return fn(id, v)
			})
		}
		sp := space{name: "nodes", aux: "hnsw/"}
		err := sp.loadVectors(st, hopts, failing)
		if !errors.Is(err, injected) || errors.Is(err, hnsw.ErrDimensionMismatch) || !strings.Contains(err.Error(), "read nodes vectors") {
			t.Fatalf("read failing after %d vectors: %v, want the read error, naming the nodes' vectors", after, err)
		}
		if sp.vec != nil {
			t.Fatalf("read failing after %d vectors: a graph was loaded", after)
		}
	}
	// The same load without the fault works: the fault is what was reported.
	sp := space{name: "nodes", aux: "hnsw/"}
	if err := sp.loadVectors(st, hopts, st.EachVector); err != nil || sp.vec == nil || sp.vec.Len() == 0 {
		t.Fatalf("load without a fault: %v", err)
	}
}
