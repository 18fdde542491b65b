package text

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

func openMem(t testing.TB, opts Options) *Index {
	t.Helper()
	ix, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

func mustUpsert(t testing.TB, ix *Index, docs ...Doc) {
	t.Helper()
	if err := ix.Upsert(docs); err != nil {
		t.Fatal(err)
	}
}

func srch(t testing.TB, ix *Index, q string, k int, f Filter) []Hit {
	t.Helper()
	hits, err := ix.Search(nil, q, k, f)
	if err != nil {
		t.Fatalf("Search(%q, %d, %+v): %v", q, k, f, err)
	}
	for i := 1; i < len(hits); i++ {
		if compareHits(hits[i-1], hits[i]) >= 0 {
			t.Fatalf("Search(%q): hits not ordered by score desc, id asc: %+v", q, hits)
		}
	}
	return hits
}

func ids(hits []Hit) []uint32 {
	out := make([]uint32, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

var acme = Filter{Org: "acme", Project: "web"}

// eachScopeMode runs f with the tenant restriction as chosen per segment
// (none in segments entirely inside the tenant) and forced on every match.
func eachScopeMode(t *testing.T, f func(t *testing.T)) {
	for _, force := range []bool{false, true} {
		name := "auto"
		if force {
			name = "filter"
		}
		t.Run(name, func(t *testing.T) {
			defer func(old bool) { forceTenantFilter = old }(forceTenantFilter)
			forceTenantFilter = force
			f(t)
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{BatchSize: -1}, {BatchSize: MaxBatchSize + 1}, {Path: "  "}} {
		if err := o.Validate(); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: Validate() = %v, want ErrInvalidOptions", o, err)
		}
		if _, err := Open(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: Open() = %v, want ErrInvalidOptions", o, err)
		}
	}
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
}

func TestSearchNameMatching(t *testing.T) {
	ix := openMem(t, Options{})
	mustUpsert(t, ix,
		Doc{ID: 1, Org: "acme", Project: "web", Name: "AuthMiddleware", Type: "struct"},
		Doc{ID: 2, Org: "acme", Project: "web", Name: "auth_middleware.go", Type: "file"},
		Doc{ID: 3, Org: "acme", Project: "web", Name: "RequestLogger", Type: "struct",
			Description: "Logging middleware that records each request"},
		Doc{ID: 4, Org: "acme", Project: "web", Name: "AuthService", Type: "struct",
			Description: "Issues and validates tokens"},
		Doc{ID: 5, Org: "acme", Project: "web", Name: "pkg/http/router", Type: "package"},
		Doc{ID: 6, Org: "acme", Project: "web", Name: "Database", Type: "struct"},
		Doc{ID: 7, Org: "acme", Project: "web", Name: "AuthServiceTest", Type: "function"},
		Doc{ID: 8, Org: "acme", Project: "web", Name: "Kerberos", Aliases: []string{"KerberosAuth", "krb5"}},
	)

	hits := srch(t, ix, "fix null pointer in auth middleware", 10, acme)
	got := ids(hits)
	for _, want := range []uint32{1, 2, 3} {
		if !slices.Contains(got, want) {
			t.Errorf("auth middleware: %d missing from %v", want, got)
		}
	}
	if got[0] != 1 {
		t.Errorf("auth middleware: top hit %d, want AuthMiddleware (1): %+v", got[0], hits)
	}
	if slices.Contains(got, 6) {
		t.Errorf("auth middleware: Database matched: %v", got)
	}

	// The exact name outranks names that merely contain the same words.
	for _, q := range []string{"AuthService", "auth service", "authservice", "AUTH_SERVICE"} {
		hits := srch(t, ix, q, 3, acme)
		if len(hits) == 0 || hits[0].ID != 4 {
			t.Errorf("%q: top %v, want AuthService (4)", q, hits)
		}
	}
	// Paths and aliases.
	if hits := srch(t, ix, "http router", 1, acme); len(hits) != 1 || hits[0].ID != 5 {
		t.Errorf("http router: %v", hits)
	}
	if hits := srch(t, ix, "krb5", 5, acme); len(hits) != 1 || hits[0].ID != 8 {
		t.Errorf("krb5 alias: %v", hits)
	}
	if hits := srch(t, ix, "kerberos auth", 1, acme); len(hits) != 1 || hits[0].ID != 8 {
		t.Errorf("kerberos auth alias: %v", hits)
	}
	// Description stemming: "validating token" meets "validates tokens".
	if hits := srch(t, ix, "validating token", 1, acme); len(hits) != 1 || hits[0].ID != 4 {
		t.Errorf("stemmed description: %v", hits)
	}
	// Type participates (weakly).
	if hits := srch(t, ix, "package", 10, acme); len(hits) != 1 || hits[0].ID != 5 {
		t.Errorf("type: %v", hits)
	}
	// Nothing to match.
	for _, q := range []string{"", "   ", "!!!", "zzzz"} {
		if hits := srch(t, ix, q, 10, acme); len(hits) != 0 {
			t.Errorf("%q: %v, want none", q, hits)
		}
	}
	// k bounds.
	if hits := srch(t, ix, "auth", 0, acme); len(hits) != 0 {
		t.Errorf("k=0: %v", hits)
	}
	if hits := srch(t, ix, "auth", 2, acme); len(hits) != 2 {
		t.Errorf("k=2: %v", hits)
	}
	if hits := srch(t, ix, "auth", MaxK*10, acme); len(hits) != 5 {
		t.Errorf("k huge: %v", hits)
	}
}

// BM25 properties, checked on the description field alone.
func TestBM25Ranking(t *testing.T) {
	ix := openMem(t, Options{})
	var docs []Doc
	// 40 filler docs: "common" occurs everywhere, "rare" once.
	for i := range 40 {
		docs = append(docs, Doc{ID: uint32(100 + i), Org: "o", Project: "p",
			Description: fmt.Sprintf("common filler%d words%d", i, i)})
	}
	docs = append(docs,
		// IDF: a doc matching a rare term beats one matching a common term.
		Doc{ID: 1, Org: "o", Project: "p", Description: "rare alpha beta"},
		Doc{ID: 2, Org: "o", Project: "p", Description: "common alpha beta"},
		// Length normalisation: same single match, short vs long.
		Doc{ID: 3, Org: "o", Project: "p", Description: "needle short"},
		Doc{ID: 4, Org: "o", Project: "p", Description: "needle " + strings.Repeat("hay stack pile heap mound ", 6)},
		// TF saturation: 1, 4 and 64 occurrences, same length.
		Doc{ID: 5, Org: "o", Project: "p", Description: "sat " + strings.Repeat("pad ", 63)},
		Doc{ID: 6, Org: "o", Project: "p", Description: strings.Repeat("sat ", 4) + strings.Repeat("pad ", 60)},
		Doc{ID: 7, Org: "o", Project: "p", Description: strings.Repeat("sat ", 64)},
	)
	mustUpsert(t, ix, docs...)
	f := Filter{Org: "o", Project: "p"}

	hits := srch(t, ix, "rare common", 50, f)
	if hits[0].ID != 1 {
		t.Errorf("rare term: top %d, want 1: %v", hits[0].ID, hits[:3])
	}
	hits = srch(t, ix, "needle", 10, f)
	if len(hits) != 2 || hits[0].ID != 3 || !(hits[0].Score > hits[1].Score) {
		t.Errorf("length norm: %v, want 3 strictly above 4", hits)
	}
	hits = srch(t, ix, "sat", 10, f)
	if !slices.Equal(ids(hits), []uint32{7, 6, 5}) {
		t.Fatalf("tf: %v, want 7, 6, 5", hits)
	}
	// bleve scores a term as idf * tf*k1 / (tf + k1*norm(len)) with
	// tf = sqrt(freq): at equal length, s(tf) = C * tf/(tf+c). TF-IDF
	// would be linear in tf (s64/s1 = 8). Solve c from s4/s1 and check that
	// s64/s1 follows the saturating curve, and stays below linear.
	s64, s4, s1 := hits[0].Score, hits[1].Score, hits[2].Score
	r2 := s4 / s1
	c := 2 * (r2 - 1) / (2 - r2)
	if want, got := 8*(1+c)/(8+c), s64/s1; c <= 0 || math.Abs(got-want) > 1e-4*want || got >= 8 {
		t.Errorf("tf saturation: s64/s1 = %.4f, BM25 predicts %.4f (c=%.3f); TF-IDF would be 8", got, want, c)
	}

	// And bleve says so: the explanation names the bm25 model.
	mq := query.NewMatchQuery("needle")
	mq.SetField(fieldDesc)
	req := bleve.NewSearchRequestOptions(mq, 1, 0, true)
	res, err := ix.bi.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Expl.String(), "bm25") {
		t.Errorf("explanation does not mention bm25: %v", res.Hits)
	}
}

// Scores are text-only: the tenant filter adds nothing, so the same query
// scores the same doc identically through an org-wide and a project filter.
func TestFilterDoesNotScore(t *testing.T) {
	ix := openMem(t, Options{})
	mustUpsert(t, ix,
		Doc{ID: 1, Org: "o", Project: "p", Name: "AuthService"},
		Doc{ID: 2, Org: "o", Project: "q", Name: "Other"},
	)
	var ref Hit
	defer func() { forceTenantFilter = false }()
	for _, mode := range []bool{false, true} {
		forceTenantFilter = mode
		for _, f := range []Filter{{Org: "o", Project: "p"}, {Org: "o"}, {Org: "o", Allow: roaring.BitmapOf(1)}} {
			h := srch(t, ix, "auth", 1, f)
			if len(h) != 1 {
				t.Fatalf("mode %v %+v: %v", mode, f, h)
			}
			if ref == (Hit{}) {
				ref = h[0]
			}
			if h[0] != ref {
				t.Errorf("mode %v %+v: %v, want %v", mode, f, h[0], ref)
			}
		}
	}
}

func TestTenantIsolation(t *testing.T) {
	eachScopeMode(t, func(t *testing.T) {
		ix := openMem(t, Options{})
		mustUpsert(t, ix,
			Doc{ID: 1, Org: "a", Project: "x", Name: "SharedName"},
			Doc{ID: 2, Org: "a", Project: "y", Name: "SharedName"},
			Doc{ID: 3, Org: "a", Project: "", Name: "SharedName"},
			Doc{ID: 4, Org: "b", Project: "x", Name: "SharedName"},
			Doc{ID: 5, Org: "b", Project: "y", Name: "SharedName"},
			// scope keys that would collide under naive concatenation
			Doc{ID: 6, Org: "ab", Project: "c", Name: "SharedName"},
			Doc{ID: 7, Org: "a", Project: "bc", Name: "SharedName"},
			Doc{ID: 8, Org: "A", Project: "x", Name: "SharedName"}, // orgs are case-sensitive keywords
		)
		cases := []struct {
			f    Filter
			want []uint32
		}{
			{Filter{Org: "a", Project: "x"}, []uint32{1}},
			{Filter{Org: "a", Project: "y"}, []uint32{2}},
			{Filter{Org: "a"}, []uint32{1, 2, 3, 7}},
			{Filter{Org: "b"}, []uint32{4, 5}},
			{Filter{Org: "b", Project: "x"}, []uint32{4}},
			{Filter{Org: "ab"}, []uint32{6}},
			{Filter{Org: "ab", Project: "c"}, []uint32{6}},
			{Filter{Org: "a", Project: "bc"}, []uint32{7}},
			{Filter{Org: "A"}, []uint32{8}},
			{Filter{Org: "c"}, nil},
			{Filter{Org: "a", Project: "z"}, nil},
			{Filter{Org: "b", Allow: roaring.BitmapOf(1, 2, 3, 4)}, []uint32{4}},
		}
		for _, c := range cases {
			got := ids(srch(t, ix, "shared name", 100, c.f))
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("%+v: got %v, want %v", c.f, got, c.want)
			}
		}
		// A doc moved to another tenant leaves the old one.
		mustUpsert(t, ix, Doc{ID: 1, Org: "b", Project: "x", Name: "SharedName"})
		if got := ids(srch(t, ix, "shared", 10, Filter{Org: "a", Project: "x"})); len(got) != 0 {
			t.Errorf("moved doc still in old tenant: %v", got)
		}
		got := ids(srch(t, ix, "shared", 10, Filter{Org: "b", Project: "x"}))
		if !slices.Equal(got, []uint32{1, 4}) {
			t.Errorf("moved doc in new tenant: %v", got)
		}
	})
}

func TestInvalidTenant(t *testing.T) {
	ix := openMem(t, Options{})
	for _, d := range []Doc{{ID: 1, Name: "x"}, {ID: 1, Org: "a\x00b", Name: "x"}, {ID: 1, Org: "a", Project: "\x00", Name: "x"}} {
		if err := ix.Upsert([]Doc{{ID: 9, Org: "ok", Name: "fine"}, d}); !errors.Is(err, ErrInvalidTenant) {
			t.Errorf("Upsert(%+v) = %v, want ErrInvalidTenant", d, err)
		}
	}
	// nothing of a rejected call was written
	if n, _ := ix.DocCount(); n != 0 {
		t.Errorf("DocCount after rejected upserts = %d", n)
	}
	for _, f := range []Filter{{}, {Project: "p"}, {Org: "a\x00"}} {
		if _, err := ix.Search(nil, "x", 1, f); !errors.Is(err, ErrInvalidTenant) {
			t.Errorf("Search(%+v) = %v, want ErrInvalidTenant", f, err)
		}
	}
}

func TestUpsertReplaceAndDelete(t *testing.T) {
	ix := openMem(t, Options{})
	mustUpsert(t, ix,
		Doc{ID: 1, Org: "acme", Project: "web", Name: "OldName"},
		Doc{ID: 2, Org: "acme", Project: "web", Name: "Keeper"},
		Doc{ID: 3, Org: "acme", Project: "web", Name: "Doomed"},
	)
	mustUpsert(t, ix, Doc{ID: 1, Org: "acme", Project: "web", Name: "NewName"})
	if hits := srch(t, ix, "old", 10, acme); len(hits) != 0 {
		t.Errorf("replaced name still found: %v", hits)
	}
	if hits := srch(t, ix, "new name", 10, acme); len(hits) != 1 || hits[0].ID != 1 {
		t.Errorf("new name: %v", hits)
	}
	if err := ix.Delete([]uint32{3, 99}); err != nil {
		t.Fatal(err)
	}
	if hits := srch(t, ix, "doomed", 10, acme); len(hits) != 0 {
		t.Errorf("deleted doc found: %v", hits)
	}
	if n, err := ix.DocCount(); err != nil || n != 2 {
		t.Errorf("DocCount = %d, %v; want 2", n, err)
	}
	// Last write wins inside one call; deletes win over upserts.
	if err := ix.Upsert([]Doc{
		{ID: 5, Org: "acme", Project: "web", Name: "First"},
		{ID: 5, Org: "acme", Project: "web", Name: "Second"},
	}); err != nil {
		t.Fatal(err)
	}
	if got := ids(srch(t, ix, "first second", 10, acme)); !slices.Equal(got, []uint32{5}) {
		t.Errorf("dup ids: %v", got)
	}
	if hits := srch(t, ix, "first", 10, acme); len(hits) != 0 {
		t.Errorf("first version of dup id survived: %v", hits)
	}
	if err := ix.UpsertWithMeta([]Doc{{ID: 6, Org: "acme", Project: "web", Name: "Ghost"}}, []uint32{6}, "wm", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if hits := srch(t, ix, "ghost", 10, acme); len(hits) != 0 {
		t.Errorf("upserted-and-deleted doc found: %v", hits)
	}
}

// Small batches: an upsert spanning many bleve batches, with deletes and a
// meta write landing in the last one.
func TestBatchSplitting(t *testing.T) {
	ix := openMem(t, Options{BatchSize: 7})
	var docs []Doc
	for i := range 100 {
		docs = append(docs, Doc{ID: uint32(i), Org: "o", Project: "p", Name: fmt.Sprintf("Item%d", i), Description: "widget"})
	}
	if err := ix.UpsertWithMeta(docs, []uint32{0, 1, 2, 50}, "wm", []byte("100")); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.DocCount(); n != 96 {
		t.Errorf("DocCount = %d, want 96", n)
	}
	hits := srch(t, ix, "widget", 200, Filter{Org: "o"})
	if len(hits) != 96 || slices.Contains(ids(hits), 50) {
		t.Errorf("widget: %d hits", len(hits))
	}
	if v, err := ix.GetMeta("wm"); err != nil || string(v) != "100" {
		t.Errorf("meta = %q, %v", v, err)
	}
}

// Equal scores are ordered by ID, including across the k cut: the k
// returned are the k smallest IDs among the tied docs, whatever the
// insertion order (bleve itself breaks ties by internal doc number).
func TestTieBreakByID(t *testing.T) {
	eachScopeMode(t, func(t *testing.T) {
		ix := openMem(t, Options{BatchSize: 16})
		perm := rand.New(rand.NewPCG(1, 2)).Perm(200)
		var docs []Doc
		for _, p := range perm {
			docs = append(docs, Doc{ID: uint32(1000 + p), Org: "o", Project: "p", Name: "TwinName"})
		}
		mustUpsert(t, ix, docs...)
		for _, k := range []int{1, 10, 63, 199, 200, 500} {
			got := ids(srch(t, ix, "twin name", k, Filter{Org: "o", Project: "p"}))
			want := make([]uint32, min(k, 200))
			for i := range want {
				want[i] = uint32(1000 + i)
			}
			if !slices.Equal(got, want) {
				t.Errorf("k=%d: got %v, want %v", k, got, want)
			}
		}
	})
}

func TestAllowFilter(t *testing.T) {
	eachScopeMode(t, func(t *testing.T) {
		ix := openMem(t, Options{})
		rng := rand.New(rand.NewPCG(3, 4))
		words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
		var docs []Doc
		for i := range 2000 {
			var b strings.Builder
			for range 1 + rng.IntN(6) {
				b.WriteString(words[rng.IntN(len(words))])
				b.WriteByte(' ')
			}
			org := "o"
			if i%10 == 0 {
				org = "other"
			}
			docs = append(docs, Doc{ID: uint32(i), Org: org, Project: "p", Name: fmt.Sprintf("Node%d", i), Description: b.String()})
		}
		mustUpsert(t, ix, docs...)
		f := Filter{Org: "o", Project: "p"}
		all := srch(t, ix, "alpha gamma", MaxK, f)
		if len(all) == 0 {
			t.Fatal("no hits")
		}

		for _, n := range []int{0, 1, 5, 256, 257, 700, 2000} {
			allow := roaring.New()
			for _, i := range rng.Perm(2000)[:n] {
				allow.Add(uint32(i))
			}
			var want []Hit
			for _, h := range all {
				if allow.Contains(h.ID) {
					want = append(want, h)
				}
			}
			for _, k := range []int{1, 10, 100} {
				fa := f
				fa.Allow = allow
				got := srch(t, ix, "alpha gamma", k, fa)
				w := want[:min(k, len(want))]
				if !slices.Equal(got, w) {
					t.Errorf("allow %d ids, k=%d: got %d hits %v..., want %d %v...", n, k, len(got), got[:min(3, len(got))], len(w), w[:min(3, len(w))])
				}
			}
		}
		// Other orgs' ids in the allow-list change nothing.
		other := roaring.BitmapOf(0, 10, 20)
		if got := srch(t, ix, "alpha gamma beta delta epsilon zeta eta theta", 10, Filter{Org: "o", Allow: other}); len(got) != 0 {
			t.Errorf("allow-list leaked another org: %v", got)
		}
	})
}

func TestDstReuse(t *testing.T) {
	ix := openMem(t, Options{})
	mustUpsert(t, ix, Doc{ID: 1, Org: "o", Name: "Alpha"}, Doc{ID: 2, Org: "o", Name: "AlphaBeta"})
	dst := make([]Hit, 5, 16)
	got, err := ix.Search(dst, "alpha", 10, Filter{Org: "o"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || &got[0] != &dst[0] {
		t.Errorf("dst not reused: %v", got)
	}
	allocs := testing.AllocsPerRun(50, func() { got, _ = ix.Search(got, "alpha", 10, Filter{Org: "o"}) })
	t.Logf("allocations per search: %.0f", allocs)
}

func TestMeta(t *testing.T) {
	ix := openMem(t, Options{})
	if _, err := ix.GetMeta("wm"); !errors.Is(err, ErrMetaNotFound) {
		t.Errorf("GetMeta(missing) = %v, want ErrMetaNotFound", err)
	}
	val := []byte("watermark-42")
	if err := ix.SetMeta("wm", val); err != nil {
		t.Fatal(err)
	}
	val[0] = 'X' // the index holds its own copy
	got, err := ix.GetMeta("wm")
	if err != nil || string(got) != "watermark-42" {
		t.Fatalf("GetMeta = %q, %v", got, err)
	}
	got[0] = 'Y' // and hands out copies
	if again, _ := ix.GetMeta("wm"); string(again) != "watermark-42" {
		t.Errorf("GetMeta result aliases the index: %q", again)
	}
	for _, v := range [][]byte{nil, {}} {
		if err := ix.SetMeta("empty", v); err != nil {
			t.Fatal(err)
		}
		if got, err := ix.GetMeta("empty"); err != nil || got == nil || len(got) != 0 {
			t.Errorf("empty meta = %q (nil %v), %v", got, got == nil, err)
		}
	}
	if err := ix.DeleteMeta("wm"); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.GetMeta("wm"); !errors.Is(err, ErrMetaNotFound) {
		t.Errorf("after DeleteMeta: %v", err)
	}
	for _, err := range []error{ix.SetMeta("", nil), ix.DeleteMeta(""), ix.UpsertWithMeta(nil, nil, "", nil)} {
		if !errors.Is(err, ErrInvalidMetaKey) {
			t.Errorf("empty key: %v", err)
		}
	}
	// Meta keys do not show up as documents or collide with the schema stamp.
	if err := ix.SetMeta("../text/schema", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.DocCount(); n != 0 {
		t.Errorf("DocCount = %d", n)
	}
}

func TestClosed(t *testing.T) {
	ix, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	checks := map[string]error{
		"Close":   ix.Close(),
		"Upsert":  ix.Upsert([]Doc{{ID: 1, Org: "o"}}),
		"Delete":  ix.Delete([]uint32{1}),
		"SetMeta": ix.SetMeta("k", nil),
	}
	_, checks["Search"] = ix.Search(nil, "x", 1, Filter{Org: "o"})
	_, checks["DocCount"] = ix.DocCount()
	_, checks["GetMeta"] = ix.GetMeta("k")
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

func TestDurability(t *testing.T) {
	dir := t.TempDir() + "/idx"
	ix, err := Open(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	var docs []Doc
	for i := range 500 {
		docs = append(docs, Doc{ID: uint32(i), Org: "o", Project: "p", Name: fmt.Sprintf("Service%d", i), Description: "persistent thing"})
	}
	if err := ix.UpsertWithMeta(docs, nil, "wm", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	ix, err = Open(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.DocCount(); n != 500 {
		t.Errorf("reopened DocCount = %d", n)
	}
	if hits := srch(t, ix, "service42", 1, Filter{Org: "o", Project: "p"}); len(hits) != 1 || hits[0].ID != 42 {
		t.Errorf("reopened search: %v", hits)
	}
	if v, err := ix.GetMeta("wm"); err != nil || string(v) != "v1" {
		t.Errorf("reopened meta = %q, %v", v, err)
	}
	if err := ix.UpsertWithMeta(nil, []uint32{42}, "wm", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	ix, err = Open(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if hits := srch(t, ix, "service42", 1000, Filter{Org: "o", Project: "p"}); len(hits) != 499 || slices.Contains(ids(hits), 42) {
		t.Errorf("deleted doc back after reopen: %d hits", len(hits))
	}
	if n, _ := ix.DocCount(); n != 499 {
		t.Errorf("DocCount after delete+reopen = %d", n)
	}
	if v, _ := ix.GetMeta("wm"); string(v) != "v2" {
		t.Errorf("meta after reopen = %q", v)
	}
}

// A reopened index written with another schema is refused.
func TestSchemaMismatch(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustUpsert(t, ix, Doc{ID: 1, Org: "o", Name: "x"})
	if err := ix.bi.SetInternal([]byte(schemaKey), []byte("kgctx-text-0")); err != nil {
		t.Fatal(err)
	}
	_ = ix.Close()
	if _, err := Open(Options{Path: dir}); !errors.Is(err, ErrSchemaMismatch) {
		t.Errorf("Open = %v, want ErrSchemaMismatch", err)
	}
}

// Concurrent searches with writes (run with -race).
func TestConcurrentSearchAndWrite(t *testing.T) {
	ix := openMem(t, Options{BatchSize: 64})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			var dst []Hit
			var err error
			for {
				select {
				case <-stop:
					return
				default:
				}
				dst, err = ix.Search(dst, "concurrent widget", 10, Filter{Org: "o"})
				if err != nil {
					t.Error(err)
					return
				}
				_ = w
			}
		})
	}
	for round := range 20 {
		var docs []Doc
		for i := range 100 {
			docs = append(docs, Doc{ID: uint32(round*100 + i), Org: "o", Project: "p", Name: "ConcurrentWidget"})
		}
		mustUpsert(t, ix, docs...)
		if err := ix.Delete([]uint32{uint32(round * 100)}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if n, _ := ix.DocCount(); n != 20*99 {
		t.Errorf("DocCount = %d", n)
	}
	if !bytes.Equal([]byte(docID(0x01020304)), []byte{1, 2, 3, 4}) {
		t.Error("docID is not big-endian")
	}
}

// TestScoresIndependentOfDocOrder: a document's score is the same to the
// last bit whatever other documents come before it in its segment, so
// equal documents tie and break by ID however the index was written. The
// scores used to sum a document's term scores in an order that depended
// on which terms' postings had ended before it in its segment. (Both
// indexes here are one segment of the same documents, numbered in two
// orders, so their collection statistics are equal.)
func TestScoresIndependentOfDocOrder(t *testing.T) {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	r := rand.New(rand.NewPCG(7, 11))
	var names []string
	for range 400 {
		var name []string
		for range 2 + r.IntN(6) {
			name = append(name, words[r.IntN(len(words))])
		}
		names = append(names, strings.Join(name, " "))
	}
	// Document i is names[i] in a, names[perm[i]] in b: the same
	// documents, numbered in two orders.
	perm := r.Perm(len(names))
	var da, db []Doc
	for i := range names {
		da = append(da, Doc{ID: uint32(i + 1), Org: "o", Project: "p", Name: names[i]})
		db = append(db, Doc{ID: uint32(i + 1), Org: "o", Project: "p", Name: names[perm[i]]})
	}
	a, b := openMem(t, Options{BatchSize: 1000}), openMem(t, Options{BatchSize: 1000})
	mustUpsert(t, a, da...)
	mustUpsert(t, b, db...)
	f := Filter{Org: "o", Project: "p"}
	for q := range 300 {
		var query []string
		for range 3 + r.IntN(5) {
			query = append(query, words[r.IntN(len(words))])
		}
		qs := strings.Join(query, " ")
		score := func(ix *Index, name func(id uint32) string) map[string]float64 {
			out := map[string]float64{}
			for _, h := range srch(t, ix, qs, 400, f) {
				out[name(h.ID)] = h.Score
			}
			return out
		}
		sa := score(a, func(id uint32) string { return names[id-1] })
		sb := score(b, func(id uint32) string { return names[perm[id-1]] })
		for n, x := range sa {
			if y, ok := sb[n]; !ok || math.Float64bits(x) != math.Float64bits(y) {
				t.Fatalf("query %d %q: %q scores %v (%x) numbered one way, %v (%x) the other", q, qs, n, x, math.Float64bits(x), y, math.Float64bits(y))
			}
		}
	}
}
