package words

import (
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestStopList(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range strings.Fields(functionList + " " + requestList) {
		if seen[w] {
			t.Errorf("%q listed twice", w)
		}
		seen[w] = true
		if w != strings.ToLower(w) {
			t.Errorf("%q is not lower case: words are tested lower-cased", w)
		}
		if strings.ContainsAny(w, `'’-_.`) {
			t.Errorf("%q holds a separator: no analyser can see it", w)
		}
	}
	if len(stopSet) != len(seen) {
		t.Fatalf("the stop set has %d words, the lists %d", len(stopSet), len(seen))
	}
	fn := Function()
	fn[0] = "changed"
	if Function()[0] == "changed" {
		t.Error("Function() shares its slice")
	}
	// The function words every analyser dropped before there was one list,
	// and the request words of the composer's: still stop words.
	for _, w := range strings.Fields("the of and with via is who which that fix add update tell between after") {
		if !IsStop(w) {
			t.Errorf("%q is not a stop word", w)
		}
	}
	// Words a question is about: never stop words.
	// Nor the request wording prose is about, and a month.
	for _, w := range strings.Fields("film director service router auth born de support handle change make made know others may") {
		if IsStop(w) {
			t.Errorf("%q is a stop word", w)
		}
	}
}

func TestStem(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"services", "servic"},
		{"service", "servic"},
		{"directed", "direct"},
		{"director", "director"},
		{"handles", "handl"},
		{"languages", "languag"},
		{"genres", "genr"},
		{"is", "is"},       // two letters: as is
		{"2010", "2010"},   // not letters
		{"cafés", "cafés"}, // not ASCII
		{"", ""},
	} {
		if got := Stem(c.in); got != c.want {
			t.Errorf("Stem(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestIsContent(t *testing.T) {
	for w, want := range map[string]bool{
		"auth": true, "s": false, "the": false, "2010": false, "v2": true,
		"東京": true, "fix": false, "": false,
	} {
		if got := IsContent(w); got != want {
			t.Errorf("IsContent(%q) = %v, want %v", w, got, want)
		}
	}
}

func BenchmarkStem(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Stem("implementations")
	}
}

// words is a leaf: the embedder, which links neither bleve nor the
// engine, imports it, so it may import no other package of the module.
func TestLeaf(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/kgctx/kgctx/") || strings.HasPrefix(p, "github.com/blevesearch/bleve") {
				t.Errorf("%s imports %s: package words is a leaf", e.Name(), p)
			}
		}
	}
}

// The tiers nest: core words are function words, function words are stop
// words; request words are stop words but not function words.
func TestTiers(t *testing.T) {
	fn := Function()
	if len(fn) == 0 || !slices.IsSorted(fn) {
		t.Fatalf("Function() = %v", fn)
	}
	for _, w := range fn {
		if _, in := functionSet[w]; !IsStop(w) || !in {
			t.Errorf("function word %q: IsStop %v, in the function set %v", w, IsStop(w), in)
		}
	}
	for _, w := range strings.Fields(requestList) {
		if _, in := functionSet[w]; !IsStop(w) || in {
			t.Errorf("request word %q: IsStop %v, in the function set %v", w, IsStop(w), in)
		}
	}
	if len(fn)+len(strings.Fields(requestList)) != len(stopSet) {
		t.Errorf("the tiers overlap or miss words: %d + %d != %d", len(fn), len(strings.Fields(requestList)), len(stopSet))
	}
}

// The core function words are function words: every analyser that drops
// or discounts the stop list also discounts the core.
func TestCoreInStop(t *testing.T) {
	core := Core()
	if len(core) == 0 || !slices.IsSorted(core) {
		t.Fatalf("Core() = %v", core)
	}
	for _, w := range core {
		if _, in := functionSet[w]; !in {
			t.Errorf("core word %q is not a function word", w)
		}
	}
}
