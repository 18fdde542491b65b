package compose

import (
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/index/text"
)

// tokenRunIn is the verbatim test on token lists: run's tokens stand in
// toks as consecutive elements.
func tokenRunIn(toks, run []string) bool {
	if len(run) == 0 || len(run) > len(toks) {
		return false
	}
	for i := 0; i+len(run) <= len(toks); i++ {
		if slices.Equal(toks[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// checkRunIn compares runIn on joined tokens with tokenRunIn.
func checkRunIn(t *testing.T, query, name string) {
	t.Helper()
	qt, nt := text.SplitName(query), text.SplitName(name)
	q := " " + strings.Join(qt, " ") + " "
	if got, want := runIn(q, strings.Join(nt, " ")), tokenRunIn(qt, nt); got != want {
		t.Fatalf("runIn(%q, %q) = %v, on tokens %v (%q in %q)", query, name, got, want, nt, qt)
	}
}

// TestRunIn: a name is verbatim in a query exactly when its tokens are
// consecutive tokens of the query, whole tokens only.
func TestRunIn(t *testing.T) {
	queries := []string{"", "the screenwriter of Deep End", "Deep Ender", "endless deep end", "a-b c", "AuthService handler",
		"x deep end", "deep", "ünïcode Name here", "1. FC Köln lost", "end deep end"}
	names := []string{"", "Deep End", "The Deep End", "deep", "end", "eep en", "AuthService", "auth service", "a b", "b c",
		"FC Köln", "Name", "de", "ep End", "deep end deep"}
	for _, q := range queries {
		for _, n := range names {
			checkRunIn(t, q, n)
		}
	}
}

func FuzzRunIn(f *testing.F) {
	f.Add("the screenwriter of Deep End", "Deep End")
	f.Add("Deep Ender", "deep end")
	f.Add("a a a b", "a a b")
	f.Fuzz(func(t *testing.T, query, name string) { checkRunIn(t, query, name) })
}
