package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/engine/sessionlog"
)

// testCluster is nodes of one cluster, each with its store.
type testCluster struct {
	t      *testing.T
	name   string
	shards []string
	nodes  []*Node
	apps   []*service.App
	js     jetstream.JetStream // a client of the cluster's NATS
}

// ids are the nodes' ids.
func (c *testCluster) ids() []string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, n.cfg.NodeID)
	}
	return out
}

// holders are the indexes of the nodes that hold shard.
func (c *testCluster) holders(shard string) []int {
	var out []int
	for i, n := range c.nodes {
		if HoldsShard(shard, c.ids(), n.cfg.NodeID, n.cfg.Replicas) {
			out = append(out, i)
		}
	}
	return out
}

// settle waits until every node applies and serves the shards it holds
// and no other (the nodes of a forming cluster apply every shard until
// the others serve theirs).
func (c *testCluster) settle() {
	c.t.Helper()
	for end := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		ok := true
		for _, n := range c.nodes {
			n.mu.Lock()
			for _, s := range c.shards {
				f := n.running[s]
				holds := HoldsShard(s, c.ids(), n.cfg.NodeID, n.cfg.Replicas)
				if holds != (f != nil) || (holds && !f.serving) || len(n.members) != len(c.nodes) {
					ok = false
				}
			}
			n.mu.Unlock()
		}
		if ok {
			return
		}
		if time.Now().After(end) {
			c.t.Fatal("the cluster did not settle: each node applying the shards it holds")
		}
	}
}

// node is the node advertising url.
func (c *testCluster) node(url string) *Node {
	for _, n := range c.nodes {
		if n.cfg.Advertise == url {
			return n
		}
	}
	c.t.Fatalf("no node advertises %s", url)
	return nil
}

// route is the node that serves org for a request reaching n, as the
// API routes it: n.Route, and on the node it names Route again, which
// must answer it serves the org (a request is never forwarded twice).
func (c *testCluster) route(ctx context.Context, n *Node, org string) (*Node, error) {
	urls, err := n.Route(ctx, org)
	if err != nil || len(urls) == 0 {
		return n, err
	}
	target := c.node(urls[0])
	if urls, err = target.Route(ctx, org); err != nil {
		return nil, err
	}
	if len(urls) > 0 {
		return nil, fmt.Errorf("%w: %s does not serve %s; retry", ErrUnavailable, target.cfg.NodeID, org)
	}
	return target, nil
}

// app is node n's store.
func (c *testCluster) app(n *Node) *service.App {
	return c.apps[slices.Index(c.nodes, n)]
}

// orgOn is an org that rendezvous hashing places on shard.
func orgOn(shard string, shards []string, prefix string) string {
	for i := 0; ; i++ {
		o := fmt.Sprintf("%s%d", prefix, i)
		if s, _ := ShardOf(o, shards, nil); s == shard {
			return o
		}
	}
}

// ackedWrite is a write a node acknowledged, and where the log has it.
type ackedWrite struct {
	w     service.Write
	shard string
	seq   uint64
}

// reference applies acked, the writes of one org, to a fresh store as
// the cluster's logs had them (the ids each log position seeds, the time
// JetStream stamped on it), in the org's order: the writes of its first
// shard by sequence, then those of the shard it moved to. It is the store
// of an org that never moved.
func (c *testCluster) reference(acked []ackedWrite, first string) *service.App {
	c.t.Helper()
	ref := openApp(c.t, c.t.TempDir())
	slices.SortFunc(acked, func(a, b ackedWrite) int {
		if a.shard != b.shard {
			if a.shard == first {
				return -1
			}
			return 1
		}
		return int(a.seq) - int(b.seq)
	})
	keys := testKeys(c.t, c.name)
	ctx := context.Background()
	seen := map[string]bool{}
	for _, a := range acked {
		pos := fmt.Sprintf("%s:%d", a.shard, a.seq)
		if seen[pos] {
			c.t.Fatalf("two acknowledged writes at %s", pos)
		}
		seen[pos] = true
		st, err := c.js.Stream(ctx, StreamName(c.name, a.shard))
		if err != nil {
			c.t.Fatal(err)
		}
		m, err := st.GetMsg(ctx, a.seq)
		if err != nil {
			c.t.Fatal(err)
		}
		_, err = ref.Apply(ctx, a.w, service.ApplyOptions{Now: m.Time.UTC(), IDs: engine.NewIDSource(keys.idSeed(StreamName(c.name, a.shard), a.seq))})
		if err != nil && !service.Refused(err) {
			c.t.Fatal(err)
		}
	}
	return ref
}

