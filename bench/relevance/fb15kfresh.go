package relevance

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// Fresh one-hop questions (issue 22, item 2): the same facts as oneHop
// (a head with exactly one edge of the relation), asked in wordings and
// templates written apart from the ones the ranking was tuned on, several
// per relation shape, so that a gain measured on them is not the
// generator's. A relation is worded in one of three ways (its last
// segment; its subject type in front; "x of y" turned into "y x"), and a
// paraphrase further swaps words through its own synonym table (none of
// the dev table's pairs) or, when it knows none, keeps only the last two
// words.
var (
	freshTemplates = []string{
		"Who or what is the {rel} of {head}?",
		"Do you know {head}'s {rel}?",
		"Please find the {rel} for {head}.",
		"What {rel} is associated with {head}?",
		"{rel} of {head}",
		"In this graph, {head} has which {rel}?",
	}
	freshParaTemplates = []string{
		"Tell me about {head}: its {rel}.",
		"{head}, {rel}, anyone?",
		"Which {rel} goes with {head}?",
		"Need the {rel} info on {head}.",
		"Curious what the {rel} is for {head}.",
	}
	// freshSynonyms shares no pair with synonyms.
	freshSynonyms = map[string]string{
		"birth": "native", "place": "spot", "nationality": "passport", "profession": "job", "film": "picture",
		"films": "pictures", "genre": "kind", "language": "speech", "country": "state", "award": "honor",
		"spouse": "husband or wife", "children": "offspring", "team": "squad", "position": "post",
		"currency": "legal tender", "organization": "body", "religion": "belief", "death": "passing",
		"student": "alumnus", "school": "academy", "company": "business", "music": "score",
		"instrument": "plays", "origin": "hometown", "founded": "established", "actor": "cast member",
		"location": "whereabouts", "contains": "holds", "nominated": "up for", "ceremony": "gala",
		"winner": "laureate", "group": "ensemble", "sport": "athletics", "region": "territory",
		"release": "premiere", "producer": "production", "written": "authored", "gender": "gender identity",
		"capital": "main city", "major": "concentration", "participant": "attendee", "institution": "university",
	}
)

// freshRelationWords words path in style 0 (its last segment), 1 (the
// subject type, the segment before the last, in front: "person place of
// birth") or 2 ("place of birth" as "birth place"; a relation without
// "of" keeps its order).
func freshRelationWords(path string, style int) []string {
	words := relationWords(path)
	switch style {
	case 1:
		segs := strings.FieldsFunc(strings.Split(path, ".")[0], func(r rune) bool { return r == '/' })
		if len(segs) >= 2 {
			typ := strings.Split(segs[len(segs)-2], "_")
			out := slices.Clone(typ)
			for _, w := range words {
				if !slices.Contains(out, w) {
					out = append(out, w)
				}
			}
			return out
		}
	case 2:
		if i := slices.Index(words, "of"); i > 0 && i < len(words)-1 {
			return append(slices.Clone(words[i+1:]), words[:i]...)
		}
	}
	return words
}

// freshParaphrase swaps words through freshSynonyms; when it knows none,
// it keeps the last two words (of the words that are not "of", "by",
// "for").
func freshParaphrase(words []string) []string {
	var out []string
	replaced := false
	for _, w := range words {
		if w == "of" || w == "by" || w == "for" {
			continue
		}
		if s, ok := freshSynonyms[w]; ok {
			out = append(out, s)
			replaced = true
			continue
		}
		out = append(out, w)
	}
	if !replaced && len(out) > 2 {
		out = out[len(out)-2:]
	}
	if len(out) == 0 {
		return words
	}
	return out
}

// freshOneHop words the questions of oneHop(n, seed) afresh: the same
// facts, in fresh templates and wordings (see freshTemplates).
func (f *fbFacts) freshOneHop(n int, seed uint64) []fbQuestion {
	qs := f.oneHop(n, seed)
	rng := rand.New(rand.NewPCG(seed, 31))
	for i := range qs {
		q := &qs[i]
		words := freshRelationWords(q.Paths[0], rng.IntN(3))
		q.Text = fill(freshTemplates[rng.IntN(len(freshTemplates))], "{head}", q.Head, "{rel}", strings.Join(words, " "))
		q.Para = fill(freshParaTemplates[rng.IntN(len(freshParaTemplates))], "{head}", q.Head, "{rel}", strings.Join(freshParaphrase(words), " "))
	}
	return qs
}
