package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
)

// TestPlacementMoves: PUT of an org's shard answers 200 with the
// placement once the org's move ended (or none was needed), 202 while it
// is in progress, the move in the body either way (GET shows it too, and
// the OpenAPI document declares both answers); a conflicting move is 409,
// a shard that does not exist 422; a body without its shard is 422 and
// asks nothing of the cluster; alone, kgctx answers 404.
func TestPlacementMoves(t *testing.T) {
	fc := &fakeCluster{key: []byte("k")}
	s := startServerWith(t, func(c *Config) { c.Cluster = fc })
	started := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	running := &OrgMove{ID: "m1", OrgID: "org_a", From: "s0", To: "s1", Phase: "copying", Node: "n1", StartedAt: started, UpdatedAt: started, Copied: 12, Left: 30}
	fc.placed, fc.move = running, running
	r := s.do("PUT", "/v1/admin/orgs/org_a/shard", s.admin, "application/json", []byte(`{"shard": "s1"}`))
	var p PlacementResponse
	if json.Unmarshal(r.body, &p); r.status != 202 || p.Move == nil || p.Move.Phase != "copying" || p.Move.Copied != 12 {
		t.Fatalf("a move in progress: %d %s, want 202 with the move", r.status, r.body)
	}
	done := *running
	done.Phase, done.Copied, done.Left, done.Flip = "done", 42, 0, "s1:77"
	fc.placed, fc.move = &done, &done
	r = s.do("PUT", "/v1/admin/orgs/org_a/shard", s.admin, "application/json", []byte(`{"shard": "s1"}`))
	if json.Unmarshal(r.body, &p); r.status != 200 || p.Move == nil || p.Move.Phase != "done" || p.Move.Flip != "s1:77" {
		t.Fatalf("a move done: %d %s, want 200 with the move", r.status, r.body)
	}
	r = s.do("GET", "/v1/admin/orgs/org_a/shard", s.admin, "", nil)
	if json.Unmarshal(r.body, &p); r.status != 200 || p.Move == nil || p.Move.ID != "m1" {
		t.Fatalf("GET: %d %s, want the latest move", r.status, r.body)
	}
	fc.placed = nil
	if r := s.do("PUT", "/v1/admin/orgs/org_a/shard", s.admin, "application/json", []byte(`{"shard": "s0"}`)); r.status != 200 {
		t.Fatalf("nothing to move: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		err  error
		code int
		name string
	}{
		{fmt.Errorf("%w: the org is moving from s0 to s1 (copying, 12 entries copied)", engine.ErrConflict), 409, "conflict"},
		{fmt.Errorf("%w: \"s9\" is not a shard of the cluster (s0, s1)", engine.ErrInvalidInput), 422, "invalid_input"},
	} {
		fc.placeErr = c.err
		r := s.do("PUT", "/v1/admin/orgs/org_a/shard", s.admin, "application/json", []byte(`{"shard": "s2"}`))
		if r.status != c.code || r.errCode() != c.name {
			t.Errorf("%v: %d %s, want %d %s", c.err, r.status, r.body, c.code, c.name)
		}
	}
	asked := len(fc.placedOn)
	if r := s.do("PUT", "/v1/admin/orgs/org_a/shard", s.admin, "application/json", []byte(`{}`)); r.status != 422 || len(fc.placedOn) != asked {
		t.Fatalf("a body without its shard: %d %s (asked %v)", r.status, r.body, fc.placedOn)
	}
	if !slices.Equal(fc.placedOn, []string{"s1", "s1", "s0", "s2", "s2"}) {
		t.Fatalf("the cluster was asked %v", fc.placedOn)
	}
	alone := startServer(t)
	if r := alone.do("PUT", "/v1/admin/orgs/org_a/shard", alone.admin, "application/json", []byte(`{"shard": "s1"}`)); r.status != 404 {
		t.Fatalf("alone: %d %s, want 404", r.status, r.body)
	}
}
