package engine

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func str(s string) *string { return &s }

// An update replaces content and metadata as given, keeps the rest, hands
// the indexers the new content, and survives a reopen; the store's check
// holds after each step (openTest's cleanup, reopen).
func TestUpdateObservation(t *testing.T) {
	s, dir := openTest(t, &Options{Dim: 2})
	ix := &recIndexer{s: s, docs: map[uint32]string{}}
	if err := s.Attach(context.Background(), ix); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	meta := ObservationMeta{Paths: []string{"pkg/auth/mw.go"}, SessionID: "ses_1", Namespace: "backend", Tags: []string{"auth"}, WorkType: "bug_fix"}
	ids, err := s.AddObservations(ctx, tenA, []ObservationInput{{Content: "old words here", Metadata: meta, Weight: f64(0.7), Vector: []float32{1, 0}}}, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := ids[0]
	before, _ := s.Observation(tenA, id)

	// Content only: metadata and weight kept, the indexer sees the new
	// content with the new vector.
	if err := s.UpdateObservation(ctx, tenA, id, ObservationPatch{Content: str("fresh words now"), Vector: []float32{0, 1}}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := s.Observation(tenA, id)
	if err != nil || o.Content != "fresh words now" || o.Weight != 0.7 || o.Metadata.Namespace != "backend" || !slices.Equal(o.Metadata.Tags, []string{"auth"}) ||
		!o.CreatedAt.Equal(before.CreatedAt) || o.Dense != before.Dense {
		t.Fatalf("after a content update: %+v %v", o, err)
	}
	if ix.obs[o.Dense] != "fresh words now" {
		t.Fatalf("the indexer has %q", ix.obs[o.Dense])
	}
	if v, _ := s.obsVector(o.Dense); !slices.Equal(v, []float32{0, 1}) {
		t.Fatalf("vector %v", v)
	}

	// Metadata only: replaced whole, content kept (and re-indexed: tags
	// are indexed), the vector kept.
	seq := s.Seq()
	if err := s.UpdateObservation(ctx, tenA, id, ObservationPatch{Metadata: &ObservationMeta{Tags: []string{"db"}}}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	o, _ = s.Observation(tenA, id)
	if o.Content != "fresh words now" || o.Metadata.Namespace != "" || o.Metadata.SessionID != "" || len(o.Metadata.Paths) != 0 ||
		!slices.Equal(o.Metadata.Tags, []string{"db"}) || o.Weight != 0.7 {
		t.Fatalf("after a metadata update: %+v", o)
	}
	if s.Seq() == seq || ix.obs[o.Dense] != "fresh words now" {
		t.Fatalf("a metadata update was not handed to the indexers (seq %d -> %d)", seq, s.Seq())
	}
	if v, _ := s.obsVector(o.Dense); !slices.Equal(v, []float32{0, 1}) {
		t.Fatalf("vector after a metadata update %v", v)
	}

	// Weight only: no index change.
	seq = s.Seq()
	if err := s.UpdateObservation(ctx, tenA, id, ObservationPatch{Weight: f64(0.2)}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if o, _ = s.Observation(tenA, id); o.Weight != 0.2 || o.Content != "fresh words now" {
		t.Fatalf("after a weight update: %+v", o)
	}
	if s.Seq() != seq {
		t.Fatalf("a weight update re-indexed")
	}

	// Refused: another tenant, unknown id, invalid patches; nothing moves.
	for name, c := range map[string]struct {
		t     Tenant
		id    string
		p     ObservationPatch
		wants error
	}{
		"other project":  {tenA2, id, ObservationPatch{Content: str("x")}, ErrNotFound},
		"other org":      {tenB, id, ObservationPatch{Content: str("x")}, ErrNotFound},
		"unknown id":     {tenA, "obs_nope", ObservationPatch{Content: str("x")}, ErrNotFound},
		"empty patch":    {tenA, id, ObservationPatch{}, ErrInvalidInput},
		"empty content":  {tenA, id, ObservationPatch{Content: str("  ")}, ErrInvalidInput},
		"weight 2":       {tenA, id, ObservationPatch{Weight: f64(2)}, ErrInvalidInput},
		"bad session":    {tenA, id, ObservationPatch{Metadata: &ObservationMeta{SessionID: "a b"}}, ErrInvalidInput},
		"vector alone":   {tenA, id, ObservationPatch{Vector: []float32{1, 0}}, ErrInvalidInput},
		"vector dim":     {tenA, id, ObservationPatch{Content: str("x"), Vector: []float32{1, 0, 0}}, ErrInvalidInput},
		"bad utf8":       {tenA, id, ObservationPatch{Content: str("a\xffb")}, ErrInvalidInput},
		"control in tag": {tenA, id, ObservationPatch{Metadata: &ObservationMeta{Tags: []string{"a\nb"}}}, ErrInvalidInput},
	} {
		if err := s.UpdateObservation(ctx, c.t, c.id, c.p, ImportOptions{}); !errors.Is(err, c.wants) {
			t.Errorf("%s: %v, want %v", name, err, c.wants)
		}
	}
	if got, _ := s.Observation(tenA, id); got.Content != "fresh words now" || got.Weight != 0.2 || !slices.Equal(got.Metadata.Tags, []string{"db"}) {
		t.Fatalf("a refused update changed %+v", got)
	}

	s = reopen(t, s, dir, &Options{Dim: 2})
	if o, err = s.Observation(tenA, id); err != nil || o.Content != "fresh words now" || o.Weight != 0.2 || !slices.Equal(o.Metadata.Tags, []string{"db"}) {
		t.Fatalf("after reopen: %+v %v", o, err)
	}
}