// records lists org's records in app.
func records(t *testing.T, app *service.App, org string) []string {
	t.Helper()
	r, err := app.OrgRecords(org)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// diff says how two record lists differ.
func diff(got, want []string) string {
	var b strings.Builder
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "+ %.300s\n", l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "- %.300s\n", l)
		}
	}
	return fmt.Sprintf("%d records, want %d:\n%s", len(got), len(want), b.String())
}

// writeLoad is writers and readers of one org: the writers send writes
// of every kind the org owns records of through the nodes in turn, with
// an idempotency key each, retried (through the next node) until
// acknowledged; the readers read the org through a node each time,
// waiting for the positions of the writes acknowledged before the read,
// and check that the read has every triplet acknowledged before it (a
// node serving an org it holds part of would not).
type writeLoad struct {
	c   *testCluster
	org string
	pos engine.Positions

	mu      sync.Mutex
	acked   []ackedWrite
	names   []string // the triplet sources acknowledged
	edges   atomic.Int64
	retried atomic.Int64
	reads   atomic.Int64
	unavail atomic.Int64 // reads answered ErrUnavailable (to retry)
	partial atomic.Int64
	failed  []string

	// pace is the writers' pause between rounds: a load the target's
	// nodes apply as fast as it comes (a move waits for them to keep up
	// before it pauses the org's writes).
	pace time.Duration

	stop chan struct{}
	wg   sync.WaitGroup
}

func (l *writeLoad) fail(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failed) < 10 {
		l.failed = append(l.failed, fmt.Sprintf(format, a...))
	}
}

// send sends w with key through the nodes from start until a node
// acknowledges it (or refuses it for what it is).
func (l *writeLoad) send(start int, key string, w service.Write) (service.WriteResult, bool) {
	ctx := context.Background()
	for try := 0; try < 400; try++ {
		n := l.c.nodes[(start+try)%len(l.c.nodes)]
		target, err := l.c.route(ctx, n, l.org)
		if err == nil {
			kctx, _ := service.WithIdempotencyKey(ctx, l.org, key) // the caller: one per org, as a token is
			var res service.WriteResult
			if res, err = target.Write(kctx, w); err == nil || service.Refused(err) {
				if err != nil {
					l.fail("write %s refused: %v", key, err)
					return res, false
				}
				return res, true
			}
		}
		if !errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrOutcomeUnknown) {
			l.fail("write %s: %v", key, err)
			return service.WriteResult{}, false
		}
		l.retried.Add(1)
		time.Sleep(20 * time.Millisecond)
	}
	l.fail("write %s never acknowledged", key)
	return service.WriteResult{}, false
}

