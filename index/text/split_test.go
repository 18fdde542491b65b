package text

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/registry"
)

func TestSplitName(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		// empty and separator-only
		{"", nil},
		{"   ", nil},
		{"_-./:", nil},
		{"\x00\xff\xfe", nil}, // invalid UTF-8 is a separator
		// CamelCase
		{"AuthService", []string{"auth", "service"}},
		{"authService", []string{"auth", "service"}},
		{"HTTPServer", []string{"http", "server"}},
		{"getHTTPServer", []string{"get", "http", "server"}},
		{"parseJSON2Go", []string{"parse", "json", "2", "go"}},
		{"XMLHttpRequest", []string{"xml", "http", "request"}},
		{"ID", []string{"id"}},
		{"userID", []string{"user", "id"}},
		{"URLs", []string{"urls"}},
		{"userIDs", []string{"user", "ids"}},
		{"IPv6Addr", []string{"ipv", "6", "addr"}},
		{"A", []string{"a"}},
		{"aB", []string{"a", "b"}},
		{"ABCDef", []string{"abc", "def"}},
		// digits
		{"sha256", []string{"sha", "256"}},
		{"v2", []string{"v", "2"}},
		{"x86_64", []string{"x", "86", "64"}},
		{"2fa", []string{"2", "fa"}},
		{"12345", []string{"12345"}},
		// snake, kebab, dots, slashes, colons, whitespace, punctuation
		{"auth_middleware.go", []string{"auth", "middleware", "go"}},
		{"__init__", []string{"init"}},
		{"SCREAMING_SNAKE_CASE", []string{"screaming", "snake", "case"}},
		{"kebab-case-name", []string{"kebab", "case", "name"}},
		{"pkg/http/router", []string{"pkg", "http", "router"}},
		{"std::vector<int>", []string{"std", "vector", "int"}},
		{"a.b.c", []string{"a", "b", "c"}},
		{"/m/027rn", []string{"m", "027", "rn"}},
		{"Barack Obama", []string{"barack", "obama"}},
		{"  leading and\ttrailing\n ", []string{"leading", "and", "trailing"}},
		{"O'Brien", []string{"o", "brien"}},
		{"foo(bar, baz)", []string{"foo", "bar", "baz"}},
		{"email@example.com", []string{"email", "example", "com"}},
		{"$HOME", []string{"home"}},
		// unicode
		{"Ærøskøbing", []string{"ærøskøbing"}},
		{"ÉcoleNormale", []string{"école", "normale"}},
		{"straßeName", []string{"straße", "name"}},
		{"ΑθήναCity", []string{"αθήνα", "city"}},
		{"МоскваRiver", []string{"москва", "river"}},
		{"東京Tower", []string{"東京", "tower"}},
		{"Tower東京", []string{"tower", "東京"}},
		{"サーバー設定", []string{"サーバー設定"}}, // caseless script, no split
		{"café", []string{"café"}},
		{"cafe\u0301Bar", []string{"cafe\u0301", "bar"}}, // combining accent stays with its letter
		{"\u0301x", []string{"x"}},                       // a mark cannot start a word
		{"ǅemal", []string{"ǆemal"}},                     // titlecase letter lowercased
		{"İstanbul", []string{"istanbul"}},
		{"x²", []string{"x", "²"}},
		{"naïve_approach", []string{"naïve", "approach"}},
		{"emoji😀name", []string{"emoji", "name"}},
	}
	for _, c := range cases {
		got := SplitName(c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("SplitName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// analyze runs a registered analyzer the way bleve does.
func analyze(t *testing.T, name, in string) []string {
	t.Helper()
	cache := registry.NewCache()
	an, err := cache.AnalyzerNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tok := range an.Analyze([]byte(in)) {
		out = append(out, string(tok.Term))
	}
	return out
}

func TestNameAnalyzer(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"AuthService", []string{"auth", "service", "authservice"}},
		{"auth", []string{"auth"}}, // single part: no duplicate whole term
		{"auth_middleware.go", []string{"auth", "middleware", "go", "authmiddlewarego"}},
		{"Barack Obama", []string{"barack", "obama", "barackobama"}},
		{"in", []string{"in"}}, // no stop words in names
		{"Routers", []string{"routers"}},
		{strings.Repeat("a", maxTermBytes+1), nil},                       // overlong term dropped
		{"ok_" + strings.Repeat("a", maxTermBytes+1), []string{"ok"}},    // and no whole term then
		{strings.Repeat("ab_", 150), slices.Repeat([]string{"ab"}, 150)}, // whole too long: dropped
		{strings.Repeat("ab_", 50), append(slices.Repeat([]string{"ab"}, 50), strings.Repeat("ab", 50))},
	}
	for _, c := range cases {
		got := analyze(t, NameAnalyzer, c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s(%q) = %q, want %q", NameAnalyzer, c.in, got, c.want)
		}
	}
}

func TestTextAnalyzer(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"city in Texas, United States", []string{"citi", "texa", "unit", "state"}},
		{"Serves requests for the AuthService", []string{"serv", "request", "auth", "servic", "authservic"}},
		{"Fixes requests", []string{"fix", "request"}}, // documents keep request wording (package words: queries drop it)
		{"wraps auth_middleware.go", []string{"wrap", "auth", "middlewar", "go", "authmiddlewarego"}},
		{"John's car", []string{"john", "car"}},
		{"John’s car", []string{"john", "car"}},
		{"the of and", nil},
	}
	for _, c := range cases {
		got := analyze(t, TextAnalyzer, c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s(%q) = %q, want %q", TextAnalyzer, c.in, got, c.want)
		}
	}
}

