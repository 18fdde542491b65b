package words

import (
	"slices"
	"strings"
)

// The stop words come in two tiers. functionList is English function
// words (the Snowball list that bleve ships as stop_en, less its
// contractions, which no analyser can see: every analyser splits words at
// an apostrophe, plus a few of the same kind): they say nothing in any
// text, so documents and queries alike drop them. requestList is the
// wording of requests and commit subjects ("fix", "add", "update",
// "tell", "find", "new"): it says nothing about what a query asks for, so
// queries drop it, but prose is about it ("she wants a new job"), so
// documents keep it. Both are generic English, never a data set's
// vocabulary. Inflected forms are listed because words are tested before
// they are stemmed.
//
// Request wording that is also what prose is about stays out of both:
// "support", "handle", "change", "make", "know", "others" (a support group,
// how someone handled an accident, helping others) and "may", a month:
// listed, they cost LoCoMo's evidence recall 0.015 at 400 tokens (the
// relevance harness), for no gain beyond noise on the other sets.
//
// Changing a list changes what the text index holds (bump text's schema
// version) and, for coreList, the lexical embedder's vectors (bump its
// version).
const functionList = `
a an the this that these those it its itself they them their theirs themselves
there here i me my myself we us our ours ourselves you your yours yourself
yourselves he him his himself she her hers herself
is are was were be been being am do does did done doing have has had having
of in on at by for to from with without into onto over under about as than then
above below between through during before after until while again once further
up down out off against because own ought cannot
and or but not no nor so if else also too very just only
what which who whom whose when where why how whats
can could would should will shall might must
all any some each every both either neither other another such same
one ones more most many much few less least
via per etc e g eg ie vs`

const requestList = `
get gets got give gives given tell tells find finds show shows list lists
need needs want wants please let lets
fix fixes fixed fixing add adds added adding update updates updated updating
remove removes removed removing use uses used using
allow allows allowed rename renames renamed
move moves moved implement implements implemented refactor refactors refactored
improve improves improved
new old`

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
	stopSet     = wordSet(functionList, requestList)
	functionSet = wordSet(functionList)
)

// IsStop reports whether the lower-case word w is a stop word of either
// tier: what a query's analyser drops.
func IsStop(w string) bool {
	_, ok := stopSet[w]
	return ok
}

// Function returns the function words, sorted, in a slice the caller owns.
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
// caller owns. Every core word is a function word.
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
