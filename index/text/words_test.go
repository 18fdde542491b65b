package text

import (
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/index/words"
)

// The description analyzer reads words as package words defines them: it
// drops exactly the function words and stems exactly like words.Stem, so
// a description term and the composer's stem of the same word are equal;
// request wording, which the composer drops from queries, is kept.
func TestTextAnalyzerUsesWords(t *testing.T) {
	for _, w := range words.Function() {
		if got := analyze(t, TextAnalyzer, w); got != nil {
			t.Errorf("%s(%q) = %q: a function word is indexed", TextAnalyzer, w, got)
		}
	}
	for _, w := range strings.Fields("want new find update") {
		if got := analyze(t, TextAnalyzer, w); !slices.Equal(got, []string{words.Stem(w)}) {
			t.Errorf("%s(%q) = %q: request wording is dropped from documents", TextAnalyzer, w, got)
		}
	}
	if len(functionWords) != len(words.Function()) {
		t.Errorf("the analyzer's token map has %d words, package words %d", len(functionWords), len(words.Function()))
	}
	for _, w := range strings.Fields("services directed director handlers languages genres running cafés 2010 birthplace") {
		want := []string{words.Stem(w)}
		if got := analyze(t, TextAnalyzer, w); !slices.Equal(got, want) {
			t.Errorf("%s(%q) = %q, want %q (words.Stem)", TextAnalyzer, w, got, want)
		}
	}
}

func TestAppendWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"getURLQuery", []string{"url", "queri"}}, // "get" is a stop word
		{"mux.Router.ServeHTTP", []string{"mux", "router", "serv", "http"}},
		{"has_genre in_language", []string{"genr", "languag"}},
		{"What are the LANGUAGES of the films?", []string{"languag", "film"}},
		{"IAuthProvider v2", []string{"auth", "provid", "v", "2"}},
		{"Élodie  Bouchez—actress", []string{"élodie", "bouchez", "actress"}},
		{"", nil},
	} {
		if got := AppendWords(nil, c.in); !slices.Equal(got, c.want) {
			t.Errorf("AppendWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A caller's slice is appended to, never rewritten.
	dst := []string{"keep"}
	if got := AppendWords(dst, "AuthService"); !slices.Equal(got, []string{"keep", "auth", "servic"}) || dst[0] != "keep" {
		t.Errorf("AppendWords(dst, ...) = %q", got)
	}
}
