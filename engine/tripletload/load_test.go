package tripletload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/tripletio"
)

// TestLoadStopsAtCancellation: once ctx is cancelled Load writes no further
// batch and returns ctx's error; the count it returns is exactly what the
// store holds (each batch is all or nothing), and loading the same files
// again completes the import without duplicating anything.
func TestLoadStopsAtCancellation(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "n%d\tlinks_to\tn%d\n", i, i+1)
	}
	path := filepath.Join(t.TempDir(), "in.tsv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ten := engine.Tenant{Org: "o", Project: "p"}
	files := []tripletio.File{{Path: path}}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := Load(ctx, st, ten, files, tripletio.LoadOptions{Batch: 10, Written: func(n int) {
		if n >= 10 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Load after cancel: %v", err)
	}
	stats, err := st.Stats(ten)
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 10 || stats.Triplets != 10 {
		t.Fatalf("returned %d accepted, store holds %d triplets; want 10 and 10", res.Accepted, stats.Triplets)
	}

	res, err = Load(context.Background(), st, ten, files, tripletio.LoadOptions{Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	stats, _ = st.Stats(ten)
	if res.EdgesCreated != 90 || res.EdgesMerged != 10 || stats.Triplets != 100 {
		t.Fatalf("re-run: %+v, store %d triplets", res, stats.Triplets)
	}

	// Cancelled before anything is written (during validation): nothing.
	ten2 := engine.Tenant{Org: "o", Project: "q"}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	res, err = Load(ctx2, st, ten2, files, tripletio.LoadOptions{Batch: 10})
	stats, _ = st.Stats(ten2)
	if !errors.Is(err, context.Canceled) || res.Accepted != 0 || stats.Triplets != 0 {
		t.Fatalf("cancelled up front: %v, %+v, %d triplets", err, res, stats.Triplets)
	}
}
