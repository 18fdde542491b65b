package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestPathUnder(t *testing.T) {
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{"pkg/auth", "pkg/auth", true},
		{"pkg/auth/mw.go", "pkg/auth", true},
		{"pkg/auth/mw.go", "pkg/auth/", true},
		{"pkg/auth/x/y.go", "pkg", true},
		{"pkg/authz/x.go", "pkg/auth", false},
		{"pkg/auth", "pkg/auth/mw.go", false},
		{"pkg", "pkg/auth", false},
		{"/etc/hosts", "/", true},
		{"etc/hosts", "/", false},
		{"a/b", "a/b//", true},
	} {
		if got := PathUnder(c.path, c.dir); got != c.want {
			t.Errorf("PathUnder(%q, %q) = %v", c.path, c.dir, got)
		}
	}
}

// listed is an observation as the oracle keeps it.
type listed struct {
	id      string
	created int64
	seq     int // input order across batches
	meta    ObservationMeta
	content string
}

// Listing pages against an oracle: every filter, page sizes 1 to 7, an
// Allow that hides some; the pages joined are the oracle's list, newest
// first (and, within a batch, last input first).
func TestListObservationsOracle(t *testing.T) {
	s, _ := openTest(t, &Options{Dim: 2})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tags := []string{"auth", "db", "Auth", "ci"}
	paths := []string{"pkg/auth/mw.go", "pkg/authz/z.go", "pkg/db/pool.go", "cmd/main.go", "pkg/auth"}
	var all []listed
	seq := 0
	for batch := range 30 {
		now := base.Add(time.Duration(rng.IntN(20)) * time.Hour) // times repeat across batches
		var in []ObservationInput
		for range 1 + rng.IntN(5) {
			m := ObservationMeta{SessionID: fmt.Sprintf("ses_%d", rng.IntN(3)), WorkType: []string{"", "bug_fix", "feature"}[rng.IntN(3)]}
			for _, tg := range tags {
				if rng.IntN(3) == 0 {
					m.Tags = append(m.Tags, tg)
				}
			}
			for _, p := range paths {
				if rng.IntN(4) == 0 {
					m.Paths = append(m.Paths, p)
				}
			}
			in = append(in, ObservationInput{Content: fmt.Sprintf("note %d of batch %d", len(in), batch), Metadata: m})
		}
		ids, err := s.AddObservations(ctx, tenA, in, ImportOptions{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			all = append(all, listed{id: id, created: now.UnixNano(), seq: seq, meta: in[i].Metadata, content: in[i].Content})
			seq++
		}
	}
	// Another project's and another org's notes never list.
	for _, ten := range []Tenant{tenA2, tenB} {
		if _, err := s.AddObservations(ctx, ten, []ObservationInput{{Content: "elsewhere", Metadata: ObservationMeta{Tags: []string{"auth"}}}}, ImportOptions{Now: base}); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortStableFunc(all, func(a, b listed) int {
		if a.created != b.created {
			if a.created > b.created {
				return -1
			}
			return 1
		}
		return b.seq - a.seq
	})
	hidden := map[string]bool{}
	for i, o := range all {
		if i%5 == 2 {
			hidden[o.id] = true
		}
	}
	allow := func(v *View, d uint32) bool { return !hidden[v.ObsID(d)] }
	filters := map[string]ObservationFilter{
		"none":          {},
		"tag auth":      {Tag: "auth"},
		"tag Auth":      {Tag: "Auth"},
		"path pkg/auth": {Path: "pkg/auth"},
		"path pkg/":     {Path: "pkg/"},
		"path file":     {Path: "pkg/db/pool.go"},
		"session":       {SessionID: "ses_1"},
		"work type":     {WorkType: "bug_fix"},
		"since":         {Since: base.Add(5 * time.Hour)},
		"until":         {Until: base.Add(5 * time.Hour)},
		"window":        {Since: base.Add(3 * time.Hour), Until: base.Add(9 * time.Hour), Tag: "db"},
		"nothing":       {Tag: "none"},
	}
	for name, f := range filters {
		for _, useAllow := range []bool{false, true} {
			var want []string
			for _, o := range all {
				if useAllow && hidden[o.id] {
					continue
				}
				m := o.meta
				ok := (f.Tag == "" || slices.Contains(m.Tags, f.Tag)) &&
					(f.Path == "" || slices.ContainsFunc(m.Paths, func(p string) bool { return PathUnder(p, f.Path) })) &&
					(f.SessionID == "" || m.SessionID == f.SessionID) && (f.WorkType == "" || m.WorkType == f.WorkType) &&
					(f.Since.IsZero() || o.created >= f.Since.UnixNano()) && (f.Until.IsZero() || o.created < f.Until.UnixNano())
				if ok {
					want = append(want, o.id)
				}
			}
			for limit := 1; limit <= 7; limit++ {
				q := ObservationQuery{ObservationFilter: f, Limit: limit}
				if useAllow {
					q.Allow = allow
				}
				var got []string
				for pages := 0; ; pages++ {
					if pages > len(all)+1 {
						t.Fatalf("%s: the listing does not end", name)
					}
					p, err := s.ListObservations(tenA, q)
					if err != nil {
						t.Fatal(err)
					}
					if len(p.Observations) > limit || (p.Next != nil && len(p.Observations) != limit) {
						t.Fatalf("%s limit %d: page of %d, next %v", name, limit, len(p.Observations), p.Next)
					}
					for _, o := range p.Observations {
						got = append(got, o.ID)
						if o.Content == "" || o.OrgID != tenA.Org || o.ProjectID != tenA.Project {
							t.Fatalf("%s: listed %+v", name, o)
						}
					}
					if p.Next == nil {
						break
					}
					q.After = p.Next
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s (allow %v) limit %d:\n got %v\nwant %v", name, useAllow, limit, got, want)
				}
			}
			// FilterObservations selects the same set (the search's
			// allow-list).
			if !useAllow {
				_ = s.View(func(v *View) error {
					b := v.FilterObservations(tenA, f)
					var ids []string
					if b != nil {
						it := b.Iterator()
						for it.HasNext() {
							ids = append(ids, v.ObsID(it.Next()))
						}
					}
					slices.Sort(ids)
					w := slices.Clone(want)
					slices.Sort(w)
					if !slices.Equal(ids, w) {
						t.Errorf("%s: FilterObservations %d ids, want %d", name, len(ids), len(w))
					}
					return nil
				})
			}
		}
	}
}

// A position stays valid across writes: observations added after the
// first page list before it, not on later pages; one deleted is skipped.
func TestListObservationsResumesAcrossWrites(t *testing.T) {
	s, _ := openTest(t, &Options{Dim: 2})
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 6 {
		got, err := s.AddObservations(ctx, tenA, []ObservationInput{{Content: fmt.Sprintf("note %d", i)}}, ImportOptions{Now: base.Add(time.Duration(i) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got[0])
	}
	p, err := s.ListObservations(tenA, ObservationQuery{Limit: 2})
	if err != nil || len(p.Observations) != 2 || p.Observations[0].ID != ids[5] || p.Observations[1].ID != ids[4] || p.Next == nil {
		t.Fatalf("first page: %+v %v", p, err)
	}
	if _, err := s.AddObservations(ctx, tenA, []ObservationInput{{Content: "newer"}}, ImportOptions{Now: base.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteObservation(ctx, tenA, ids[3]); err != nil {
		t.Fatal(err)
	}
	p, err = s.ListObservations(tenA, ObservationQuery{Limit: 10, After: p.Next})
	if err != nil || len(p.Observations) != 3 || p.Observations[0].ID != ids[2] || p.Next != nil {
		t.Fatalf("second page: %+v %v", p, err)
	}
	for _, bad := range []int{-1, MaxObservationPage + 1} {
		if _, err := s.ListObservations(tenA, ObservationQuery{Limit: bad}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("limit %d: %v", bad, err)
		}
	}
	if p, err := s.ListObservations(Tenant{Org: "org_a", Project: "nope"}, ObservationQuery{}); err != nil || len(p.Observations) != 0 {
		t.Fatalf("unknown project: %+v %v", p, err)
	}
}