// The analyzer must never retain or modify its input.
func TestAnalyzerDoesNotMutateInput(t *testing.T) {
	cache := registry.NewCache()
	for _, name := range []string{NameAnalyzer, TextAnalyzer} {
		an, err := cache.AnalyzerNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		in := []byte("HTTPServer handles AuthService's REQUESTS")
		orig := string(in)
		toks := an.Analyze(in)
		if string(in) != orig {
			t.Fatalf("%s mutated its input: %q", name, in)
		}
		for i := range in {
			in[i] = 'X'
		}
		for _, tok := range toks {
			if strings.Contains(string(tok.Term), "x") {
				t.Fatalf("%s token %q aliases the input", name, tok.Term)
			}
		}
	}
}

func FuzzSplitName(f *testing.F) {
	for _, s := range []string{
		"", "AuthService", "HTTPServer", "parseJSON2Go", "auth_middleware.go", "/m/027rn",
		"東京Tower", "cafe\u0301Bar", "ǅemal", "İstanbul", "URLs", "IPv6", "\xff\xfe", "x²½Ⅻ",
	} {
		f.Add(s)
	}
	cache := registry.NewCache()
	nameAn, err := cache.AnalyzerNamed(NameAnalyzer)
	if err != nil {
		f.Fatal(err)
	}
	textAn, err := cache.AnalyzerNamed(TextAnalyzer)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := SplitName(s)
		for _, tok := range toks {
			if tok == "" {
				t.Fatalf("SplitName(%q): empty token in %q", s, toks)
			}
			if strings.ToLower(tok) != tok {
				t.Fatalf("SplitName(%q): token %q is not lowercase", s, tok)
			}
			if !utf8.ValidString(tok) {
				t.Fatalf("SplitName(%q): token %q is not valid UTF-8", s, tok)
			}
		}
		for _, tok := range nameAn.Analyze([]byte(s)) {
			if len(tok.Term) == 0 || len(tok.Term) > maxTermBytes || strings.ToLower(string(tok.Term)) != string(tok.Term) {
				t.Fatalf("%s(%q): bad term %q", NameAnalyzer, s, tok.Term)
			}
		}
		for _, tok := range textAn.Analyze([]byte(s)) {
			if len(tok.Term) == 0 {
				t.Fatalf("%s(%q): empty term", TextAnalyzer, s)
			}
		}
	})
}
