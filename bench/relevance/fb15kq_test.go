package relevance

import (
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/bench/workload"
)

// tinyFacts: A has one place_of_birth (B); B one contains (C); C two
// genres (D, E); E's place_of_birth is an entity whose label is shared;
// D a self-loop.
func tinyFacts() *fbFacts {
	f := &fbFacts{
		Names:  []string{"A", "B", "C", "D", "E", "A (2)"},
		Unique: []bool{true, true, true, true, true, false},
		Paths:  []string{"/people/person/place_of_birth", "/location/location/contains", "/film/film/genre"},
		Facts: []fbFact{
			{0, 0, 1}, // A place_of_birth B      1-hop ok
			{2, 2, 3}, // C genre D               C has two genres
			{2, 2, 4}, // C genre E
			{1, 1, 2}, // B contains C            1-hop ok
			{4, 0, 5}, // E place_of_birth A (2)  the answer's label is not unique
			{3, 1, 3}, // D contains D            a self-loop
		},
	}
	f.RelNames = workload.RelationNames(f.Paths)
	return f
}

func TestOneHopUniqueness(t *testing.T) {
	f := tinyFacts()
	qs := f.oneHop(0, 1)
	var got []string
	for _, q := range qs {
		got = append(got, q.Head+">"+q.Answer)
		if len(q.Gold) != 1 || !strings.Contains(q.Text, q.Head) {
			t.Errorf("question %+v", q)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"A>B", "B>C"}) {
		t.Fatalf("1-hop facts %v, want A>B and B>C only", got)
	}
	for _, q := range qs {
		if q.Head == "A" && !strings.Contains(q.Text, "place of birth") {
			t.Errorf("wording %q lacks the relation's words", q.Text)
		}
		if q.Head == "A" && q.Gold[0] != gold("A", f.RelNames[0], "B") {
			t.Errorf("gold %v", q.Gold)
		}
	}
	if n := len(f.oneHop(1, 1)); n != 1 {
		t.Fatalf("asked 1, got %d", n)
	}
}

func TestTwoHopUniqueness(t *testing.T) {
	f := tinyFacts()
	qs := f.twoHop(0, 1)
	// Only A -place_of_birth-> B -contains-> C qualifies: B -contains-> C
	// then C's genre is not unique.
	if len(qs) != 1 {
		t.Fatalf("%d chains, want 1: %+v", len(qs), qs)
	}
	q := qs[0]
	want := []goldTriplet{gold("A", f.RelNames[0], "B"), gold("B", f.RelNames[1], "C")}
	if q.Head != "A" || q.Answer != "C" || !slices.Equal(q.Gold, want) {
		t.Fatalf("chain %+v", q)
	}
	if !strings.Contains(q.Text, "contains") || !strings.Contains(q.Text, "place of birth") || q.Para == q.Text {
		t.Fatalf("wording %q / paraphrase %q", q.Text, q.Para)
	}
}

func TestGenerationIsDeterministic(t *testing.T) {
	f := tinyFacts()
	a, b := f.oneHop(0, 9), f.oneHop(0, 9)
	if !slices.EqualFunc(a, b, func(x, y fbQuestion) bool { return x.Text == y.Text && x.Para == y.Para }) {
		t.Fatal("the same seed gave different questions")
	}
}

func TestRelationWords(t *testing.T) {
	for path, want := range map[string]string{
		"/people/person/place_of_birth": "place of birth",
		"/film/film/release_date_s./film/film_regional_release_date/film_release_region": "release date film region",
		"/award/award_nominee/award_nominations./award/award_nomination/award":           "award nominations",
	} {
		if got := strings.Join(relationWords(path), " "); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	if got := strings.Join(paraphraseWords([]string{"place", "of", "birth"}), " "); got != "location born" {
		t.Errorf("paraphrase %q", got)
	}
	if got := strings.Join(paraphraseWords([]string{"webpage", "category"}), " "); got != "category" {
		t.Errorf("paraphrase without synonyms %q, want the first word dropped", got)
	}
}

func TestSampleCapsGroups(t *testing.T) {
	// 99 items in group 0, item 99 alone in group 1: a sample of 10 takes
	// at most one per group on the first pass (so item 99 among the first
	// two), then fills from any group.
	var got []int
	sample(100, 10, 3, 1, func(i int) uint64 { return uint64(i / 99) }, func(int) bool { return false }, func(i int) { got = append(got, i) })
	if len(got) != 10 || !slices.Contains(got[:2], 99) {
		t.Fatalf("taken %v: want 10, item 99 among the first two", got)
	}
	slices.Sort(got)
	if len(slices.Compact(slices.Clone(got))) != 10 {
		t.Fatalf("an item taken twice: %v", got)
	}
	all := 0
	sample(5, 0, 3, 1, func(int) uint64 { return 0 }, func(int) bool { return false }, func(int) { all++ })
	if all != 5 {
		t.Fatalf("n 0 took %d of 5, want all", all)
	}
}

// TestFreshWordings: the fresh generator's wordings and its synonym
// table, which shares no pair with the dev one.
func TestFreshWordings(t *testing.T) {
	for k, v := range freshSynonyms {
		if synonyms[k] == v {
			t.Errorf("freshSynonyms repeats the dev pair %s -> %s", k, v)
		}
	}
	path := "/people/person/place_of_birth"
	for style, want := range []string{"place of birth", "person place of birth", "birth place"} {
		if got := strings.Join(freshRelationWords(path, style), " "); got != want {
			t.Errorf("style %d: %q, want %q", style, got, want)
		}
	}
	if got := strings.Join(freshParaphrase([]string{"place", "of", "birth"}), " "); got != "spot native" {
		t.Errorf("paraphrase %q", got)
	}
	if got := strings.Join(freshParaphrase([]string{"headquarters", "citytown", "zone"}), " "); got != "citytown zone" {
		t.Errorf("paraphrase without synonyms %q, want the last two words", got)
	}
	f := tinyFacts()
	a, b := f.freshOneHop(0, 1), f.freshOneHop(0, 1)
	if len(a) == 0 || !slices.EqualFunc(a, b, func(x, y fbQuestion) bool { return x.Text == y.Text && x.Para == y.Para }) {
		t.Fatalf("fresh questions not deterministic or empty: %d", len(a))
	}
}
