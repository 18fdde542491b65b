package hnsw_test

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/kgctx/kgctx/index/hnsw"
)

func Example() {
	g, err := hnsw.New(hnsw.Options{Dim: 3}) // Cosine, M 16, efConstruction 200, efSearch 64
	if err != nil {
		panic(err)
	}
	vecs := map[uint32][]float32{
		1: {1, 0, 0},
		2: {0.9, 0.1, 0},
		3: {0, 1, 0},
		4: {0, 0, 1},
	}
	for id, v := range vecs {
		if err := g.Add(id, v); err != nil {
			panic(err)
		}
	}

	// Reuse dst across calls: Search then allocates nothing.
	dst := make([]hnsw.Result, 0, 2)
	dst = g.Search(dst, []float32{1, 0.05, 0}, 2, hnsw.SearchOptions{})
	fmt.Println("nearest:", dst[0].ID, dst[1].ID)

	// Restrict to an allow-list (a tenant's nodes, say).
	dst = g.Search(dst, []float32{1, 0.05, 0}, 2, hnsw.SearchOptions{Allow: roaring.BitmapOf(3, 4)})
	fmt.Println("allowed:", dst[0].ID, dst[1].ID)

	g.Delete(1)
	dst = g.Search(dst, []float32{1, 0.05, 0}, 1, hnsw.SearchOptions{})
	fmt.Println("after delete:", dst[0].ID)

	// Persist what changed, then reopen without rebuilding.
	records := map[uint32][]byte{}
	for _, id := range g.TakeDirty() {
		records[id] = g.AppendNode(nil, id)
	}
	g2, err := hnsw.Load(hnsw.Options{}, g.MarshalMeta(),
		func(yield func(uint32, []byte) error) error {
			for id, rec := range records {
				if err := yield(id, rec); err != nil {
					return err
				}
			}
			return nil
		},
		func(id uint32) []float32 { return vecs[id] })
	if err != nil {
		panic(err)
	}
	fmt.Println("reloaded:", g2.Len(), g2.Check() == nil)
	// Output:
	// nearest: 1 2
	// allowed: 3 4
	// after delete: 2
	// reloaded: 3 true
}
