package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestObservations(t *testing.T) {
	s, dir := openTest(t, &Options{Dim: 2})
	ix := &recIndexer{s: s, docs: map[uint32]string{}}
	if err := s.Attach(context.Background(), ix); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ids, err := s.AddObservations(ctx, tenA, []ObservationInput{
		{Content: "Auth middleware rejects expired tokens", Metadata: ObservationMeta{Paths: []string{"pkg/auth/mw.go"}, SessionID: "ses_1", Namespace: "backend", Tags: []string{"auth"}, WorkType: "bug_fix"}},
		{Content: "Billing retries twice", Weight: f64(0.8), Vector: []float32{1, 0}},
	}, ImportOptions{})
	if err != nil || len(ids) != 2 || !strings.HasPrefix(ids[0], "obs_") {
		t.Fatalf("add: %v %v", ids, err)
	}
	if len(ix.obs) != 2 {
		t.Fatalf("indexer saw %d observations", len(ix.obs))
	}
	o, err := s.Observation(tenA, ids[0])
	if err != nil || o.Content != "Auth middleware rejects expired tokens" || o.Metadata.Namespace != "backend" || o.Weight != DefaultWeight {
		t.Fatalf("get: %+v %v", o, err)
	}
	if _, err := s.Observation(tenB, ids[0]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other tenant reads: %v", err)
	}
	s = reopen(t, s, dir, &Options{Dim: 2})
	o2, err := s.Observation(tenA, ids[1])
	if err != nil || o2.Weight != 0.8 || o2.Content != "Billing retries twice" {
		t.Fatalf("after reopen: %+v %v", o2, err)
	}
	if v, _ := s.obsVector(o2.Dense); len(v) != 2 || v[0] != 1 {
		t.Fatalf("vector: %v", v)
	}
	if err := s.DeleteObservation(ctx, tenA, ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Observation(tenA, ids[1]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted observation readable: %v", err)
	}
	if err := s.DeleteObservation(ctx, tenA, ids[1]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestObservationsRejectBadInput(t *testing.T) {
	s, _ := openTest(t, &Options{Dim: 2})
	ctx := context.Background()
	good := ObservationInput{Content: "fine"}
	for name, in := range map[string]ObservationInput{
		"empty":          {Content: "  "},
		"over 64 KiB":    {Content: strings.Repeat("x", 64<<10+1)},
		"invalid utf8":   {Content: "a\xffb"},
		"control in ns":  {Content: "x", Metadata: ObservationMeta{Namespace: "a\nb"}},
		"bad session":    {Content: "x", Metadata: ObservationMeta{SessionID: "a b"}},
		"weight":         {Content: "x", Weight: f64(2)},
		"vector dim":     {Content: "x", Vector: []float32{1, 2, 3}},
		"empty path":     {Content: "x", Metadata: ObservationMeta{Paths: []string{""}}},
		"too many paths": {Content: "x", Metadata: ObservationMeta{Paths: make([]string, 10_000)}},
	} {
		_, err := s.AddObservations(ctx, tenA, []ObservationInput{good, in}, ImportOptions{})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Lines[0].Line != 2 {
			t.Errorf("%s: %v", name, err)
		}
	}
	_ = s.View(func(v *View) error {
		if v.g.liveObs != 0 {
			t.Fatalf("%d observations stored by rejected batches", v.g.liveObs)
		}
		return nil
	})
}

// A turn's next is its session's next in recording order, whatever other
// sessions and projects recorded in between; deletes, a moved session and
// a reopen keep the order right.
func TestObsSessionNext(t *testing.T) {
	s, dir := openTest(t, &Options{Dim: 2})
	ctx := context.Background()
	add := func(ten Tenant, session, content string) string {
		t.Helper()
		ids, err := s.AddObservations(ctx, ten, []ObservationInput{{Content: content, Metadata: ObservationMeta{SessionID: session}}}, ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}
	// Two agents' sessions interleave; another project reuses a session id.
	a1 := add(tenA, "s1", "a1")
	b1 := add(tenA, "s2", "b1")
	x1 := add(tenA2, "s1", "other project")
	a2 := add(tenA, "s1", "a2")
	n1 := add(tenA, "", "no session")
	b2 := add(tenA, "s2", "b2")
	a3 := add(tenA, "s1", "a3")
	check := func(when string, want map[string]string) {
		t.Helper()
		if err := s.Check(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		_ = s.View(func(v *View) error {
			for id, w := range want {
				d, ok := v.ObsByID(id)
				if !ok {
					t.Fatalf("%s: %s not found", when, id)
				}
				got := ""
				if n, ok := v.ObsSessionNext(d); ok {
					got = v.ObsID(n)
				}
				if got != w {
					t.Errorf("%s: next of %s %q, want %q", when, id, got, w)
				}
			}
			return nil
		})
	}
	check("added", map[string]string{a1: a2, a2: a3, a3: "", b1: b2, b2: "", x1: "", n1: ""})
	s = reopen(t, s, dir, &Options{Dim: 2})
	check("reopened", map[string]string{a1: a2, a2: a3, a3: "", b1: b2, b2: "", x1: "", n1: ""})
	if err := s.DeleteObservation(ctx, tenA, a2); err != nil {
		t.Fatal(err)
	}
	check("a2 deleted", map[string]string{a1: a3, a3: ""})
	if err := s.UpdateObservation(ctx, tenA, b2, ObservationPatch{Metadata: &ObservationMeta{SessionID: "s1"}}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	check("b2 moved to s1", map[string]string{a1: b2, b2: a3, a3: "", b1: ""})
	if err := s.UpdateObservation(ctx, tenA, b1, ObservationPatch{Metadata: &ObservationMeta{}}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	check("b1 left its session", map[string]string{b1: ""})
	s = reopen(t, s, dir, &Options{Dim: 2})
	check("reopened again", map[string]string{a1: b2, b2: a3, a3: "", b1: "", x1: "", n1: ""})
}
