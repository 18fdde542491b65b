package compose

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
)

func listIDs(l *ObservationList) []string {
	var ids []string
	for _, o := range l.Observations {
		ids = append(ids, o.ID)
	}
	return ids
}

// pages walks a listing or a search to its end.
func pages(t *testing.T, c *Composer, id policy.Identity, ten engine.Tenant, req ObservationListRequest) ([]ListedObservation, int) {
	t.Helper()
	var all []ListedObservation
	n := 0
	for {
		l, err := c.Observations(context.Background(), id, ten, req)
		if err != nil {
			t.Fatal(err)
		}
		n++
		all = append(all, l.Observations...)
		if l.NextCursor == "" {
			return all, n
		}
		if len(l.Observations) != req.Limit {
			t.Fatalf("a page of %d before the end (limit %d)", len(l.Observations), req.Limit)
		}
		req.Cursor = l.NextCursor
		if n > 100 {
			t.Fatal("the listing does not end")
		}
	}
}

// A listing is newest first, through the policy (a forbidden observation
// is left out and the page filled from the next), paged by an opaque
// cursor that another listing refuses.
func TestObservationsListing(t *testing.T) {
	e := newSessionEnv(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 7 {
		m := engine.ObservationMeta{Tags: []string{"even"}, Paths: []string{fmt.Sprintf("pkg/p%d/f.go", i%2)}}
		if i%2 == 1 {
			m.Tags = []string{"odd"}
		}
		got, err := e.st.AddObservations(ctx, tenA, []engine.ObservationInput{{Content: fmt.Sprintf("note number %d", i), Metadata: m}},
			engine.ImportOptions{Now: base.Add(time.Duration(i) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got[0])
	}
	e.observe(t, tenA2, "another project's note")
	if err := e.c.PEP.Replace(policy.DefaultPolicies + fmt.Sprintf("\nforbid (principal, action, resource == Observation::%q);\n", ids[4])); err != nil {
		t.Fatal(err)
	}
	id := agent("org_a")
	got, n := pages(t, e.c, id, tenA, ObservationListRequest{Limit: 2})
	want := []string{ids[6], ids[5], ids[3], ids[2], ids[1], ids[0]}
	if !slices.Equal(listIDsOf(got), want) || n != 3 {
		t.Fatalf("pages %d: %v, want %v", n, listIDsOf(got), want)
	}
	for _, o := range got {
		if o.Score != nil || o.Content == "" {
			t.Fatalf("a listed observation: %+v", o)
		}
	}
	got, _ = pages(t, e.c, id, tenA, ObservationListRequest{Limit: 1, Filter: engine.ObservationFilter{Tag: "odd", Path: "pkg/p1"}})
	if !slices.Equal(listIDsOf(got), []string{ids[5], ids[3], ids[1]}) {
		t.Fatalf("tag odd: %v", listIDsOf(got))
	}
	// Another org's identity sees nothing (the Cedar check).
	if l, err := e.c.Observations(ctx, agent("org_b"), tenA, ObservationListRequest{}); err != nil || len(l.Observations) != 0 {
		t.Fatalf("another org: %v %v", listIDs(l), err)
	}
	// Cursors: another filter's, a search's, garbage, a bad limit.
	first, err := e.c.Observations(ctx, id, tenA, ObservationListRequest{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string]ObservationListRequest{
		"other filter": {Limit: 1, Cursor: first.NextCursor, Filter: engine.ObservationFilter{Tag: "odd"}},
		"search":       {Limit: 1, Cursor: first.NextCursor, Query: "note"},
		"garbage":      {Limit: 1, Cursor: "bm90IGEgY3Vyc29y"},
		"not base64":   {Limit: 1, Cursor: "%%%"},
		"truncated":    {Limit: 1, Cursor: first.NextCursor[:len(first.NextCursor)-2]},
		"limit 0-":     {Limit: -1},
		"limit 1001":   {Limit: engine.MaxObservationPage + 1},
		"long q":       {Query: strings.Repeat("q", 9000)},
	} {
		if _, err := e.c.Observations(ctx, id, tenA, req); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func listIDsOf(os []ListedObservation) []string {
	var ids []string
	for _, o := range os {
		ids = append(ids, o.ID)
	}
	return ids
}

// A search ranks as a session block does: its order and scores are the
// explain scores of the same query's session block (relevance × (0.5 +
// weight)), a heavier note wins a tie, filters narrow it, and paging
// cuts the same ranking.
func TestObservationsSearchRanksLikeSessionBlock(t *testing.T) {
	e := newSessionEnv(t)
	ctx := context.Background()
	ids, err := e.st.AddObservations(ctx, tenA, []engine.ObservationInput{
		{Content: "postgres pool exhausted under load", Weight: w(0.5)},
		{Content: "postgres pool exhausted under load", Weight: w(0.9), Metadata: engine.ObservationMeta{Tags: []string{"db"}}},
		{Content: "auth middleware rejects expired tokens"},
		{Content: "postgres connection string lives in the vault", Metadata: engine.ObservationMeta{Tags: []string{"db"}}},
		{Content: "billing retries twice"},
	}, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := agent("org_a")
	l, err := e.c.Observations(ctx, id, tenA, ObservationListRequest{Query: "postgres pool", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Observations) < 3 || l.Observations[0].ID != ids[1] || l.Observations[1].ID != ids[0] {
		t.Fatalf("search order %v", listIDs(l))
	}
	for i, o := range l.Observations {
		if o.Score == nil || o.Relevance == nil || *o.Score != FeedbackScore(*o.Relevance, o.Weight) {
			t.Fatalf("observation %d without its score: %+v", i, o)
		}
		if i > 0 && *o.Score > *l.Observations[i-1].Score {
			t.Fatalf("not ordered by score: %v", listIDs(l))
		}
	}
	// The session block's explain holds the same scores for the same
	// observations.
	req := sreq("bug_fix", "postgres pool")
	req.Explain, req.Graph = true, false
	b, err := e.c.SessionBlock(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	both := 0
	for _, x := range b.Explain.Observations {
		i := slices.IndexFunc(l.Observations, func(o ListedObservation) bool { return o.ID == x.ID })
		if i < 0 {
			continue // a follower: the block adds the note after a hit, a search does not
		}
		both++
		if *l.Observations[i].Score != x.Score || *l.Observations[i].Relevance != x.Relevance {
			t.Fatalf("block scores %+v, search %+v", x, l.Observations[i])
		}
	}
	if both < 3 {
		t.Fatalf("the block and the search share %d observations", both)
	}
	// A filter narrows the ranking.
	l, err = e.c.Observations(ctx, id, tenA, ObservationListRequest{Query: "postgres pool", Filter: engine.ObservationFilter{Tag: "db"}})
	if err != nil || len(l.Observations) != 2 || l.Observations[0].ID != ids[1] || l.Observations[1].ID != ids[3] {
		t.Fatalf("tag db: %v %v", listIDs(l), err)
	}
	// Pages of one are the ranking, in order.
	all, err := e.c.Observations(ctx, id, tenA, ObservationListRequest{Query: "postgres", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	paged, _ := pages(t, e.c, id, tenA, ObservationListRequest{Query: "postgres", Limit: 1})
	if !slices.Equal(listIDsOf(paged), listIDs(all)) {
		t.Fatalf("paged %v, at once %v", listIDsOf(paged), listIDs(all))
	}
}

// Node search: the identity match first, then text hits; the policy and
// the project scope hold.
func TestSearchNodes(t *testing.T) {
	e := newEnv(t)
	e.load(t, tenA, tr("AuthService", "depends_on", "PostgresDB"), tr("AuthServiceClient", "calls", "AuthService"), tr("BillingService", "calls", "AuthService"))
	e.load(t, tenA2, tr("AuthService", "calls", "Elsewhere"))
	ctx := context.Background()
	hits, err := e.c.SearchNodes(ctx, agent("org_a"), tenA, "auth_service", 0)
	if err != nil || len(hits) < 2 || hits[0].Name != "AuthService" || hits[0].Match != MatchExact || hits[0].Score != 1 {
		t.Fatalf("auth_service: %+v %v", hits, err)
	}
	seen := map[string]bool{}
	for _, h := range hits[1:] {
		if h.Match != MatchText || seen[h.ID] || h.ID == hits[0].ID {
			t.Fatalf("text hits: %+v", hits)
		}
		seen[h.ID] = true
		n, err := e.st.Node(tenA, h.ID)
		if err != nil || n.ProjectID != tenA.Project {
			t.Fatalf("hit outside the project: %+v %v", h, err)
		}
	}
	if hits, err := e.c.SearchNodes(ctx, agent("org_a"), tenA, "Billing", 1); err != nil || len(hits) != 1 || hits[0].Name != "BillingService" || hits[0].Match != MatchText {
		t.Fatalf("Billing: %+v %v", hits, err)
	}
	if hits, err := e.c.SearchNodes(ctx, agent("org_b"), tenA, "AuthService", 0); err != nil || len(hits) != 0 {
		t.Fatalf("another org: %+v %v", hits, err)
	}
	for _, c := range []struct {
		q     string
		limit int
	}{{"", 0}, {"  ", 5}, {"x", -1}, {"x", MaxNodeSearch + 1}, {strings.Repeat("x", 9000), 1}} {
		if _, err := e.c.SearchNodes(ctx, agent("org_a"), tenA, c.q, c.limit); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("q %.10q limit %d: %v", c.q, c.limit, err)
		}
	}
}

// Projects: those with data or a stored configuration, sorted, with
// counts; a token's projects narrow them; an emptied project goes.
func TestProjects(t *testing.T) {
	e := newSessionEnv(t)
	ctx := context.Background()
	e.load(t, tenA, tr("A", "calls", "B"), tr("B", "calls", "C"))
	e.observe(t, tenA2, "one note")
	e.load(t, engine.Tenant{Org: "org_b", Project: "other"}, tr("X", "calls", "Y"))
	if err := e.c.Settings.SetMemoryConfig(engine.Tenant{Org: "org_a", Project: "configured"}, DefaultMemoryConfig); err != nil {
		t.Fatal(err)
	}
	e.load(t, engine.Tenant{Org: "org_a", Project: "emptied"}, tr("E", "calls", "F"))
	if _, _, err := e.st.ClearProject(ctx, engine.Tenant{Org: "org_a", Project: "emptied"}); err != nil {
		t.Fatal(err)
	}
	got, err := e.c.Projects("org_a", nil)
	want := []ProjectSummary{{ProjectID: "configured"}, {ProjectID: "proj_1", Nodes: 3, Edges: 2}, {ProjectID: "proj_2", Observations: 1}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("projects %+v %v, want %+v", got, err, want)
	}
	if got, err := e.c.Projects("org_a", []string{"proj_2", "nope"}); err != nil || !slices.Equal(got, want[2:]) {
		t.Fatalf("limited to proj_2: %+v %v", got, err)
	}
	if got, err := e.c.Projects("org_none", nil); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("an org without data: %#v %v", got, err)
	}
}

func tr(src, rel, dst string) engine.TripletInput {
	return engine.TripletInput{Source: src, Relationship: rel, Target: dst}
}
