package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

// GlobalShard is the log of the writes every node applies: tokens,
// policies and operator settings.
const GlobalShard = "global"

// Config configures a cluster node.
type Config struct {
	Cluster string // the cluster's name: its streams and buckets are named after it
	NodeID  string // unique in the cluster
	// NATSURL is the NATS cluster to join (nats://host:port, several
	// comma-separated); with Embed, the embedded server's is used.
	NATSURL string
	Embed   *EmbedOptions
	// Advertise is this node's HTTP base URL, to which other nodes proxy
	// requests of the orgs it serves.
	Advertise string
	// Shards are the shard ids the first node writes to the placement map
	// (default s0, s1, s2); later nodes read the map.
	Shards []string
	// Replicas is the number of copies of every stream and bucket in
	// JetStream and of kgctx nodes applying each shard (default 3; at most
	// the number of NATS servers).
	Replicas int
	// ReadWait bounds how long a request waits for the sequences it names
	// (default 10 s).
	ReadWait time.Duration
	Logger   *slog.Logger
}

// Errors a node answers with.
var (
	// ErrUnavailable: NATS or the nodes a request needs are out of reach;
	// the request changed nothing, or (a write) may be retried.
	ErrUnavailable = service.ErrUnavailable
)

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// member is a node's record in the members bucket, refreshed every
// heartbeat.
type member struct {
	ID      string   `json:"id"`
	URL     string   `json:"url"`
	Serving []string `json:"serving"` // shards applied up to date and served
	At      int64    `json:"at"`      // unix milliseconds of the heartbeat
}

const (
	// publishWait bounds the wait for JetStream's ack of a write: without
	// a quorum the write is refused (503) after it.
	publishWait = 10 * time.Second
	heartbeat   = time.Second
	deadAfter   = 6 * time.Second // a member silent this long is gone
)

// Node is one kgctx process of a cluster: it applies its shards' logs to
// its store, publishes the writes it receives and tells the API where the
// requests of an org are served.
type Node struct {
	cfg    Config
	app    *service.App
	log    *slog.Logger
	ns     *server.Server // embedded NATS, or nil
	nc     *nats.Conn
	js     jetstream.JetStream
	place  *Placement
	shards []string
	nodes  jetstream.KeyValue
	origin string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[string]*follower // shards applied here
	members map[string]member    // live members, self included
}

type follower struct {
	ap      *Applier
	stop    context.CancelFunc
	done    chan struct{}
	ready   bool   // caught up with the log as it was when it started
	target  uint64 // the log's last sequence when it started
	serving bool
}

// Validate checks the names a node is given: the cluster's, the node's
// and the shards' (serve checks them before it opens the store).
func (c Config) Validate() error {
	if !idRE.MatchString(c.Cluster) {
		return fmt.Errorf("cluster: name %q: want 1-63 of a-z, 0-9 and -", c.Cluster)
	}
	if !idRE.MatchString(c.NodeID) {
		return fmt.Errorf("cluster: node id %q: want 1-63 of a-z, 0-9 and -", c.NodeID)
	}
	for _, s := range c.Shards {
		if !idRE.MatchString(s) || s == GlobalShard {
			return fmt.Errorf("cluster: shard id %q: want 1-63 of a-z, 0-9 and -, not %q", s, GlobalShard)
		}
	}
	return nil
}

