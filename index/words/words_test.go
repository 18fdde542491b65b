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
	for _, w := range strings.Fields(commonList + " " + queryList + " " + documentList) {
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
	if len(stopSet)+len(strings.Fields(documentList)) != len(seen) {
		t.Fatalf("the lists overlap: %d + %d words, %d in all", len(stopSet), len(strings.Fields(documentList)), len(seen))
	}
	fn := Function()
	fn[0] = "changed"
	if Function()[0] == "changed" {
		t.Error("Function() shares its slice")
	}
	// Queries drop function words and request wording, never the words
	// names are made of; documents drop function words and those.
	for _, w := range strings.Fields("the of and with via is who which that fix add update tell") {
		if !IsStop(w) {
			t.Errorf("%q is not a stop word of queries", w)
		}
	}
	for _, w := range strings.Fields("up down after out") {
		if _, doc := functionSet[w]; IsStop(w) || !doc {
			t.Errorf("%q: a stop word of queries %v, of documents %v", w, IsStop(w), doc)
		}
	}
	// Words a question is about: never stop words.
	for _, w := range strings.Fields("film director service router auth born de") {
		if _, doc := functionSet[w]; IsStop(w) || doc {
			t.Errorf("%q is a stop word", w)
		}
	}
	// The request wording prose is about, and a month: queries drop it,
	// documents keep it.
	for _, w := range strings.Fields("support handle change make made know others may") {
		if _, doc := functionSet[w]; !IsStop(w) || doc {
			t.Errorf("%q: dropped by queries %v, by documents %v", w, IsStop(w), doc)
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

// The lists split the words: common words are dropped by queries and
// documents, query words by queries only, document words by documents
// only.
func TestTiers(t *testing.T) {
	fn := Function()
	if len(fn) == 0 || !slices.IsSorted(fn) {
		t.Fatalf("Function() = %v", fn)
	}
	for list, want := range map[string][2]bool{commonList: {true, true}, queryList: {true, false}, documentList: {false, true}} {
		for _, w := range strings.Fields(list) {
			if _, doc := functionSet[w]; IsStop(w) != want[0] || doc != want[1] {
				t.Errorf("%q: dropped by queries %v, by documents %v; want %v", w, IsStop(w), doc, want)
			}
		}
	}
}

// The core function words are stop words of queries (the embedder reads
// queries and documents alike and discounts only them).
func TestCoreInStop(t *testing.T) {
	core := Core()
	if len(core) == 0 || !slices.IsSorted(core) {
		t.Fatalf("Core() = %v", core)
	}
	for _, w := range core {
		if !IsStop(w) {
			t.Errorf("core word %q is not a stop word", w)
		}
	}
}
