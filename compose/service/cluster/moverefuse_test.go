package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

// pauseMoves makes every mover wait after its copy number at (0: never)
// until release is called; paused is closed when one waits. The hook is
// removed when the test ends.
func pauseMoves(t *testing.T, at int) (paused <-chan struct{}, release func()) {
	t.Helper()
	p, r := make(chan struct{}), make(chan struct{})
	var once, rel sync.Once
	moveHook = func(ctx context.Context, rec *MoveRecord) error {
		if rec.Copied != at {
			return nil
		}
		once.Do(func() { close(p) })
		select {
		case <-r:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	release = func() { rel.Do(func() { close(r) }) }
	t.Cleanup(func() { release(); moveHook = nil })
	return p, release
}

// importInto writes n imports of org through node, each a triplet named
// after prefix.
func importInto(t *testing.T, n *Node, org, prefix string, count int) uint64 {
	t.Helper()
	var last uint64
	for i := range count {
		res, err := n.Write(context.Background(), service.Write{Kind: service.WriteImport, Org: org, Project: "p",
			Triplets: []engine.TripletInput{{Source: fmt.Sprintf("%s%d", prefix, i), Relationship: "calls", Target: "Hub"}}})
		if err != nil {
			t.Fatal(err)
		}
		last = res.Seq
	}
	return last
}

// waitMoveEnd waits until n's copy of the placement shows org's move id
// ended, and returns its record.
func waitMoveEnd(t *testing.T, n *Node, org, id string) *MoveRecord {
	t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if r := n.Move(org); r != nil && r.ID == id && r.Ended() {
			return r
		}
	}
	t.Fatalf("move %s of %s did not end: %+v", id, org, n.Move(org))
	return nil
}

// TestMoveRefusals: a single node of shards s0, s1 and s2 (each store
// holds them all). A shard that does not exist is refused (422); placing
// an org where it is moves nothing; a second move of an org moving is
// refused (409), the same move asked again answers its progress, and the
// org placed back on its source gives the move up (its records as they
// were, its writes taken there again); a move of an org with data waits
// for every live node to apply log version 3.
func TestMoveRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster node")
	}
	open := testNATS(t, "open")
	shards := []string{"s0", "s1", "s2"}
	n, app := startNode(t, Config{Cluster: "c1", NodeID: "n1", Replicas: 1, Shards: shards, NATSURL: open.ClientURL()})
	ctx := context.Background()
	org := orgOn("s0", shards, "org_r")
	importInto(t, n, org, "R", 20)
	before := records(t, app, org)

	if _, err := n.Place(ctx, org, "s9"); !errors.Is(err, engine.ErrInvalidInput) || !strings.Contains(err.Error(), "not a shard") {
		t.Fatalf("a shard that does not exist: %v, want invalid input (422)", err)
	}
	if rec, err := n.Place(ctx, org, "s0"); err != nil || rec != nil {
		t.Fatalf("placed where it is: %+v %v, want no move", rec, err)
	}
	if s, over, _ := n.Placement(ctx, org); s != "s0" || !over || n.Move(org) != nil {
		t.Fatalf("placed where it is: on %s (override %v), move %+v", s, over, n.Move(org))
	}

	paused, release := pauseMoves(t, 5)
	short, cancel := context.WithTimeout(ctx, time.Second)
	rec, err := n.Place(short, org, "s1")
	cancel()
	if err != nil || rec == nil || rec.Phase != PhaseCopying || rec.To != "s1" {
		t.Fatalf("a move that outlasts its request: %+v %v, want in progress", rec, err)
	}
	<-paused
	if _, err := n.Place(ctx, org, "s2"); !errors.Is(err, ErrMoving) || !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "from s0 to s1") {
		t.Fatalf("a second move while the first runs: %v, want a conflict naming it (409)", err)
	}
	short, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	again, err := n.Place(short, org, "s1")
	cancel()
	if err != nil || again == nil || again.ID != rec.ID {
		t.Fatalf("the same move asked again: %+v %v, want its progress", again, err)
	}
	go func() { time.Sleep(200 * time.Millisecond); release() }()
	back, err := n.Place(ctx, org, "s0")
	if err != nil || back == nil || back.ID != rec.ID || back.Phase != PhaseAborted || !strings.Contains(back.Error, "placed back on s0") {
		t.Fatalf("placed back on its source: %+v %v, want the move given up", back, err)
	}
	if s, _, _ := n.Placement(ctx, org); s != "s0" {
		t.Fatalf("after the move was given up: on %s", s)
	}
	last := importInto(t, n, org, "After", 2)
	waitApplied(t, n, "s0", last)
	if got, want := records(t, app, org), before; len(got) != len(want)+4 { // two triplets, two nodes
		t.Fatalf("after the move was given up and two writes: %s", diff(got, want))
	}

	// Done in full, the next time.
	moveHook = nil
	done, err := n.Place(ctx, org, "s1")
	if err != nil || done == nil || done.Phase != PhaseDone {
		t.Fatalf("the move again: %+v %v", done, err)
	}

	// A node of a release before moves is live: a move of an org with
	// data waits for it; one of an org without data is placed as before.
	putMember(t, open.ClientURL(), "c1", "old1", 2)
	for end := time.Now().Add(10 * time.Second); n.versionNow() != 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the node does not see the old member")
		}
	}
	other := orgOn("s0", shards, "org_v")
	importInto(t, n, other, "V", 1)
	if _, err := n.Place(ctx, other, "s2"); !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "log version 3") {
		t.Fatalf("a move beside a node of version 2: %v, want a conflict naming the version", err)
	}
	empty := orgOn("s0", shards, "org_e")
	if rec, err := n.Place(ctx, empty, "s2"); err != nil || rec != nil {
		t.Fatalf("placing an org without data beside a node of version 2: %+v %v", rec, err)
	}
	if s, _, _ := n.Placement(ctx, empty); s != "s2" {
		t.Fatalf("the org without data is on %s, want s2", s)
	}
}

