package engine

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/internal/datasets"
)

// TestRelationshipLimit (defect 13): a relationship may be as long as a
// name, 1,024 bytes; it round-trips through import, reopen, query, export
// and re-import; one byte more is refused, naming the limit, and writes
// nothing.
func TestRelationshipLimit(t *testing.T) {
	s, dir := openTest(t, nil)
	rel := strings.Repeat("abc_", 256)[:1023] + "z" // its own snake_case form
	if len(rel) != 1024 || NormalizeRelationship(rel) != rel {
		t.Fatalf("fixture: %d bytes", len(rel))
	}
	mustImport(t, s, tenA, tr("src", rel, "dst"))

	before, _ := s.Stats(tenA)
	for _, c := range []struct{ rel, msg string }{
		{rel + "z", "relationship is 1025 bytes, over the limit of 1024"},
		// 1,024 bytes whose snake_case form, the name stored and exported,
		// is 1,536: refused too, or the export could not be imported back.
		{strings.Repeat("aB", 512), "relationship is 1536 bytes in snake_case form, over the limit of 1024"},
	} {
		_, err := s.Import(context.Background(), tenA, []TripletInput{tr("src", "calls", "dst"), tr("src", c.rel, "other")}, ImportOptions{})
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), c.msg) || len(ve.Lines) != 1 || ve.Lines[0].Line != 2 {
			t.Errorf("%d-byte relationship: %v, want a validation error of line 2 saying %q", len(c.rel), err, c.msg)
		}
		s.View(func(v *View) error {
			if _, ok := v.RelID(NormalizeRelationship(c.rel)); ok {
				t.Errorf("refused relationship was registered")
			}
			if _, ok := v.RelID("calls"); ok {
				t.Errorf("the valid line of a refused batch was written")
			}
			return nil
		})
		if after, _ := s.Stats(tenA); after.Nodes != before.Nodes || after.Triplets != before.Triplets {
			t.Errorf("store changed: %+v -> %+v", before, after)
		}
	}
	// A long camelCase name whose snake_case form fits is accepted.
	camel := strings.Repeat("aB", 256) // 512 bytes, 768 in snake_case
	mustImport(t, s, tenA, tr("src", camel, "dst"))

	s = reopen(t, s, dir, nil)
	for _, q := range []string{rel, camel} {
		got, err := s.QueryTriplets(tenA, TripletQuery{Predicate: q})
		if err != nil || len(got) != 1 || got[0].Relationship != NormalizeRelationship(q) || got[0].Source != "src" {
			t.Errorf("query by %d-byte predicate: %+v, %v", len(q), got, err)
		}
	}
	var exported []TripletInput
	if err := s.ExportTriplets(tenA, func(in *TripletInput) error { exported = append(exported, *in); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(exported) != 2 || exported[0].Relationship != rel {
		t.Fatalf("export: %+v", exported)
	}
	if res := mustImport(t, s, tenB, exported...); res.EdgesCreated != 2 {
		t.Errorf("re-import of the export: %+v", res)
	}
}

// TestImportFB15kRawRelations imports one triplet per distinct raw relation
// path of FB15k-237's train split (the longest is 146 bytes, which the old
// limit of 128 refused) and expects every one stored under its snake_case
// form.
func TestImportFB15kRawRelations(t *testing.T) {
	root, err := datasets.Find("")
	if err != nil {
		t.Skipf("%v; skipping the real-data test", err)
	}
	f, err := os.Open(filepath.Join(root, "fb15k-237", "train.txt.gz"))
	if err != nil {
		t.Skipf("fb15k-237 train split: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var in []TripletInput
	longest := 0
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		h, r, tl := splitTSV(sc.Text())
		if r == "" || seen[r] {
			continue
		}
		seen[r] = true
		longest = max(longest, len(r))
		in = append(in, tr(h, r, tl))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(in) != 237 || longest != 146 {
		t.Fatalf("%d relations, the longest %d bytes; the dataset has 237, the longest 146", len(in), longest)
	}
	s, err := Open("", &Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Import(context.Background(), tenA, in, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.EdgesCreated != 237 {
		t.Errorf("%+v", res)
	}
	s.View(func(v *View) error {
		for _, x := range in {
			if r, ok := v.RelID(NormalizeRelationship(x.Relationship)); !ok || v.RelEdges(r).GetCardinality() != 1 {
				t.Errorf("relationship %q not stored once", x.Relationship)
			}
		}
		return nil
	})
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// splitTSV splits a head<TAB>relation<TAB>tail line (CRLF tolerated).
func splitTSV(line string) (h, r, t string) {
	f := strings.Split(strings.TrimRight(line, "\r"), "\t")
	if len(f) != 3 {
		return "", "", ""
	}
	return f[0], f[1], f[2]
}