// Start joins the cluster: connects to NATS (starting the embedded server
// first if asked), makes the streams and buckets, and starts applying the
// shards this node holds. It returns once the global log is applied up to
// date, so tokens work from the first request. Close leaves.
func Start(ctx context.Context, app *service.App, cfg Config) (*Node, error) {
	if len(cfg.Shards) == 0 {
		cfg.Shards = []string{"s0", "s1", "s2"}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Advertise == "" {
		return nil, errors.New("cluster: the node's advertised HTTP URL is required")
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 3
	}
	if cfg.ReadWait <= 0 {
		cfg.ReadWait = 10 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	n := &Node{cfg: cfg, app: app, log: log, running: map[string]*follower{}, members: map[string]member{}}
	var b [6]byte
	rand.Read(b[:])
	n.origin = cfg.NodeID + "/" + hex.EncodeToString(b[:])
	ok := false
	defer func() {
		if !ok {
			n.close()
		}
	}()
	url := cfg.NATSURL
	if cfg.Embed != nil {
		s, err := StartNATS(*cfg.Embed)
		if err != nil {
			return nil, err
		}
		n.ns, url = s, s.ClientURL()
	}
	if url == "" {
		return nil, errors.New("cluster: a NATS URL or an embedded server is required")
	}
	nc, err := nats.Connect(url, nats.Name("kgctx "+cfg.NodeID), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to NATS at %s: %w", url, err)
	}
	n.nc = nc
	if n.js, err = jetstream.New(nc); err != nil {
		return nil, err
	}
	// A cluster being formed has no JetStream meta leader for a while:
	// the setup is retried until ctx ends.
	if err := retry(ctx, func(ctx context.Context) error {
		err := n.setup(ctx)
		if err != nil {
			log.Debug("cluster: set-up (retried)", "err", err)
		}
		return err
	}); err != nil {
		return nil, err
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	if err := retry(ctx, func(ctx context.Context) error { return n.place.Watch(n.ctx) }); err != nil {
		return nil, err
	}
	if err := n.beat(ctx); err != nil {
		return nil, err
	}
	n.reconcile()
	n.wg.Add(1)
	go n.loop()
	if err := n.waitReady(ctx, GlobalShard); err != nil {
		return nil, err
	}
	ok = true
	return n, nil
}

// retry calls f until it succeeds or ctx ends. Each attempt's timeout
// grows from 1 to 8 s: a forming cluster answers at
// once or not at all, a loaded one slowly.
func retry(ctx context.Context, f func(context.Context) error) error {
	for wait := time.Second; ; wait = min(2*wait, 8*time.Second) {
		actx, cancel := context.WithTimeout(ctx, wait)
		err := f(actx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: %w (%v)", err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (n *Node) setup(ctx context.Context) error {
	var err error
	if n.place, err = OpenPlacement(ctx, n.js, n.cfg.Cluster, n.cfg.Replicas); err != nil {
		return err
	}
	b, _ := json.Marshal(n.cfg.Shards)
	if _, err := n.place.kv.Create(ctx, "shards", b); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return err
	}
	if n.shards, err = n.place.Shards(ctx); err != nil {
		return err
	}
	for _, s := range append([]string{GlobalShard}, n.shards...) {
		if err := EnsureShard(ctx, n.js, n.cfg.Cluster, s, n.cfg.Replicas); err != nil {
			return fmt.Errorf("cluster: stream of shard %s: %w", s, err)
		}
	}
	n.nodes, err = ensureKV(ctx, n.js, jetstream.KeyValueConfig{Bucket: "kgctx_" + n.cfg.Cluster + "_nodes",
		Replicas: n.cfg.Replicas, TTL: time.Minute})
	return err
}

// Close stops applying and leaves the cluster (the embedded NATS server
// stops too).
func (n *Node) Close() error {
	if n.nodes != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		n.nodes.Delete(ctx, n.cfg.NodeID)
		cancel()
	}
	n.close()
	return nil
}

func (n *Node) close() {
	if n.cancel != nil {
		n.cancel()
	}
	n.mu.Lock()
	for _, f := range n.running {
		f.stop()
	}
	n.mu.Unlock()
	n.wg.Wait()
	if n.nc != nil {
		n.nc.Close()
	}
	if n.ns != nil {
		n.ns.Shutdown()
		n.ns.WaitForShutdown()
	}
}

// NATS is the embedded server, or nil.
func (n *Node) NATS() *server.Server { return n.ns }

func (n *Node) loop() {
	defer n.wg.Done()
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(n.ctx, heartbeat)
		if err := n.beat(ctx); err != nil && n.ctx.Err() == nil {
			n.log.Warn("cluster: heartbeat", "err", err)
		}
		if !n.place.current() { // the watcher stopped (NATS restarted): watch again
			if err := n.place.Watch(n.ctx); err != nil && n.ctx.Err() == nil {
				n.log.Warn("cluster: placement", "err", err)
			}
		}
		cancel()
		n.reconcile()
	}
}

// beat publishes this node's record and reads the others'.
func (n *Node) beat(ctx context.Context) error {
	n.mu.Lock()
	me := member{ID: n.cfg.NodeID, URL: n.cfg.Advertise, At: time.Now().UnixMilli()}
	for s, f := range n.running {
		if f.serving {
			me.Serving = append(me.Serving, s)
		}
	}
	n.mu.Unlock()
	slices.Sort(me.Serving)
	b, _ := json.Marshal(me)
	if _, err := n.nodes.Put(ctx, n.cfg.NodeID, b); err != nil {
		return err
	}
	keys, err := n.nodes.ListKeys(ctx)
	if err != nil {
		return err
	}
	live := map[string]member{n.cfg.NodeID: me}
	now := time.Now().UnixMilli()
	for k := range keys.Keys() {
		if k == n.cfg.NodeID {
			continue
		}
		e, err := n.nodes.Get(ctx, k)
		if err != nil {
			continue
		}
		var m member
		if json.Unmarshal(e.Value(), &m) == nil && now-m.At < deadAfter.Milliseconds() {
			live[k] = m
		}
	}
	n.mu.Lock()
	n.members = live
	n.mu.Unlock()
	return nil
}

// holders are the nodes that hold shard: the Replicas live members of
// highest rendezvous weight (every member, for the global log).
func holders(shard string, members map[string]member, replicas int) []string {
	ids := make([]string, 0, len(members))
	for id := range members {
		ids = append(ids, id)
	}
	if shard == GlobalShard {
		slices.Sort(ids)
		return ids
	}
	w := func(id string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(shard))
		h.Write([]byte{0})
		h.Write([]byte(id))
		return mix(h.Sum64())
	}
	slices.SortFunc(ids, func(a, b string) int {
		wa, wb := w(a), w(b)
		switch {
		case wa > wb:
			return -1
		case wa < wb:
			return 1
		}
		return strings.Compare(a, b)
	})
	if len(ids) > replicas {
		ids = ids[:replicas]
	}
	return ids
}

// reconcile starts applying the shards this node now holds, and stops
// applying one it no longer holds once every holder serves it (so that
// an org never lacks a node answering for it).
func (n *Node) reconcile() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range append([]string{GlobalShard}, n.shards...) {
		hs := holders(s, n.members, n.cfg.Replicas)
		mine := slices.Contains(hs, n.cfg.NodeID)
		f := n.running[s]
		switch {
		case mine && f == nil:
			if err := n.startLocked(s); err != nil {
				n.log.Warn("cluster: start applying", "shard", s, "err", err)
			}
		case !mine && f != nil && f.serving:
			covered := true
			for _, h := range hs {
				if !slices.Contains(n.members[h].Serving, s) {
					covered = false
				}
			}
			if covered {
				n.log.Info("cluster: shard moved to other nodes; no longer applied here", "shard", s)
				f.stop()
				delete(n.running, s)
			}
		}
	}
}