// putMember writes a live member record of a node applying log version
// v into cluster's members bucket, signed with the cluster's keys.
func putMember(t *testing.T, url, cluster, id string, v int) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bucket, err := js.KeyValue(ctx, MembersBucket(cluster))
	if err != nil {
		t.Fatal(err)
	}
	b, err := testKeys(t, cluster).sealRecord(MembersBucket(cluster), id, member{ID: id, URL: "http://127.0.0.1:1", At: time.Now().Add(time.Minute).UnixMilli(), LogVersion: v})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bucket.Put(ctx, id, b); err != nil {
		t.Fatal(err)
	}
}

// TestMoveResumesAfterRestart: the node running a move stops mid-copy
// (its process ends) and starts again on the same store: it takes the
// move up from its record and ends it, and the target's node holds the
// org's records as the source held them, each once.
func TestMoveResumesAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts cluster nodes")
	}
	open := testNATS(t, "open")
	shards := []string{"s0", "s1", "s2", "s3"}
	cfg := func(id string) Config {
		return Config{Cluster: "c1", NodeID: id, Replicas: 1, Shards: shards, NATSURL: open.ClientURL(), Secret: testSecret, Advertise: "http://" + id + ".invalid"}
	}
	dir := t.TempDir()
	app1 := openApp(t, dir)
	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n1, err := Start(sctx, app1, cfg("n1"))
	if err != nil {
		t.Fatal(err)
	}
	n2, app2 := startNode(t, cfg("n2"))
	c := &testCluster{t: t, name: "c1", shards: shards, nodes: []*Node{n1, n2}, apps: []*service.App{app1, app2}}
	c.settle()
	var from, to string
	for _, a := range shards {
		for _, b := range shards {
			if from == "" && c.holders(a)[0] == 0 && c.holders(b)[0] == 1 {
				from, to = a, b
			}
		}
	}
	org := orgOn(from, shards, "org_x")
	importInto(t, n1, org, "X", 60)
	want := records(t, app1, org)

	paused, _ := pauseMoves(t, 25)
	go func() {
		pctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n1.Place(pctx, org, to)
	}()
	<-paused
	n1.Close() // the mover stops where it is, its record saying so
	if err := closeApp(app1); err != nil {
		t.Fatal(err)
	}
	moveHook = nil
	rec, _, err := n2.place.latestMove(context.Background(), org)
	if err != nil || rec == nil || rec.Phase != PhaseCopying {
		t.Fatalf("the move's record after the stop: %+v %v", rec, err)
	}
	app1 = openApp(t, dir)
	n1, err = Start(sctx, app1, cfg("n1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n1.Close() })
	done := waitMoveEnd(t, n1, org, rec.ID)
	if done.Phase != PhaseDone || done.Copied < 60 {
		t.Fatalf("the move after the restart: %+v", done)
	}
	waitApplied(t, n2, to, done.Flip)
	if got := records(t, app2, org); !slices.Equal(got, want) {
		t.Fatalf("the target's records: %s", diff(got, want))
	}
	// The org is written on its new shard.
	urls, err := n1.Route(context.Background(), org)
	if err != nil || len(urls) != 1 || urls[0] != n2.cfg.Advertise {
		t.Fatalf("n1 routes %s to %v (%v), want n2", org, urls, err)
	}
	if res, err := n2.Write(context.Background(), service.Write{Kind: service.WriteImport, Org: org, Project: "p",
		Triplets: []engine.TripletInput{{Source: "Moved", Relationship: "calls", Target: "Hub"}}}); err != nil || res.Shard != to {
		t.Fatalf("a write after the move: %+v %v", res, err)
	}
}