// writes are the i-th round of writer w: an import of two new triplets,
// and in turn an observation, a memory configuration, a lease claim, an
// enqueue, an injection log, a tool result.
func (l *writeLoad) writes(w, i int) []service.Write {
	org := l.org
	imp := service.Write{Kind: service.WriteImport, Org: org, Project: "p", Triplets: []engine.TripletInput{
		{Source: fmt.Sprintf("W%dR%dA", w, i), Relationship: "calls", Target: fmt.Sprintf("Hub%d", i%3)},
		{Source: fmt.Sprintf("W%dR%dB", w, i), Relationship: "depends_on", Target: fmt.Sprintf("Hub%d", (i+1)%3), TargetDescription: "a hub"}}}
	ses := fmt.Sprintf("ses_w%d_%d", w, i/6)
	doc := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	var more service.Write
	switch i % 6 {
	case 0:
		more = service.Write{Kind: service.WriteObservations, Org: org, Project: "q", Observations: []engine.ObservationInput{{Content: fmt.Sprintf("writer %d noted round %d", w, i)}}}
	case 1:
		more = service.Write{Kind: service.WriteMemoryConfig, Org: org, Project: fmt.Sprintf("p%d", w), Doc: doc(compose.MemoryConfig{MemoryEnabled: true, TechStack: []string{fmt.Sprint(i)}})}
	case 2:
		more = service.Write{Kind: service.WriteLeaseClaim, Org: org, Session: ses, Seconds: 600, Lease: &delivery.Lease{SessionID: ses, WorkerID: fmt.Sprintf("w%d", w), OrgID: org}}
	case 3:
		more = service.Write{Kind: service.WriteEnqueue, Org: org, Session: ses, Inject: &service.InjectEntry{OrgID: org, SessionID: ses, Text: fmt.Sprintf("block %d of writer %d", i, w)}}
	case 4:
		more = service.Write{Kind: service.WriteInjectionLog, Org: org, Session: ses, Log: &sessionlog.InjectionLog{SessionID: ses, OrgID: org, WorkType: "bug_fix", QueryText: fmt.Sprint(i)}}
	case 5:
		more = service.Write{Kind: service.WriteToolResult, Org: org, Project: "p", ToolResult: &compose.ToolResult{SessionID: ses, Scope: engine.Tenant{Org: org, Project: "p"}, Tool: "go test", Error: fmt.Sprintf("undefined: F%d", i)}}
	}
	return []service.Write{imp, more}
}

// start runs writers and readers until stopped.
func (l *writeLoad) start(writers, readers int) {
	l.stop = make(chan struct{})
	for w := range writers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				case <-time.After(l.pace):
				}
				for j, wr := range l.writes(w, i) {
					res, ok := l.send(w+i+j, fmt.Sprintf("w%d-r%d-%d", w, i, j), wr)
					if !ok {
						return
					}
					l.pos.Note(res.Shard, res.Seq)
					l.mu.Lock()
					l.acked = append(l.acked, ackedWrite{w: wr, shard: res.Shard, seq: res.Seq})
					if wr.Kind == service.WriteImport {
						for _, tr := range wr.Triplets {
							l.names = append(l.names, tr.Source)
						}
						l.edges.Add(int64(len(wr.Triplets)))
					}
					l.mu.Unlock()
				}
			}
		}()
	}
	for r := range readers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 7))
			for {
				select {
				case <-l.stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				l.read(rng)
			}
		}()
	}
}

// read reads the org's triplets through a node and checks it has every
// triplet acknowledged before.
func (l *writeLoad) read(rng *rand.Rand) {
	ctx := context.Background()
	want, pos := l.edges.Load(), l.pos.String()
	n := l.c.nodes[rng.IntN(len(l.c.nodes))]
	target, err := l.c.route(ctx, n, l.org)
	if err == nil {
		err = target.WaitApplied(ctx, pos)
	}
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			l.fail("read through %s: %v", n.cfg.NodeID, err)
		}
		if l.unavail.Add(1) < 4 {
			l.c.t.Logf("a read answered unavailable (to retry): %v", err)
		}
		return
	}
	g, err := l.c.app(target).Store.Size(engine.Tenant{Org: l.org, Project: "p"})
	if err != nil {
		l.fail("read on %s: %v", target.cfg.NodeID, err)
		return
	}
	l.reads.Add(1)
	if int64(g.Edges) < want {
		l.partial.Add(1)
		ts, _ := l.c.app(target).Store.QueryTriplets(engine.Tenant{Org: l.org, Project: "p"}, engine.TripletQuery{Limit: 1000})
		var have []string
		for _, tr := range ts {
			have = append(have, tr.Source)
		}
		l.mu.Lock()
		var missing []string
		for _, a := range l.acked {
			for _, tr := range a.w.Triplets {
				if !slices.Contains(have, tr.Source) {
					missing = append(missing, fmt.Sprintf("%s@%s:%d", tr.Source, a.shard, a.seq))
				}
			}
		}
		l.mu.Unlock()
		l.fail("missing %v; have %v", missing, have)
		l.fail("a read on %s (reached through %s) saw %d triplets of %d acknowledged before it (positions %s)", target.cfg.NodeID, n.cfg.NodeID, g.Edges, want, pos)
	}
}

