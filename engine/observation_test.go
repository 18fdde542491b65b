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
