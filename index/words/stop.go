package words

import (
	"slices"
	"strings"
)

// The stop words come in three lists, each analyser dropping the two its
// text needs:
//
//   - commonList: English function words that say nothing in any text;
//     queries and documents drop them.
//   - queryList: what queries also drop: the wording of requests and
//     commit subjects ("fix", "add", "update", "tell", "find", "new"), and
//     function words that a query wraps around what it asks ("can", "will",
//     "also", "whose"). Prose is about wanting, finding and new things, so
//     documents keep them, as bleve's English analyzer always did.
//   - documentList: what documents also drop: the rest of the Snowball
//     list that bleve ships as stop_en ("up", "down", "after", "out",
//     "again", "herself"). Queries keep them: a query's words are matched
//     against names, and names and titles are made of them ("Up", "After
//     Hours", "Out of Sight", "Down by Law").
//
// So a document's analyser drops commonList and documentList (Function:
// exactly bleve's stop_en, less its contractions, which no analyser can
// see: every analyser splits words at an apostrophe), a query's
// commonList and queryList (IsStop). Request wording that is also what
// prose is about ("support", "handle", "change", "know", "others", "may")
// is in queryList, the one list documents keep: in the documents' list
// too, it cost LoCoMo's evidence recall 0.015 at 400 tokens. All are
// generic English, never a data set's vocabulary; inflected forms are
// listed because words are tested before they are stemmed.
//
// Changing a list changes what the text index holds (bump text's schema
// version) and, for coreList, the lexical embedder's vectors (bump its
// version).
const commonList = `
a about all am an and any are as at be been being both but by could did do
does doing each few for from had has have having he her here hers him his how
i if in into is it its me more most my no nor not of on only or other our over
same she should so some such than that the their them then there these they
this those to too under very was we were what when where which who whom why
with would you your`

const queryList = `
also another can done either else every least less many might much must
neither one ones onto per shall us whats whose will without just
e eg g ie etc via vs
get gets got give gives given tell tells find finds show shows list lists
need needs want wants please let lets
fix fixes fixed fixing add adds added adding update updates updated updating
remove removes removed removing use uses used using
allow allows allowed rename renames renamed
move moves moved implement implements implemented refactor refactors refactored
improve improves improved
change changes changed changing handle handles handled make makes made
support supports supported know may others
new old`

const documentList = `
above after again against because before below between cannot down during
further herself himself itself myself off once ought ours ourselves out own
theirs themselves through until up while yours yourself yourselves`

// coreList is the core of the stop words: the commonest English function
// words (articles, the commonest prepositions and conjunctions, the forms
// of "be", "it"). They mean nothing in any text, so every analyser
// discounts them; the lexical embedder discounts only these (Core): a
// vector compares whole texts, where the other stop words ("show", "new",
// "find", "what") still tell one text from another, and discounting them
// there cost the relevance harness's MetaQA and code sets recall.
const coreList = `a an and are as at be by for from in into is it of on or the to with via`

func wordSet(lists ...string) map[string]struct{} {
	m := map[string]struct{}{}
	for _, l := range lists {
		for _, w := range strings.Fields(l) {
			m[w] = struct{}{}
		}
	}
	return m
}

var (
	stopSet     = wordSet(commonList, queryList)
	functionSet = wordSet(commonList, documentList)
)

// IsStop reports whether the lower-case word w is a stop word of a query:
// in commonList or queryList.
func IsStop(w string) bool {
	_, ok := stopSet[w]
	return ok
}

// Function returns the words a document's analyser drops (commonList and
// documentList), sorted, in a slice the caller owns.
func Function() []string { return sorted(functionSet) }

func sorted(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for w := range m {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// Core returns the core function words (coreList), sorted, in a slice the
// caller owns. Every core word is a stop word of queries.
func Core() []string {
	out := strings.Fields(coreList)
	slices.Sort(out)
	return out
}

// IsContent reports whether the lower-case word w can carry a query's
// meaning: not a stop word, at least two bytes, and holding a letter (a
// lone letter is a possessive's s or an initial; a number alone names
// nothing by itself).
func IsContent(w string) bool {
	return len(w) >= 2 && !IsStop(w) && hasLetter(w)
}

func hasLetter(s string) bool {
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r > 0x7f {
			return true
		}
	}
	return false
}
