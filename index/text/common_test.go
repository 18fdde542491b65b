package text

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestEachCommonMatchesAnd: eachCommon finds exactly the documents a
// bitmap AND of the list and the postings finds (what rerank did before),
// in order, over array, bitmap and run containers across several high
// keys, with one iterator reused throughout.
func TestEachCommonMatchesAnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	var it roaring.IntIterator
	for trial := range 400 {
		span := uint32(1) << (8 + rng.IntN(13)) // up to 3 high keys past 65536
		post := roaring.New()
		switch trial % 3 {
		case 0: // sparse: array containers
			for range rng.IntN(200) {
				post.Add(rng.Uint32N(span))
			}
		case 1: // dense: bitmap containers
			for range rng.IntN(int(span)) {
				post.Add(rng.Uint32N(span))
			}
		default: // runs
			for range rng.IntN(20) {
				a := rng.Uint32N(span)
				post.AddRange(uint64(a), uint64(a+rng.Uint32N(3000)))
			}
			post.RunOptimize()
		}
		var docs []uint32
		for range rng.IntN(500) {
			docs = append(docs, rng.Uint32N(span+1000))
		}
		slices.Sort(docs)
		docs = slices.Compact(docs)
		var want []int
		both := roaring.And(roaring.BitmapOf(docs...), post)
		for i, k := both.Iterator(), 0; i.HasNext(); {
			d := i.Next()
			for docs[k] < d {
				k++
			}
			want = append(want, k)
		}
		var got []int
		eachCommon(&it, post, docs, func(k int) { got = append(got, k) })
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: %d common documents, the AND finds %d", trial, len(got), len(want))
		}
	}
}
