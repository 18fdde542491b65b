package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

func TestReadSecret(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := strings.Repeat("s", 32)
	if b, err := ReadSecret(write("ok", good+"\n", 0o600)); err != nil || string(b) != good {
		t.Fatalf("a private 32-byte secret with a newline: %q %v", b, err)
	}
	if b, err := ReadSecret(write("two", good+"\n\n", 0o400)); err != nil || string(b) != good+"\n" {
		t.Fatalf("one trailing newline is trimmed, not two: %q %v", b, err)
	}
	for name, c := range map[string]struct {
		content string
		mode    os.FileMode
		want    string
	}{
		"group": {good, 0o640, "group or others"}, "world": {good, 0o604, "group or others"},
		"short": {strings.Repeat("s", 31) + "\n", 0o600, "at least 32"},
	} {
		if _, err := ReadSecret(write(name, c.content, c.mode)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
	if _, err := ReadSecret(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file accepted")
	}
	if _, err := NewKeys([]byte("short"), "c"); err == nil {
		t.Error("NewKeys took a short secret")
	}
}

// startNode opens a store in a temporary directory and starts a node of
// it; both are closed at the test's end.
func startNode(t *testing.T, cfg Config) (*Node, *service.App) {
	t.Helper()
	n, app, err := tryNode(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n, app
}

func tryNode(t *testing.T, cfg Config) (*Node, *service.App, error) {
	t.Helper()
	app := openApp(t, t.TempDir())
	if cfg.Secret == nil {
		cfg.Secret = testSecret
	}
	if cfg.Advertise == "" {
		cfg.Advertise = "http://" + cfg.NodeID + ".invalid"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n, err := Start(ctx, app, cfg)
	if err != nil {
		return nil, app, err
	}
	t.Cleanup(func() { n.Close() })
	return n, app, nil
}

// stranger connects to url without the cluster's secret.
func stranger(t *testing.T, url string) (*nats.Conn, jetstream.JetStream) {
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
	return nc, js
}

// TestEmbeddedNATSRefusesStrangers: a node's embedded NATS server takes
// only the credentials derived from the cluster secret (a client without
// them, or with another secret's, is refused), limits them to the
// cluster's subjects, and a node with another secret cannot join through
// it.
func TestEmbeddedNATSRefusesStrangers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster node")
	}
	n, app := startNode(t, Config{Cluster: "c1", NodeID: "n1", Replicas: 1, Shards: []string{"s0"},
		Embed: &EmbedOptions{Name: "n1", StoreDir: t.TempDir(), Port: -1}})
	url := n.NATS().ClientURL()
	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Fatal("a client without credentials connected to the embedded NATS")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("a client without credentials: %v, want an authorization violation", err)
	}
	other, _ := NewKeys([]byte("another-secret-of-at-least-32-bytes!!"), "c1")
	user, pass := other.NATSUser()
	if nc, err := nats.Connect(url, nats.UserInfo(user, pass)); err == nil {
		nc.Close()
		t.Fatal("another secret's credentials connected")
	}
	// The node's own credentials are confined to its cluster's subjects.
	user, pass = testKeys(t, "c1").NATSUser()
	perm := make(chan error, 4)
	nc, err := nats.Connect(url, nats.UserInfo(user, pass), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { perm <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Subscribe("elsewhere.>", func(*nats.Msg) {})
	nc.Publish("kgctx.c2.s0.w", []byte("x"))
	// Nor may they delete the log.
	njs, _ := jetstream.New(nc)
	dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
	if err := njs.DeleteStream(dctx, StreamName("c1", "s0")); err == nil {
		t.Fatal("the node's user deleted a shard's stream")
	}
	dcancel()
	nc.Flush()
	for range 3 {
		select {
		case err := <-perm:
			if !errors.Is(err, nats.ErrPermissionViolation) {
				t.Fatalf("outside the cluster's subjects: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a subscription and a publish outside the cluster's subjects were not refused")
		}
	}
	// The node works within its permissions.
	ctx := context.Background()
	if _, err := n.Write(ctx, service.Write{Kind: service.WriteImport, Org: "org_a", Project: "p", Triplets: []engine.TripletInput{{Source: "A", Relationship: "calls", Target: "B"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Place(ctx, "org_new", "s0"); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, app.Store, engine.Tenant{Org: "org_a", Project: "p"}); len(got) != 1 {
		t.Fatalf("the write: %v", got)
	}
	// A token not yet known waits for the global log's position alone.
	if err := n.WaitGlobal(ctx, "s0:999999,global:0"); err != nil {
		t.Fatalf("WaitGlobal waited for a shard's position: %v", err)
	}
	n.beat(ctx)
	if e := n.natsErrs.Load(); e != 0 {
		t.Fatalf("the node met %d NATS errors (permissions too narrow?)", e)
	}
	// A node with another secret cannot join through it.
	_, _, err = tryNode(t, Config{Cluster: "c1", NodeID: "n2", Replicas: 1, NATSURL: url, Secret: []byte("another-secret-of-at-least-32-bytes!!")})
	if !errors.Is(err, ErrSecretMismatch) || !strings.Contains(err.Error(), "cluster secret differs") {
		t.Fatalf("a node with another secret: %v", err)
	}
}

// TestOtherSecretRefused: a node whose secret differs from the cluster's
// refuses to start, with a message that says so: on an open NATS (the
// cluster's marker does not verify) and with embedded servers (the
// others refuse its routes).
func TestOtherSecretRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts NATS servers")
	}
	open := testNATS(t, "open")
	startNode(t, Config{Cluster: "c1", NodeID: "n1", Replicas: 1, NATSURL: open.ClientURL()})
	_, _, err := tryNode(t, Config{Cluster: "c1", NodeID: "n2", Replicas: 1, NATSURL: open.ClientURL(), Secret: []byte("another-secret-of-at-least-32-bytes!!")})
	if !errors.Is(err, ErrSecretMismatch) || !strings.Contains(err.Error(), "the cluster secret differs from the one cluster c1 was made with") {
		t.Fatalf("another secret on an open NATS: %v", err)
	}

	// Embedded: two servers of the right secret, a third node of another.
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	for i := range 2 {
		s, err := StartNATS(EmbedOptions{Name: fmt.Sprintf("e%d", i), StoreDir: t.TempDir(), Port: -1, Cluster: "c2",
			ClusterPort: ports[i], Routes: routes, Keys: testKeys(t, "c2")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Shutdown)
	}
	_, _, err = tryNode(t, Config{Cluster: "c2", NodeID: "e2", Secret: []byte("another-secret-of-at-least-32-bytes!!"),
		Embed: &EmbedOptions{Name: "e2", StoreDir: t.TempDir(), Port: -1, Cluster: "c2", ClusterPort: ports[2], Routes: routes}})
	if !errors.Is(err, ErrSecretMismatch) || !strings.Contains(err.Error(), "refused this server's route credentials") {
		t.Fatalf("another secret with embedded servers: %v", err)
	}
}

// publishRaw publishes data to the shard's stream with headers h, signed
// with keys when keys is not nil (as a node would, or as a forger with
// another secret), and returns its sequence.
func publishRaw(t *testing.T, js jetstream.JetStream, cluster, shard string, keys *Keys, h nats.Header, data []byte) uint64 {
	t.Helper()
	if h.Get(idHeader) == "" {
		h.Set(idHeader, fmt.Sprintf("forged-%d", time.Now().UnixNano()))
	}
	if h.Get(atHeader) == "" {
		h.Set(atHeader, strconv.FormatInt(time.Now().UnixMilli(), 10))
	}
	if h.Get(jetstream.MsgIDHeader) == "" {
		h.Set(jetstream.MsgIDHeader, h.Get(idHeader))
	}
	if keys != nil {
		h.Set(macHeader, base64.StdEncoding.EncodeToString(keys.writeMAC(StreamName(cluster, shard), h, data)))
	}
	ack, err := js.PublishMsg(context.Background(), &nats.Msg{Subject: Subject(cluster, shard), Header: h, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitApplied waits until n has applied shard up to seq.
func waitApplied(t *testing.T, n *Node, shard string, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		n.mu.Lock()
		f := n.running[shard]
		n.mu.Unlock()
		if f != nil {
			if err := f.ap.WaitFor(ctx, seq); err == nil {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not apply %s:%d", n.cfg.NodeID, shard, seq)
}

// TestForgeriesOnOpenNATS: two nodes on a NATS that lets anyone publish
// (no auth). A client without the secret publishes a token write to the
// global log, imports to a shard's log, replays a node's write, and
// writes member records that claim every shard and placement overrides:
// no node's store, routing or placement changes, each refusal is
// counted, and the logs move on. Writes signed with the secret but of an
// org the shard does not hold, or of a kind of another log, are refused
// alike.
func TestForgeriesOnOpenNATS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts cluster nodes")
	}
	open := testNATS(t, "open")
	shards := []string{"s0", "s1"}
	n1, app1 := startNode(t, Config{Cluster: "c1", NodeID: "n1", Replicas: 1, Shards: shards, NATSURL: open.ClientURL()})
	n2, app2 := startNode(t, Config{Cluster: "c1", NodeID: "n2", Replicas: 1, Shards: shards, NATSURL: open.ClientURL()})
	nodes, apps := []*Node{n1, n2}, []*service.App{app1, app2}
	// Wait until each node serves the shards rendezvous gives it.
	for _, n := range nodes {
		for _, s := range shards {
			if HoldsShard(s, []string{"n1", "n2"}, n.cfg.NodeID, 1) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if err := n.waitReady(ctx, s); err != nil {
					t.Fatal(err)
				}
				cancel()
			}
		}
	}
	holder := func(shard string) (*Node, *service.App) {
		for i, n := range nodes {
			if HoldsShard(shard, []string{"n1", "n2"}, n.cfg.NodeID, 1) {
				return n, apps[i]
			}
		}
		t.Fatalf("no holder of %s", shard)
		return nil, nil
	}
	orgOn := func(shard string) string {
		for i := 0; ; i++ {
			if o := fmt.Sprintf("org_%d", i); func() bool { s, _ := ShardOf(o, shards, nil); return s == shard }() {
				return o
			}
		}
	}
	org0, org1 := orgOn("s0"), orgOn("s1")
	ctx := context.Background()
	routes := map[string][]string{}
	for _, n := range nodes {
		for _, o := range []string{org0, org1} {
			// Each node learns from the other's records which shards it
			// serves within a heartbeat or two.
			deadline := time.Now().Add(time.Minute)
			r, err := n.Route(ctx, o)
			for ; err != nil && time.Now().Before(deadline); r, err = n.Route(ctx, o) {
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				t.Fatal(err)
			}
			routes[n.cfg.NodeID+"/"+o] = r
		}
	}

	_, js := stranger(t, open.ClientURL())
	other, _ := NewKeys([]byte("another-secret-of-at-least-32-bytes!!"), "c1")
	keys := testKeys(t, "c1")
	evil := "kgx_forged-token-secret-0123456789abcdefghijkl"
	tokenWrite := mustJSON(t, service.Write{Kind: service.WriteToken, TokenHash: auth.TokenHash(evil),
		Token: &auth.Token{OrgID: org0, AgentID: "evil", Role: auth.RoleOrgAdmin}})
	importWrite := func(org string) []byte {
		return mustJSON(t, service.Write{Kind: service.WriteImport, Org: org, Project: "p",
			Triplets: []engine.TripletInput{{Source: "Forged", Relationship: "calls", Target: "Store"}}})
	}
	var last = map[string]uint64{}
	pub := func(shard string, k *Keys, h nats.Header, data []byte) {
		last[shard] = max(last[shard], publishRaw(t, js, "c1", shard, k, h, data))
	}
	// Unsigned, and signed with another secret.
	pub(GlobalShard, nil, nats.Header{}, tokenWrite)
	pub(GlobalShard, other, nats.Header{}, tokenWrite)
	pub("s0", nil, nats.Header{}, importWrite(org0))
	pub("s0", other, nats.Header{}, importWrite(org0))
	// A part of a split write, unsigned.
	pub("s1", nil, nats.Header{chunkHeader: []string{"0/2/10"}}, []byte("{\"kind\":"))
	// Signed with the secret (a node's mistake): an org of another shard,
	// a global kind on a shard's log, a shard's kind on the global log,
	// a write made long before the log stored it.
	pub("s0", keys, nats.Header{}, importWrite(org1))
	pub("s0", keys, nats.Header{}, tokenWrite)
	pub(GlobalShard, keys, nats.Header{}, importWrite(org0))
	pub("s0", keys, nats.Header{atHeader: []string{strconv.FormatInt(time.Now().Add(-10*time.Minute).UnixMilli(), 10)}}, importWrite(org0))

	// A node's own write, replayed by the stranger: under its message id
	// (JetStream drops it) and under another (the applier refuses it).
	h0, a0 := holder("s0")
	res, err := h0.Write(ctx, service.Write{Kind: service.WriteObservations, Org: org0, Project: "p", Observations: []engine.ObservationInput{{Content: "said once"}}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, StreamName("c1", "s0"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(ctx, res.Seq)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
	if err != nil || !ack.Duplicate {
		t.Fatalf("a replay under its message id: %+v %v, want dropped as a duplicate", ack, err)
	}
	h := nats.Header{}
	for k, v := range m.Header {
		h[k] = v
	}
	h.Set(jetstream.MsgIDHeader, "replayed")
	pub("s0", nil, h, m.Data)

	// Member records claiming every shard, placement overrides and a
	// shard list: unsigned, and with another secret's MAC.
	nodesKV, err := js.KeyValue(ctx, MembersBucket("c1"))
	if err != nil {
		t.Fatal(err)
	}
	placeKV, err := js.KeyValue(ctx, PlacementBucket("c1"))
	if err != nil {
		t.Fatal(err)
	}
	claim := func(id string) member {
		return member{ID: id, URL: "http://attacker.invalid", Serving: append([]string{GlobalShard}, shards...), At: time.Now().Add(time.Hour).UnixMilli()}
	}
	for _, id := range []string{"evil", "n1", "n2"} {
		if _, err := nodesKV.Put(ctx, id, mustJSON(t, claim(id))); err != nil {
			t.Fatal(err)
		}
		v, _ := other.sealRecord(MembersBucket("c1"), id, claim(id))
		if _, err := nodesKV.Put(ctx, id, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := nodesKV.Delete(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	forgedPlace := map[string][]byte{"org." + org0: []byte("s1"), "shards": mustJSON(t, []string{"s9"})}
	v, _ := other.sealRecord(PlacementBucket("c1"), "org."+org1, overrideRecord{Shard: "s0"})
	forgedPlace["org."+org1] = v
	for k, v := range forgedPlace {
		if _, err := placeKV.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}

	// Every node has applied past the forgeries and seen the records.
	for _, n := range nodes {
		waitApplied(t, n, GlobalShard, last[GlobalShard])
	}
	h1, a1 := holder("s1")
	waitApplied(t, h0, "s0", last["s0"])
	waitApplied(t, h1, "s1", last["s1"])
	// A watcher delivers in order: once a node has seen the other's
	// heartbeat and an override written after the forgeries, it has seen
	// the forgeries.
	after := time.Now().UnixMilli()
	orgLate := orgOn("s1") + "_late"
	if _, err := n1.Place(ctx, orgLate, "s0"); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		other := map[string]string{"n1": "n2", "n2": "n1"}[n.cfg.NodeID]
		deadline := time.Now().Add(time.Minute)
		for {
			n.mu.Lock()
			seen := n.seen[other].m.At > after
			n.mu.Unlock()
			s, _, _ := n.Placement(ctx, orgLate)
			if seen && s == "s0" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s has not seen the records written after the forgeries", n.cfg.NodeID)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if c := n.Counters(); c.IgnoredRecords["members"] == 0 || c.IgnoredRecords["placement"] == 0 {
			t.Errorf("%s counted no forged record: %+v", n.cfg.NodeID, c)
		}
		n.beat(ctx)
		n.reconcile()
	}

	for i, app := range apps {
		if _, err := app.Tokens.LookupToken(evil); err == nil {
			t.Errorf("node %d took the forged token", i+1)
		}
	}
	if got := snapshot(t, a0.Store, engine.Tenant{Org: org0, Project: "p"}); len(got) != 0 {
		t.Errorf("forged imports of %s applied: %v", org0, got)
	}
	if got := snapshot(t, a1.Store, engine.Tenant{Org: org1, Project: "p"}); len(got) != 0 {
		t.Errorf("a write of %s on s0 applied: %v", org1, got)
	}
	var obs int
	a0.Store.View(func(v *engine.View) error { obs = v.ObservationCount(); return nil })
	if obs != 1 {
		t.Errorf("%d observations after a replay of one, want 1", obs)
	}
	for _, n := range nodes {
		for _, o := range []string{org0, org1} {
			r, err := n.Route(ctx, o)
			if err != nil || !slices.Equal(r, routes[n.cfg.NodeID+"/"+o]) {
				t.Errorf("%s routes %s to %v (%v), was %v", n.cfg.NodeID, o, r, err, routes[n.cfg.NodeID+"/"+o])
			}
			if s, over, err := n.Placement(ctx, o); err != nil || over || s != map[string]string{org0: "s0", org1: "s1"}[o] {
				t.Errorf("%s places %s on %s (override %v, %v)", n.cfg.NodeID, o, s, over, err)
			}
		}
		st := n.Status()
		if len(st.Members) != 2 {
			t.Errorf("%s sees members %+v", n.cfg.NodeID, st.Members)
		}
		for _, m := range st.Members {
			if strings.Contains(m.URL, "attacker") {
				t.Errorf("%s took a forged member record: %+v", n.cfg.NodeID, m)
			}
		}
	}
	got := map[string]uint64{}
	for _, n := range nodes {
		for r, c := range n.Counters().RejectedWrites {
			got[r] += c
		}
	}
	// Global forgeries are refused by both nodes; the others by the
	// shard's holder.
	want := map[string]uint64{RejectMAC: 2*2 + 2 + 1, RejectShard: 1, RejectKind: 2 + 1, RejectStale: 2}
	for r, c := range want {
		if got[r] != c {
			t.Errorf("rejected writes %s: %d, want %d (all: %v)", r, got[r], c, got)
		}
	}
	// The logs moved on: the cluster's writes still apply.
	if _, err := h0.Write(ctx, service.Write{Kind: service.WriteImport, Org: org0, Project: "p", Triplets: []engine.TripletInput{{Source: "Real", Relationship: "calls", Target: "Store"}}}); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, a0.Store, engine.Tenant{Org: org0, Project: "p"}); len(got) != 1 || !strings.HasPrefix(got[0], "Real") {
		t.Errorf("after the forgeries: %v", got)
	}
	tok := auth.NewTokenSecret()
	if _, err := n2.Write(ctx, service.Write{Kind: service.WriteToken, TokenHash: auth.TokenHash(tok), Token: &auth.Token{OrgID: org0, AgentID: "a", Role: auth.RoleAgent}}); err != nil {
		t.Fatal(err)
	}
	if _, err := app2.Tokens.LookupToken(tok); err != nil {
		t.Errorf("a real token after the forgeries: %v", err)
	}
}

// TestSplitWrites: a write over the NATS max payload is published in
// parts and applied whole, once, with its last part; one over the
// cluster's bound is refused as too large, nothing published; parts out
// of place, of a mismatched set or over the bound are refused; a set
// interrupted by a restart of the applier is completed after it.
func TestSplitWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster node")
	}
	keys := testKeys(t, "c1")
	srv, err := StartNATS(EmbedOptions{Name: "small", StoreDir: t.TempDir(), Port: -1, MaxPayload: 16 << 10, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	dir := t.TempDir()
	app := openApp(t, dir)
	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := Start(sctx, app, Config{Cluster: "c1", NodeID: "n1", Replicas: 1, Shards: []string{"s0"}, MaxWriteBytes: 1 << 20,
		NATSURL: srv.ClientURL(), Secret: testSecret, Advertise: "http://n1.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	ctx := context.Background()
	ten := engine.Tenant{Org: "org_a", Project: "p"}
	big := func(n int) []engine.TripletInput {
		var ts []engine.TripletInput
		for i := range n {
			ts = append(ts, engine.TripletInput{Source: fmt.Sprintf("Service%05d", i), Relationship: "calls", Target: fmt.Sprintf("Hub%d", i%7),
				TargetDescription: strings.Repeat("d", 40)})
		}
		return ts
	}
	res, err := n.Write(ctx, service.Write{Kind: service.WriteImport, Org: ten.Org, Project: ten.Project, Triplets: big(1500)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Seq < 5 || res.Import.Accepted != 1500 {
		t.Fatalf("a write of about 150 KiB over 16 KiB messages: sequence %d, %+v", res.Seq, res.Import)
	}
	var edges int
	app.Store.View(func(v *engine.View) error { edges = v.EdgeCount(); return nil })
	if edges != 1500 {
		t.Fatalf("%d triplets applied, want 1500", edges)
	}
	if _, err := n.Write(ctx, service.Write{Kind: service.WriteImport, Org: ten.Org, Project: ten.Project, Triplets: big(12000)}); !errors.Is(err, engine.ErrTooLarge) || !strings.Contains(err.Error(), "limit of 1048576 bytes") {
		t.Fatalf("a write over the bound: %v, want too large naming the limit", err)
	}

	js := n.js
	data := mustJSON(t, service.Write{Kind: service.WriteImport, Org: ten.Org, Project: "q", Triplets: big(3)})
	at := strconv.FormatInt(time.Now().UnixMilli(), 10) // the parts of a write share its time
	part := func(id string, i, count, size int, b []byte) uint64 {
		return publishRaw(t, js, "c1", "s0", keys, nats.Header{idHeader: []string{id}, chunkHeader: []string{fmt.Sprintf("%d/%d/%d", i, count, size)},
			jetstream.MsgIDHeader: []string{msgID(id, i)}, atHeader: []string{at}}, b)
	}
	third := len(data) / 3
	p0, p1, p2 := data[:third], data[third:2*third], data[2*third:]
	part("w-nofirst", 1, 3, len(data), p1) // no part 0
	part("w-mismatch", 0, 3, len(data), p0)
	part("w-mismatch", 1, 2, len(data), p1) // another count
	part("w-huge", 0, 3, 2<<20, p0)         // over the bound
	part("w-size", 0, 2, len(data), p0)
	last := part("w-size", 1, 2, len(data), p1) // short of its size
	waitApplied(t, n, "s0", last)
	if got := snapshot(t, app.Store, engine.Tenant{Org: ten.Org, Project: "q"}); len(got) != 0 {
		t.Fatalf("parts out of place applied: %v", got)
	}
	if c := n.Counters().RejectedWrites[RejectChunk]; c != 4 {
		t.Errorf("%d parts refused, want 4", c)
	}

	// Two parts, then the node stops and its store closes: an applier
	// on the store opened again completes the write with the third.
	part("w-restart", 0, 3, len(data), p0)
	waitApplied(t, n, "s0", part("w-restart", 1, 3, len(data), p1))
	n.Close()
	if err := closeApp(app); err != nil {
		t.Fatal(err)
	}
	app = openApp(t, dir)
	js = jsOfKeyed(t, srv, keys)
	ap, err := NewApplier(app, js, keys, "s0", ApplierOptions{Places: everywhere, MaxWriteBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	actx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ap.Run(actx) }()
	defer func() { stop(); <-done }()
	last = part("w-restart", 2, 3, len(data), p2)
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := ap.WaitFor(wctx, last); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, app.Store, engine.Tenant{Org: ten.Org, Project: "q"}); len(got) != 3 {
		t.Fatalf("the write split across a restart: %v", got)
	}
}

// jsOfKeyed connects to s with the cluster's credentials.
func jsOfKeyed(t *testing.T, s *server.Server, keys *Keys) jetstream.JetStream {
	t.Helper()
	user, pass := keys.NATSUser()
	nc, err := nats.Connect(s.ClientURL(), nats.UserInfo(user, pass))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestWriteIDsKeyed: the ids a logged write draws are seeded by the
// cluster secret: every replica draws the same, and no one who knows only
// the cluster's name and the log's sequences can compute them (they
// were those of engine.NewIDSource("STREAM/SEQ")).
func TestWriteIDsKeyed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	srv := testNATS(t, "ids")
	js := jsOf(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := EnsureShard(ctx, js, "c1", "s0", 1); err != nil {
		t.Fatal(err)
	}
	keys := testKeys(t, "c1")
	app := openApp(t, t.TempDir())
	ap, err := NewApplier(app, js, keys, "s0", ApplierOptions{Places: everywhere})
	if err != nil {
		t.Fatal(err)
	}
	actx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ap.Run(actx) }()
	defer func() { stop(); <-done }()
	ten := engine.Tenant{Org: "org_a", Project: "p"}
	w := service.Write{Kind: service.WriteImport, Org: ten.Org, Project: ten.Project, Triplets: []engine.TripletInput{{Source: "A", Relationship: "calls", Target: "B"}}}
	seq, _, err := Publish(ctx, js, keys, "s0", w, PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ap.WaitFor(ctx, seq); err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, app.Store, ten)
	applyWith := func(ids *engine.IDSource) []string {
		other := openApp(t, t.TempDir())
		if _, err := other.Apply(ctx, w, service.ApplyOptions{IDs: ids}); err != nil {
			t.Fatal(err)
		}
		return snapshot(t, other.Store, ten)
	}
	if replica := applyWith(engine.NewIDSource(keys.idSeed(StreamName("c1", "s0"), seq))); !slices.Equal(replica, got) {
		t.Errorf("a replica's ids differ: %v, %v", replica, got)
	}
	if guess := applyWith(engine.NewIDSource([]byte(fmt.Sprintf("%s/%d", StreamName("c1", "s0"), seq)))); slices.Equal(guess, got) {
		t.Errorf("the ids are those of the unkeyed seed: %v", got)
	}
}

// TestExternalNATSCredentials: a node joins a NATS of its own with the
// user and password of its URL; without them it presents the secret's
// derived credentials, which such a NATS refuses, and says what to give.
func TestExternalNATSCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
		Users: []*server.User{{Username: "ops", Password: "ops-password"}}})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(s.Shutdown)
	url := s.ClientURL()
	_, _, err = tryNode(t, Config{Cluster: "c1", NodeID: "n0", Replicas: 1, NATSURL: url})
	if err == nil || !strings.Contains(err.Error(), "--nats-creds") || strings.Contains(err.Error(), "ops-password") {
		t.Fatalf("a node without the NATS's credentials: %v", err)
	}
	withUser := strings.Replace(url, "nats://", "nats://ops:ops-password@", 1)
	n, _ := startNode(t, Config{Cluster: "c1", NodeID: "n1", Replicas: 1, Shards: []string{"s0"}, NATSURL: withUser})
	if _, err := n.Write(context.Background(), service.Write{Kind: service.WriteImport, Org: "org_a", Project: "p",
		Triplets: []engine.TripletInput{{Source: "A", Relationship: "calls", Target: "B"}}}); err != nil {
		t.Fatal(err)
	}
}
