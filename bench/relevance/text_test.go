package relevance

import (
	"math"
	"slices"
	"testing"
)

func TestTokenize(t *testing.T) {
	// kgctx's own word analysis (text.AppendWords): its stop words ("get",
	// "has", "in" among them) and Porter stems.
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"getURLQuery", []string{"url", "queri"}},
		{"mux.Router.ServeHTTP", []string{"mux", "router", "serv", "http"}},
		{"has_genre in_language", []string{"genr", "languag"}},
		{"What are the LANGUAGES of the films?", []string{"languag", "film"}},
		{"studies classes bus x2010fifa", []string{"studi", "class", "bu", "x", "2010", "fifa"}},
		{"Élodie  Bouchez—actress", []string{"élodie", "bouchez", "actress"}},
		{"", nil},
	} {
		if got := tokenize(nil, c.in); !slices.Equal(got, c.want) {
			t.Errorf("tokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestBM25Score(t *testing.T) {
	x := newBM25()
	x.add([]string{"a", "b"})
	x.add([]string{"a", "c", "c"})
	got := map[uint32]float64{}
	x.search([]string{"c", "c"}, func(d uint32, s float64) { got[d] = s })
	// One document holds "c", twice, in a 3-term document; avgdl 2.5.
	idf := math.Log(1 + (2-1+0.5)/(1+0.5))
	norm := 1.2 * (1 - 0.75 + 0.75*3/2.5)
	want := idf * 2 * 2.2 / (2 + norm)
	if len(got) != 1 || math.Abs(got[1]-want) > 1e-12 {
		t.Fatalf("scores %v, want only doc 1 at %v (a repeated query term counts once)", got, want)
	}
	// The scratch is clean: a second query sees no leftovers.
	got = map[uint32]float64{}
	x.search([]string{"b"}, func(d uint32, s float64) { got[d] = s })
	if len(got) != 1 || got[0] <= 0 {
		t.Fatalf("second search %v, want only doc 0", got)
	}
}
