package relevance

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/engine"
)

// fbFacts is FB15k-237's train split as kgctx imports it (the graph of
// workload.LoadFB15k: entity labels as names, disambiguated with " (2)",
// " (3)"... where labels collide, readable relation names) plus what
// question generation needs: per triplet the entities and the Freebase
// relation path, and which entities carry a label no other entity has.
type fbFacts struct {
	Triplets []engine.TripletInput // to import, train file order
	Names    []string              // node name per entity (first-appearance order)
	// Unique[e]: e's label is non-empty, no other train entity's label
	// normalises to the same key, and e's node name is that label. Only
	// such entities are named by questions or are their answers, so a
	// question never names an ambiguous entity and its answer is one node.
	Unique   []bool
	Paths    []string // relation paths, first-appearance order
	RelNames []string // kgctx's relationship name of each path
	Facts    []fbFact // train file order, aligned with Triplets
}

type fbFact struct{ H, R, T uint32 }

const fb15kDir = "fb15k-237"

// loadFB15kFacts loads the graph through workload.LoadFB15k and aligns it
// with the split's ids and relation paths read again from train.txt.
func loadFB15kFacts(dir string) (*fbFacts, error) {
	fb, err := workload.LoadFB15k(dir)
	if err != nil {
		return nil, err
	}
	d := filepath.Join(dir, fb15kDir)
	labels := map[string]string{}
	if err := eachLine(d, "entity2text.txt", func(_ int, l string) error {
		id, label, ok := strings.Cut(l, "\t")
		if !ok {
			return fmt.Errorf("%w: want id<TAB>label", ErrMalformed)
		}
		labels[id] = strings.TrimSpace(label)
		return nil
	}); err != nil {
		return nil, err
	}
	f := &fbFacts{Triplets: fb.Triplets}
	ent := map[string]uint32{}
	var entIDs []string
	rel := map[string]uint32{}
	intern := func(id string) uint32 {
		if i, ok := ent[id]; ok {
			return i
		}
		ent[id] = uint32(len(entIDs))
		entIDs = append(entIDs, id)
		return ent[id]
	}
	if err := eachLine(d, "train.txt", func(_ int, l string) error {
		parts := strings.Split(l, "\t")
		if len(parts) != 3 {
			return fmt.Errorf("%w: want head<TAB>relation<TAB>tail", ErrMalformed)
		}
		r, ok := rel[parts[1]]
		if !ok {
			r = uint32(len(f.Paths))
			rel[parts[1]] = r
			f.Paths = append(f.Paths, parts[1])
		}
		f.Facts = append(f.Facts, fbFact{intern(parts[0]), r, intern(parts[2])})
		return nil
	}); err != nil {
		return nil, err
	}
	if len(f.Facts) != len(fb.Triplets) {
		return nil, fmt.Errorf("%w: train.txt has %d triplets, the workload loader %d", ErrMalformed, len(f.Facts), len(fb.Triplets))
	}
	f.RelNames = workload.RelationNames(f.Paths)
	f.Names = make([]string, len(entIDs))
	for i, x := range f.Facts {
		t := &fb.Triplets[i]
		for _, p := range [][2]string{{f.Names[x.H], t.Source}, {f.Names[x.T], t.Target}} {
			if p[0] != "" && p[0] != p[1] {
				return nil, fmt.Errorf("%w: entity named both %q and %q", ErrMalformed, p[0], p[1])
			}
		}
		f.Names[x.H], f.Names[x.T] = t.Source, t.Target
		if f.RelNames[x.R] != t.Relationship {
			return nil, fmt.Errorf("%w: relation %s named %q here, %q by the loader", ErrMalformed, f.Paths[x.R], f.RelNames[x.R], t.Relationship)
		}
	}
	count := map[string]int{}
	for _, id := range entIDs {
		if l := labels[id]; l != "" {
			count[engine.NormalizeName(l)]++
		}
	}
	f.Unique = make([]bool, len(entIDs))
	for i, id := range entIDs {
		l := labels[id]
		f.Unique[i] = l != "" && count[engine.NormalizeName(l)] == 1 && f.Names[i] == l
	}
	return f, nil
}

// fbQuestion is a generated question: the plain wording and a paraphrase
// of the same fact, the gold triplets (one, or the 2-hop chain) and the
// answer's name.
type fbQuestion struct {
	Text, Para string
	Head       string
	Answer     string
	Gold       []goldTriplet
	Paths      []string
}

