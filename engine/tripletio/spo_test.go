package tripletio

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine/model"
)

func readAllOf(t *testing.T, in string, f Format) ([]model.TripletInput, []*LineError, Format) {
	t.Helper()
	r, err := NewReader(strings.NewReader(in), f)
	if err != nil {
		t.Fatal(err)
	}
	ts, _, errs, _ := ReadBatch(r, nil, nil, 0)
	return ts, errs, r.Format()
}

func TestSPO(t *testing.T) {
	in := "# extracted\nerror:timeout|caused_by|tool:http_client\n\n auth_failure | resolved_by | token_refresh |0.8\nbad|line\n"
	ts, errs, f := readAllOf(t, in, Auto)
	if f != SPO {
		t.Fatalf("sniffed %v", f)
	}
	if len(ts) != 2 || ts[0].Source != "error:timeout" || ts[0].Relationship != "caused_by" || ts[1].Target != "token_refresh" || *ts[1].Weight != 0.8 {
		t.Fatalf("triplets %+v", ts)
	}
	if len(errs) != 1 || errs[0].Line != 5 || !errors.Is(errs[0], ErrInvalidRecord) {
		t.Fatalf("errors %v", errs)
	}
}

func TestNTriples(t *testing.T) {
	in := `# people
<http://example.org/people#alice> <http://xmlns.com/foaf/0.1/knows> <http://example.org/people/bob> .
_:b1 <http://purl.org/dc/terms/title> "Graph \"RAG\"\u00e9"@en .
<http://example.org/x/> <http://schema.org/dependsOn> "42"^^<http://www.w3.org/2001/XMLSchema#integer> . # trailing comment
<http://example.org/a> <http://example.org/p> .
`
	ts, errs, f := readAllOf(t, in, Auto)
	if f != NTriples {
		t.Fatalf("sniffed %v", f)
	}
	if len(ts) != 3 {
		t.Fatalf("%d triplets: %+v (%v)", len(ts), ts, errs)
	}
	a := ts[0]
	if a.Source != "alice" || a.Relationship != "knows" || a.Target != "bob" ||
		!slices.Equal(a.SourceAliases, []string{"http://example.org/people#alice"}) || !slices.Equal(a.TargetAliases, []string{"http://example.org/people/bob"}) {
		t.Fatalf("first: %+v", a)
	}
	if ts[1].Source != "_:b1" || ts[1].Relationship != "title" || ts[1].Target != `Graph "RAG"é` {
		t.Fatalf("second: %+v", ts[1])
	}
	if ts[2].Source != "x" || ts[2].Relationship != "dependsOn" || ts[2].Target != "42" {
		t.Fatalf("third: %+v", ts[2])
	}
	if len(errs) != 1 || errs[0].Line != 5 {
		t.Fatalf("errors: %v", errs)
	}
	for _, tr := range ts {
		tr := tr
		if err := model.ValidateTriplet(&tr, model.Limits{}, 0); err != nil {
			t.Fatalf("%+v: %v", tr, err)
		}
	}
}

func FuzzReader_SPO(f *testing.F) {
	f.Add("a|b|c\n")
	f.Add("a|b|c|0.5\nx|y\n")
	f.Fuzz(func(t *testing.T, in string) {
		r, err := NewReader(strings.NewReader(in), SPO)
		if err != nil {
			return
		}
		ts, _, _, _ := ReadBatch(r, nil, nil, 0)
		for _, tr := range ts {
			if strings.TrimSpace(tr.Source) == "" || strings.TrimSpace(tr.Relationship) == "" || strings.TrimSpace(tr.Target) == "" {
				t.Fatalf("blank field: %+v", tr)
			}
		}
	})
}

func FuzzReader_NTriples(f *testing.F) {
	f.Add("<http://a/b> <http://a/p> <http://a/c> .\n")
	f.Add("_:x <http://a/p> \"lit\\u0041\"@en .\n")
	f.Add("<a> <b> \"unterminated .\n")
	f.Fuzz(func(t *testing.T, in string) {
		r, err := NewReader(strings.NewReader(in), NTriples)
		if err != nil {
			return
		}
		ts, _, errs, _ := ReadBatch(r, nil, nil, 0)
		for _, tr := range ts {
			if strings.TrimSpace(tr.Source) == "" || strings.TrimSpace(tr.Relationship) == "" || strings.TrimSpace(tr.Target) == "" {
				t.Fatalf("blank field: %+v", tr)
			}
		}
		for _, e := range errs {
			if e.Line < 1 {
				t.Fatalf("error without a line: %v", e)
			}
		}
	})
}