func (l *writeLoad) halt() {
	close(l.stop)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.failed {
		l.c.t.Error(f)
	}
}

// TestMoveUnderLoad: three nodes (three NATS servers, every shard on two
// nodes), an org moved from shard A to shard B while writers write it
// (every kind of record it owns) through every node and readers read it.
// Every node of B ends with the org's records equal to those of a store
// that applied the acknowledged writes once each, without a move (no
// write lost or doubled, ids and times as the logs gave them); the node
// of A alone holds nothing of it; no read saw fewer triplets than were
// acknowledged before it; orgs on A and B that did not move are equal on
// their nodes.
func TestMoveUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server NATS cluster and three nodes")
	}
	c := threeNodes(t)
	// Shards A and B whose holders differ: one node holds both, one A
	// alone, one B alone.
	var from, to string
	for _, a := range c.shards {
		for _, b := range c.shards {
			if a != b && !slices.Equal(c.holders(a), c.holders(b)) && from == "" {
				from, to = a, b
			}
		}
	}
	if from == "" {
		t.Skip("every shard on the same two nodes")
	}
	org, stay, there := orgOn(from, c.shards, "org_m"), orgOn(from, c.shards, "org_s"), orgOn(to, c.shards, "org_t")
	t.Logf("moving %s from %s (nodes %v) to %s (nodes %v)", org, from, c.holders(from), to, c.holders(to))
	l := &writeLoad{c: c, org: org, pace: 120 * time.Millisecond}
	others := map[string]*writeLoad{stay: {c: c, org: stay, pace: 200 * time.Millisecond}, there: {c: c, org: there, pace: 200 * time.Millisecond}}
	// A history to copy first, then the load.
	var seed sync.WaitGroup
	for w := range 4 {
		seed.Add(1)
		go func() {
			defer seed.Done()
			for i := range 15 {
				wr := service.Write{Kind: service.WriteImport, Org: org, Project: "p", Triplets: []engine.TripletInput{{Source: fmt.Sprintf("Seed%d_%d", w, i), Relationship: "calls", Target: "Hub0"}}}
				if res, ok := l.send(w, fmt.Sprintf("seed-%d-%d", w, i), wr); ok {
					l.mu.Lock()
					l.acked = append(l.acked, ackedWrite{w: wr, shard: res.Shard, seq: res.Seq})
					l.names = append(l.names, wr.Triplets[0].Source)
					l.mu.Unlock()
					l.pos.Note(res.Shard, res.Seq)
					l.edges.Add(1)
				}
			}
		}()
	}
	seed.Wait()
	l.start(3, 2)
	for _, o := range others {
		o.start(1, 0)
	}
	time.Sleep(1500 * time.Millisecond)
	src := c.nodes[c.holders(from)[0]]
	began := time.Now()
	l.mu.Lock()
	before := len(l.acked)
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rec, err := src.Place(ctx, org, to)
	for err == nil && rec != nil && !rec.Ended() && ctx.Err() == nil {
		rec, err = src.Place(ctx, org, to)
	}
	if err != nil || rec == nil || rec.Phase != PhaseDone {
		t.Fatalf("move: %+v %v", rec, err)
	}
	l.mu.Lock()
	during := len(l.acked) - before
	l.mu.Unlock()
	t.Logf("moved in %s: %d entries, %d bytes copied, writes paused %d ms, %d writes acknowledged meanwhile", time.Since(began).Round(time.Millisecond),
		rec.Copied, rec.Bytes, rec.PausedMs, during)
	atMove := l.reads.Load()
	time.Sleep(1500 * time.Millisecond)
	l.halt()
	for _, o := range others {
		o.halt()
	}
	t.Logf("%d writes acknowledged (%d retried), %d reads (%d after the move, %d answered unavailable), none partial", len(l.acked), l.retried.Load(),
		l.reads.Load(), l.reads.Load()-atMove, l.unavail.Load())
	shards := map[string]bool{}
	for _, a := range l.acked {
		shards[a.shard] = true
	}
	if !shards[from] || !shards[to] {
		t.Fatalf("writes acknowledged on %v: want some before the move (%s) and some after (%s)", shards, from, to)
	}

	// Every node of B holds what a store that never moved holds.
	want := records(t, c.reference(slices.Clone(l.acked), from), org)
	last := map[string]uint64{}
	for _, a := range l.acked {
		last[a.shard] = max(last[a.shard], a.seq)
	}
	for _, i := range c.holders(to) {
		waitApplied(t, c.nodes[i], to, max(last[to], rec.Flip))
		if got := records(t, c.apps[i], org); !slices.Equal(got, want) {
			t.Errorf("%s, a node of %s: %s", c.nodes[i].cfg.NodeID, to, diff(got, want))
		}
	}
	var names []string
	for _, l := range want {
		if strings.HasPrefix(l, "edge ") {
			var tr engine.Triplet
			json.Unmarshal([]byte(strings.SplitN(l, " ", 3)[2]), &tr)
			names = append(names, tr.Source)
		}
	}
	for _, n := range l.names {
		if !slices.Contains(names, n) {
			t.Errorf("acknowledged triplet %s missing", n)
		}
	}
	// The node of A alone removed its copy; the others hold theirs.
	for _, i := range c.holders(from) {
		if slices.Contains(c.holders(to), i) {
			continue
		}
		waitApplied(t, c.nodes[i], from, rec.Drop)
		if got := records(t, c.apps[i], org); !slices.Equal(got, []string{`plan {"features":{}}`}) {
			t.Errorf("%s, a node of %s alone, kept the moved org: %s", c.nodes[i].cfg.NodeID, from, diff(got, nil))
		}
		if has, err := c.apps[i].OrgHasData(org); has || err != nil {
			t.Errorf("%s has data of the moved org: %v", c.nodes[i].cfg.NodeID, err)
		}
	}
	for o, ol := range others {
		s, _ := ShardOf(o, c.shards, nil)
		hs := c.holders(s)
		lastSeq := uint64(0)
		for _, a := range ol.acked {
			lastSeq = max(lastSeq, a.seq)
		}
		for _, i := range hs {
			waitApplied(t, c.nodes[i], s, lastSeq)
		}
		ref := records(t, c.reference(slices.Clone(ol.acked), s), o)
		for _, i := range hs {
			if got := records(t, c.apps[i], o); !slices.Equal(got, ref) {
				t.Errorf("%s's records on %s: %s", o, c.nodes[i].cfg.NodeID, diff(got, ref))
			}
		}
	}
	// The status of every node reports the move done.
	for _, n := range c.nodes {
		found := false
		for end := time.Now().Add(10 * time.Second); !found && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			for _, m := range n.Status().Moves {
				found = found || (m.ID == rec.ID && m.Phase == PhaseDone)
			}
		}
		if !found {
			t.Errorf("%s's status does not report the move done: %+v", n.cfg.NodeID, n.Status().Moves)
		}
	}
}

// threeNodes starts three nodes of cluster "mv", each with an embedded
// NATS server of one NATS cluster, shards s0 to s3 on two nodes each (s0
// on n1 and n3, s3 on n2 and n3),
// and waits until they settled.
func threeNodes(t *testing.T) *testCluster {
	t.Helper()
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	c := &testCluster{t: t, name: "mv", shards: []string{"s0", "s1", "s2", "s3"}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, 3)
	c.nodes, c.apps = make([]*Node, 3), make([]*service.App, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("n%d", i+1)
			n, app, err := tryNode(t, Config{Cluster: c.name, NodeID: id, Replicas: 2, Shards: c.shards,
				Embed: &EmbedOptions{Name: id, StoreDir: t.TempDir(), Port: -1, Cluster: "mv-nats", ClusterPort: ports[i], Routes: routes, Keys: testKeys(t, c.name)}})
			mu.Lock()
			c.nodes[i], c.apps[i], errs[i] = n, app, err
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c.js = jsOfKeyed(t, c.nodes[0].NATS(), testKeys(t, c.name))
	c.settle()
	return c
}