func (n *Node) startLocked(shard string) error {
	ap, err := NewApplier(n.app, n.js, n.cfg.Cluster, shard, n.origin)
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(n.ctx)
	f := &follower{ap: ap, stop: stop, done: make(chan struct{})}
	n.running[shard] = f
	n.wg.Add(2)
	go func() {
		defer n.wg.Done()
		defer close(f.done)
		ap.Run(ctx)
	}()
	go func() { // ready once caught up with the log as it stands now
		defer n.wg.Done()
		var last uint64
		err := retry(ctx, func(ctx context.Context) error {
			st, err := n.js.Stream(ctx, StreamName(n.cfg.Cluster, shard))
			if err != nil {
				return err
			}
			info, err := st.Info(ctx)
			if err != nil {
				return err
			}
			last = info.State.LastSeq
			return nil
		})
		if err != nil {
			return
		}
		if err := ap.WaitFor(ctx, last); err != nil {
			return
		}
		n.mu.Lock()
		f.ready, f.serving, f.target = true, true, last
		n.mu.Unlock()
		n.log.Info("cluster: serving shard", "shard", shard, "applied", ap.Applied())
	}()
	return nil
}

func (n *Node) waitReady(ctx context.Context, shard string) error {
	for {
		n.mu.Lock()
		f := n.running[shard]
		ok := f != nil && f.serving
		n.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: shard %s not caught up: %w", shard, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// shardOf places org (the global log for "").
func (n *Node) shardOf(ctx context.Context, org string) (string, error) {
	if org == "" {
		return GlobalShard, nil
	}
	s, err := n.place.ShardOf(ctx, org)
	if err != nil {
		return "", fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
	}
	return s, nil
}

// Placement says on which shard org is and whether an override put it
// there.
func (n *Node) Placement(ctx context.Context, org string) (string, bool, error) {
	s, over, err := n.place.Lookup(ctx, org)
	if err != nil {
		return "", false, fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
	}
	return s, over, nil
}

// Place overrides org's shard ("" removes the override). The API routes
// the request to a node serving the org's present shard: an org that
// already has data there is refused (its data would stay behind).
func (n *Node) Place(ctx context.Context, org, shard string) error {
	cur, _, err := n.Placement(ctx, org)
	if err != nil {
		return err
	}
	if shard != "" && !slices.Contains(n.shards, shard) {
		return fmt.Errorf("%w: %q is not a shard of the cluster (%s)", engine.ErrInvalidInput, shard, strings.Join(n.shards, ", "))
	}
	next := shard
	if next == "" {
		next, _ = ShardOf(org, n.shards, nil)
	}
	if next != cur {
		for _, t := range n.app.Store.Tenants() {
			if t.Org == org {
				return fmt.Errorf("%w: org %s has data on shard %s; moving an org's data to another shard is not supported", engine.ErrConflict, org, cur)
			}
		}
	}
	if err := n.place.Override(ctx, org, shard); err != nil {
		return fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
	}
	// Answer once this node's copy has it.
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if s, _, err := n.place.Lookup(ctx, org); err == nil && s == next {
			return nil
		}
	}
	return nil
}

// Write publishes w to its shard's log and answers once this node has
// applied it (service.Writer). The API sends a node only the writes of
// the orgs it serves (Route).
func (n *Node) Write(ctx context.Context, w service.Write) (service.WriteResult, error) {
	shard := GlobalShard
	if !w.Global() {
		var err error
		if shard, err = n.shardOf(ctx, w.Org); err != nil {
			return service.WriteResult{}, err
		}
	}
	n.mu.Lock()
	f := n.running[shard]
	n.mu.Unlock()
	if f == nil {
		return service.WriteResult{}, fmt.Errorf("%w: this node does not apply shard %s", ErrUnavailable, shard)
	}
	pctx, pcancel := context.WithTimeout(ctx, publishWait)
	seq, err := Publish(pctx, n.js, n.cfg.Cluster, shard, w, n.origin)
	pcancel()
	if err != nil {
		return service.WriteResult{}, fmt.Errorf("%w: the write was not acknowledged by JetStream, nothing was written: %v", ErrUnavailable, err)
	}
	// Applying here follows the log within moments; ReadWait bounds the
	// wait when this node's applier is stalled (its NATS server lost).
	wctx, cancel := context.WithTimeout(ctx, n.cfg.ReadWait)
	defer cancel()
	res, err := f.ap.Result(wctx, seq)
	if err != nil && wctx.Err() != nil {
		return service.WriteResult{Seq: seq, Shard: shard}, fmt.Errorf("%w: written at %s:%d but not yet applied here", ErrUnavailable, shard, seq)
	}
	res.Seq, res.Shard = seq, shard
	return res, err
}

// WaitApplied waits, within Config.ReadWait, until this node has applied
// the log positions header names ("SHARD:SEQ", comma-separated), for the
// shards it applies; the others are for the node a request is proxied to.
func (n *Node) WaitApplied(ctx context.Context, header string) error {
	pos, err := engine.ParsePositions(header)
	if err != nil {
		return fmt.Errorf("%w: %v", service.ErrBadSequence, err)
	}
	if len(pos) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.ReadWait)
	defer cancel()
	for shard, seq := range pos {
		n.mu.Lock()
		f := n.running[shard]
		n.mu.Unlock()
		if f == nil {
			continue
		}
		if err := f.ap.WaitFor(ctx, seq); err != nil {
			return fmt.Errorf("%w: %s:%d not applied on this node within %s", ErrUnavailable, shard, seq, n.cfg.ReadWait)
		}
	}
	return nil
}

