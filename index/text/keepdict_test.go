package text

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeptDictionariesMatchFresh: searches whose scratches keep their
// segments' dictionaries between snapshots give exactly the hits (ids and
// scores) of searches that open every dictionary afresh, while writes add
// segments, deletions change them and merges replace them, and while two
// indexes share the scratches.
func TestKeptDictionariesMatchFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	words := []string{"auth", "service", "token", "cache", "invoice", "reader", "timeout", "handler", "queue", "store"}
	a, b := openMem(t, Options{}), openMem(t, Options{})
	next := uint32(1)
	write := func(ix *Index) {
		var docs []Doc
		for range 1 + rng.IntN(30) {
			w := func() string { return words[rng.IntN(len(words))] }
			docs = append(docs, Doc{ID: next, Org: "o", Project: []string{"p", "q"}[rng.IntN(2)],
				Name: w() + "_" + w(), Type: w(), Description: fmt.Sprintf("%s %s %s", w(), w(), w())})
			next++
		}
		mustUpsert(t, ix, docs...)
		if rng.IntN(3) == 0 {
			var del []uint32
			for range 1 + rng.IntN(5) {
				del = append(del, 1+rng.Uint32N(next))
			}
			if err := ix.Delete(del); err != nil {
				t.Fatal(err)
			}
		}
	}
	search := func(ix *Index, q, project string) []Hit {
		hits, err := ix.Search(nil, q, 20, Filter{Org: "o", Project: project})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	defer func() { keepDictionaries = true }()
	for round := range 40 {
		ix := a
		if round%3 == 2 {
			ix = b
		}
		write(ix)
		for range 4 {
			q := words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]
			project := []string{"p", "q", ""}[rng.IntN(3)]
			keepDictionaries = true
			kept := search(ix, q, project)
			keepDictionaries = false
			fresh := search(ix, q, project)
			if !slices.Equal(kept, fresh) {
				t.Fatalf("round %d, %q in %q: kept dictionaries give %v, fresh ones %v", round, q, project, kept, fresh)
			}
		}
	}
}