// relationWords words a relation path: the last segment of the path, and
// for a compound path through a mediator ("a/b/c./d/e/f") the last segment
// of its first part in front; words repeated or of one letter dropped.
// "/people/person/place_of_birth" gives "place of birth";
// "/film/film/release_date_s./film/film_regional_release_date/film_release_region"
// gives "release date film region".
func relationWords(path string) []string {
	parts := strings.Split(path, ".")
	last := func(p string) []string {
		segs := strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
		if len(segs) == 0 {
			return nil
		}
		return strings.Split(segs[len(segs)-1], "_")
	}
	words := last(parts[len(parts)-1])
	if len(parts) > 1 {
		words = append(last(parts[0]), words...)
	}
	var out []string
	for _, w := range words {
		if len(w) > 1 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// synonyms replace relation words in paraphrases.
var synonyms = map[string]string{
	"birth": "born", "place": "location", "location": "place", "locations": "places", "nationality": "citizenship",
	"profession": "occupation", "film": "movie", "films": "movies", "genre": "style", "language": "tongue",
	"languages": "tongues", "country": "nation", "countries": "nations", "award": "prize", "winner": "recipient",
	"spouse": "partner", "children": "kids", "team": "club", "position": "role", "sport": "game", "sports": "games",
	"currency": "money", "organization": "institution", "gender": "sex", "religion": "faith", "contains": "includes",
	"nominated": "shortlisted", "ceremony": "event", "death": "died", "student": "pupil", "school": "college",
	"company": "firm", "producer": "maker", "capital": "seat", "region": "area", "music": "songs", "instrument": "tool",
	"origin": "roots", "founded": "started", "written": "penned", "actor": "performer", "participant": "member",
	"release": "launch", "group": "band", "field": "area", "major": "subject", "institution": "establishment",
}

// paraphraseWords replaces the relation words the synonym table knows; when
// it knows none and there are several words, the first word is dropped.
func paraphraseWords(words []string) []string {
	out := make([]string, 0, len(words))
	replaced := false
	for _, w := range words {
		if s, ok := synonyms[w]; ok {
			out = append(out, s)
			replaced = true
			continue
		}
		if w == "of" || w == "by" || w == "for" {
			continue
		}
		out = append(out, w)
	}
	if !replaced && len(out) > 1 {
		out = out[1:]
	}
	if len(out) == 0 {
		return words
	}
	return out
}

var (
	oneHopTemplates = []string{
		"What is the {rel} of {head}?",
		"{head}: {rel}?",
		"Tell me the {rel} for {head}.",
		"Which {rel} does {head} have?",
		"I need {head}'s {rel}.",
	}
	oneHopParaTemplates = []string{
		"{head} {rel}?",
		"Looking for {head} and its {rel}.",
		"Any idea about the {rel} linked to {head}?",
	}
	twoHopTemplates = []string{
		"What is the {r2} of the {r1} of {head}?",
		"Find the {r2} of {head}'s {r1}.",
		"{head}'s {r1}: what is its {r2}?",
	}
	twoHopParaTemplates = []string{
		"Starting from {head}, follow the {r1}, then give the {r2}.",
		"{r2} for the {r1} connected to {head}?",
	}
)

func fill(tpl string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(tpl)
}

// capFraction bounds the share of one relation (1-hop) or relation pair
// (2-hop) in a sample, so that the most common relations do not make the
// whole set; the cap is lifted when the set could not be filled with it.
const capFraction = 10

// sample picks n of the candidates (all when n is 0) in a seeded random
// order, at most max(1, n/capFraction) per group, then without the cap if
// n is not reached; skip vetoes a candidate given those already taken.
func sample(count, n int, seed uint64, stream uint64, group func(i int) uint64, skip func(i int) bool, take func(i int)) {
	rng := rand.New(rand.NewPCG(seed, stream))
	order := rng.Perm(count)
	if n == 0 || n > count {
		n = count
	}
	limit := max(1, n/capFraction)
	if n == count {
		limit = count
	}
	perGroup := map[uint64]int{}
	taken := make([]bool, count)
	got := 0
	for pass := 0; pass < 2 && got < n; pass++ {
		for _, i := range order {
			if got == n {
				break
			}
			if taken[i] || skip(i) {
				continue
			}
			g := group(i)
			if pass == 0 && perGroup[g] >= limit {
				continue
			}
			perGroup[g]++
			taken[i] = true
			take(i)
			got++
		}
	}
}

// outCounts counts each (head, relation) pair's edges.
func (f *fbFacts) outCounts() map[[2]uint32]int {
	m := make(map[[2]uint32]int, len(f.Facts))
	for _, x := range f.Facts {
		m[[2]uint32{x.H, x.R}]++
	}
	return m
}

// oneHop generates n 1-hop questions (all when n is 0): a (head,
// relation) pair where the head has exactly one edge of that relation, the
// answer its tail; head and answer have unique labels and differ.
func (f *fbFacts) oneHop(n int, seed uint64) []fbQuestion {
	counts := f.outCounts()
	var cand []int
	for i, x := range f.Facts {
		if counts[[2]uint32{x.H, x.R}] == 1 && f.Unique[x.H] && f.Unique[x.T] && x.H != x.T {
			cand = append(cand, i)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 12))
	var out []fbQuestion
	sample(len(cand), n, seed, 11, func(i int) uint64 { return uint64(f.Facts[cand[i]].R) },
		func(int) bool { return false },
		func(i int) {
			x := f.Facts[cand[i]]
			head, ans := f.Names[x.H], f.Names[x.T]
			words := relationWords(f.Paths[x.R])
			q := fbQuestion{Head: head, Answer: ans, Paths: []string{f.Paths[x.R]},
				Gold: []goldTriplet{gold(head, f.RelNames[x.R], ans)}}
			q.Text = fill(oneHopTemplates[rng.IntN(len(oneHopTemplates))], "{head}", head, "{rel}", strings.Join(words, " "))
			q.Para = fill(oneHopParaTemplates[rng.IntN(len(oneHopParaTemplates))], "{head}", head,
				"{rel}", strings.Join(paraphraseWords(words), " "))
			out = append(out, q)
		})
	return out
}

// twoHop generates n 2-hop questions (all when n is 0): chains head -r1->
// mid -r2-> tail where head has exactly one r1 edge and mid exactly one r2
// edge; head and tail have unique labels, and the tail is neither the head
// nor the mid. A second step (mid, r2) is asked at most once.
func (f *fbFacts) twoHop(n int, seed uint64) []fbQuestion {
	counts := f.outCounts()
	out1 := make([][]uint32, len(f.Names)) // single-edge steps leaving each entity
	for i, x := range f.Facts {
		if counts[[2]uint32{x.H, x.R}] == 1 && x.H != x.T {
			out1[x.H] = append(out1[x.H], uint32(i))
		}
	}
	var chains [][2]uint32
	for i, x := range f.Facts {
		if !f.Unique[x.H] || counts[[2]uint32{x.H, x.R}] != 1 || x.H == x.T {
			continue
		}
		for _, j := range out1[x.T] {
			y := f.Facts[j]
			if f.Unique[y.T] && y.T != x.H && y.T != x.T {
				chains = append(chains, [2]uint32{uint32(i), j})
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 22))
	usedStep := map[uint32]bool{}
	var out []fbQuestion
	sample(len(chains), n, seed, 21,
		func(i int) uint64 {
			c := chains[i]
			return uint64(f.Facts[c[0]].R)<<32 | uint64(f.Facts[c[1]].R)
		},
		func(i int) bool { return usedStep[chains[i][1]] },
		func(i int) {
			c := chains[i]
			usedStep[c[1]] = true
			x, y := f.Facts[c[0]], f.Facts[c[1]]
			head, mid, ans := f.Names[x.H], f.Names[x.T], f.Names[y.T]
			w1, w2 := relationWords(f.Paths[x.R]), relationWords(f.Paths[y.R])
			q := fbQuestion{Head: head, Answer: ans, Paths: []string{f.Paths[x.R], f.Paths[y.R]},
				Gold: []goldTriplet{gold(head, f.RelNames[x.R], mid), gold(mid, f.RelNames[y.R], ans)}}
			q.Text = fill(twoHopTemplates[rng.IntN(len(twoHopTemplates))], "{head}", head,
				"{r1}", strings.Join(w1, " "), "{r2}", strings.Join(w2, " "))
			q.Para = fill(twoHopParaTemplates[rng.IntN(len(twoHopParaTemplates))], "{head}", head,
				"{r1}", strings.Join(paraphraseWords(w1), " "), "{r2}", strings.Join(paraphraseWords(w2), " "))
			out = append(out, q)
		})
	return out
}