// Route says where the requests of org are served: none for this node,
// else the base URLs of the live nodes that serve the org's shard, in
// rendezvous order.
func (n *Node) Route(ctx context.Context, org string) ([]string, error) {
	shard, err := n.shardOf(ctx, org)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if f := n.running[shard]; f != nil && f.serving {
		return nil, nil
	}
	var urls []string
	for _, id := range holders(shard, n.members, len(n.members)) {
		if m := n.members[id]; id != n.cfg.NodeID && slices.Contains(m.Serving, shard) {
			urls = append(urls, m.URL)
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("%w: no live node serves shard %s (org %s) yet", ErrUnavailable, shard, org)
	}
	return urls, nil
}

// Status is what a node reports of itself.
type Status struct {
	Cluster string            `json:"cluster"`
	Node    string            `json:"node"`
	Applied map[string]uint64 `json:"applied"` // per shard applied here
	Serving []string          `json:"serving"`
	Members []Member          `json:"members"` // live, this node included
}

// Member is a live node as the members bucket shows it.
type Member struct {
	ID      string   `json:"id"`
	URL     string   `json:"url"`
	Serving []string `json:"serving"`
}

// Status reports the node's view of the cluster.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := Status{Cluster: n.cfg.Cluster, Node: n.cfg.NodeID, Applied: map[string]uint64{}, Serving: []string{}, Members: []Member{}}
	for _, m := range n.members {
		st.Members = append(st.Members, Member{ID: m.ID, URL: m.URL, Serving: append([]string{}, m.Serving...)})
	}
	for s, f := range n.running {
		st.Applied[s] = f.ap.Applied()
		if f.serving {
			st.Serving = append(st.Serving, s)
		}
	}
	slices.SortFunc(st.Members, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	slices.Sort(st.Serving)
	return st
}

// HoldsShard reports whether node id holds shard (applies and serves it)
// when the live members are nodes, each shard held by replicas of them.
func HoldsShard(shard string, nodes []string, id string, replicas int) bool {
	m := map[string]member{}
	for _, n := range nodes {
		m[n] = member{ID: n}
	}
	return slices.Contains(holders(shard, m, replicas), id)
}
