package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	neturl "net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	// Secret is the cluster secret (ReadSecret), the same on every node:
	// the embedded NATS servers' credentials and every MAC (logged
	// writes, members, placement, forwarded principals) derive from it.
	Secret []byte
	// NATSCreds, NATSTLSCert, NATSTLSKey and NATSTLSCA authenticate to
	// an external NATS (a user:password in NATSURL works too); without
	// creds nor a URL user, the node presents the user and password
	// derived from Secret, which a kgctx node's embedded server requires.
	NATSCreds, NATSTLSCert, NATSTLSKey, NATSTLSCA string
	// MaxWriteBytes bounds a write (default DefaultMaxWriteBytes); one
	// over the NATS max payload is split, one over this refused (413).
	MaxWriteBytes int
	// StartTimeout bounds Start's retries of its NATS steps (connect,
	// streams and buckets, the placement marker, the watchers, the first
	// member record, catching up with the global log) while NATS is not
	// up or has no leader yet (default 2 minutes; Start's ctx may end it
	// sooner).
	StartTimeout time.Duration
}

// Errors a node answers with.
var (
	// ErrUnavailable: NATS or the nodes a request needs are out of reach;
	// the request changed nothing, or (a write) may be retried.
	ErrUnavailable = service.ErrUnavailable
	// ErrOutcomeUnknown: a write was sent to the log but JetStream's
	// acknowledgement did not come, or it is stored but not yet applied
	// here: it may or may not take effect. Retrying it with the same
	// idempotency key applies it at most once.
	ErrOutcomeUnknown = service.ErrOutcomeUnknown
)

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// member is a node's record in the members bucket (a signedRecord),
// refreshed every heartbeat.
type member struct {
	ID      string   `json:"id"`
	URL     string   `json:"url"`
	Serving []string `json:"serving"`        // shards applied up to date and served
	At      int64    `json:"at"`             // unix milliseconds of the heartbeat
	Left    bool     `json:"left,omitempty"` // the node left (Close)
	// LogVersion is the newest log version the node applies; none: a
	// release before versions (version 1).
	LogVersion int `json:"logVersion,omitempty"`
	// Applied is, per shard the node serves, the last sequence it
	// applied at the heartbeat (a move waits for its target's nodes to
	// take the copies before it pauses the org's writes).
	Applied map[string]uint64 `json:"applied,omitempty"`
}

// writeVersion is the log version this node publishes in: the oldest
// version of the live members and of every node that did not leave and
// was heard from within versionHold (this node's LogVersion when all
// apply it), so that in a rolling upgrade the nodes not yet upgraded
// apply every write. n.mu is held.
func (n *Node) writeVersion() int {
	v := LogVersion
	for _, m := range n.members {
		v = min(v, max(m.LogVersion, unversioned))
	}
	now := time.Now().UnixMilli()
	for k, s := range n.seen {
		if k != n.cfg.NodeID && !s.m.Left && now-s.m.At < versionHold.Milliseconds() {
			v = min(v, max(s.m.LogVersion, unversioned))
		}
	}
	return v
}

// versionHold is how long a node that did not leave keeps the write
// version at its own after its last heartbeat. Being counted gone
// (deadAfter) is not enough: a node of an older release that is only
// slow (a loaded machine, a long pause) and meets a write of a newer
// format refuses it as unsigned and moves past it for good (a release
// before versions checks the MAC without the version header), so the
// newer format waits until such a node left (Close writes Left), or was
// silent this long.
const versionHold = 10 * time.Minute

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
	keys   *Keys
	count  counters
	// natsErrs counts the errors NATS reported asynchronously
	// (permissions violations among them).
	natsErrs atomic.Int64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[string]*follower // shards applied here
	members map[string]member    // live members, self included
	seen    map[string]seenMember
	// watching: the members bucket's watcher runs (seen is current).
	watching bool
	// movers: the orgs whose move runs on this node.
	movers map[string]bool
}

// seenMember is the latest valid record of a node the watcher saw.
type seenMember struct {
	m  member
	at int64 // the signed record's time
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
	if cfg.MaxWriteBytes <= 0 {
		cfg.MaxWriteBytes = DefaultMaxWriteBytes
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	keys, err := NewKeys(cfg.Secret, cfg.Cluster)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	n := &Node{cfg: cfg, app: app, log: log, keys: keys, running: map[string]*follower{}, members: map[string]member{}, seen: map[string]seenMember{},
		movers: map[string]bool{}}
	var b [16]byte
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
		e := *cfg.Embed
		e.Keys = keys
		if e.Logger == nil {
			e.Logger = log
		}
		s, err := StartNATS(e)
		if err != nil {
			return nil, err
		}
		n.ns, url = s, s.ClientURL()
	}
	if url == "" {
		return nil, errors.New("cluster: a NATS URL or an embedded server is required")
	}
	// Every NATS step of the start is retried while NATS is not up yet,
	// or a cluster being formed (or one that lost a quorum) has no meta
	// leader or no leader of a bucket: until StartTimeout, or until it is
	// clear that the cluster's secret is another.
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	if err := n.retry(ctx, "connect to NATS", func(context.Context) error { return n.connect(url) }); err != nil {
		return nil, err
	}
	if err := n.retry(ctx, "streams and buckets", func(ctx context.Context) error {
		err := n.setup(ctx)
		if err != nil && n.ns != nil && routesRefused(n.ns, len(cfg.Embed.Routes)) {
			return fmt.Errorf("%w from the other nodes': the NATS servers of --nats-routes refused this server's route credentials (derived from --cluster-secret-file)", ErrSecretMismatch)
		}
		return err
	}); err != nil {
		return nil, err
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	if err := n.retry(ctx, "watch the placement bucket", func(context.Context) error { return n.place.Watch(n.ctx) }); err != nil {
		return nil, err
	}
	if err := n.retry(ctx, "watch the members bucket", func(context.Context) error { return n.watchMembers(n.ctx) }); err != nil {
		return nil, err
	}
	if err := n.retry(ctx, "write the member record", n.beat); err != nil {
		return nil, err
	}
	if err := n.retry(ctx, "record where the store's orgs stand", n.tagLegacy); err != nil {
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

// connect connects to NATS at url (comma-separated URLs) with the
// credentials of the configuration.
func (n *Node) connect(url string) error {
	cfg := n.cfg
	opts := []nats.Option{nats.Name("kgctx " + cfg.NodeID), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			n.natsErrs.Add(1)
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			n.log.Warn("cluster: NATS reported an error", "subject", subject, "err", err)
		})}
	derived := false
	switch {
	case cfg.NATSCreds != "":
		opts = append(opts, nats.UserCredentials(cfg.NATSCreds))
	case strings.Contains(redact(url), "@"):
		// The URL's user and password.
	default:
		user, pass := n.keys.NATSUser()
		opts = append(opts, nats.UserInfo(user, pass))
		derived = true
	}
	if cfg.NATSTLSCert != "" || cfg.NATSTLSKey != "" {
		opts = append(opts, nats.ClientCert(cfg.NATSTLSCert, cfg.NATSTLSKey))
	}
	if cfg.NATSTLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.NATSTLSCA))
	}
	nc, err := nats.Connect(url, opts...)
	if errors.Is(err, nats.ErrAuthorization) && derived {
		return fmt.Errorf("%w from the one the NATS servers at %s were started with: they refused the credentials derived from --cluster-secret-file (for a NATS of your own, give --nats-creds or a user:password in --nats-url)",
			ErrSecretMismatch, redact(url))
	}
	var ne net.Error
	if err != nil && !errors.Is(err, nats.ErrNoServers) && !errors.Is(err, nats.ErrTimeout) && !errors.As(err, &ne) {
		// A URL, credentials or TLS files no retry mends.
		return permanent(fmt.Errorf("cluster: connect to NATS at %s: %w", redact(url), err))
	}
	if err != nil {
		return fmt.Errorf("cluster: connect to NATS at %s: %w", redact(url), err)
	}
	n.nc = nc
	if n.js, err = jetstream.New(nc); err != nil {
		return err
	}
	return nil
}

// redact is url (comma-separated URLs) without passwords.
func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := neturl.Parse(strings.TrimSpace(p)); err == nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// retry calls f until it succeeds or ctx ends, or f fails for good
// (isPermanent: the cluster secret differs, NATS refuses the
// credentials). Each attempt's timeout grows from 1 to 8 s (a forming
// cluster answers at once or not at all, a loaded one slowly), and so
// does the pause between attempts, from 250 ms to 4 s.
func retry(ctx context.Context, f func(context.Context) error) error {
	return retryLog(ctx, nil, "", f)
}

// retry is retry, logging each failed attempt of step.
func (n *Node) retry(ctx context.Context, step string, f func(context.Context) error) error {
	return retryLog(ctx, n.log, step, f)
}

func retryLog(ctx context.Context, log *slog.Logger, step string, f func(context.Context) error) error {
	pause := 250 * time.Millisecond
	for attempt, wait := 1, time.Second; ; attempt, wait = attempt+1, min(2*wait, 8*time.Second) {
		actx, cancel := context.WithTimeout(ctx, wait)
		err := f(actx)
		cancel()
		if err == nil {
			return nil
		}
		if isPermanent(err) {
			var p *permanentError
			if errors.As(err, &p) {
				return p.err
			}
			if notClustered(err) {
				return fmt.Errorf("%w: the NATS server runs alone, so a stream can have one copy: give --replicas 1, or join it to the other servers (--nats-routes)", err)
			}
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("cluster: %s: %w (gave up after %d attempts: %v)", step, err, attempt, ctx.Err())
		}
		if log != nil {
			log.Info("cluster: a start-up step failed; retrying", "step", step, "attempt", attempt, "in", pause, "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: %s: %w (gave up after %d attempts: %v)", step, err, attempt, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 4*time.Second)
	}
}

// permanentError marks an error no retry mends.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(err error) error { return &permanentError{err} }

// isPermanent reports an error of a start-up step that retrying cannot
// mend: another cluster secret, credentials or permissions NATS refuses,
// more copies than a lone NATS server can keep, or one marked so
// (permanent). Anything else (no responders, no
// response from a stream, timeouts, no leader, a server not up yet) is
// retried.
func isPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p) || errors.Is(err, ErrSecretMismatch) || errors.Is(err, nats.ErrAuthorization) ||
		errors.Is(err, nats.ErrPermissionViolation) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked) ||
		notClustered(err)
}

// jsReplicasNotSupported is JetStream's error code for a stream or bucket
// asked for more than one copy of a server that is not clustered
// (nats-server's JSStreamReplicasNotSupportedErr).
const jsReplicasNotSupported = 10074

// notClustered reports JetStream's refusal of more than one copy on a
// server that runs alone: no retry mends it.
func notClustered(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == jsReplicasNotSupported
}

func (n *Node) setup(ctx context.Context) error {
	var err error
	if n.place, err = OpenPlacement(ctx, n.js, n.keys, n.cfg.Replicas); err != nil {
		return err
	}
	n.place.bad = func(key string) { n.ignored("placement", key) }
	if err := n.place.CheckMarker(ctx); err != nil {
		return err
	}
	if err := n.place.createShards(ctx, n.cfg.Shards); err != nil {
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
	n.nodes, err = ensureKV(ctx, n.js, jetstream.KeyValueConfig{Bucket: MembersBucket(n.cfg.Cluster),
		Replicas: n.cfg.Replicas, TTL: time.Minute})
	return err
}

// MembersBucket names the members bucket of cluster.
func MembersBucket(cluster string) string { return "kgctx_" + cluster + "_nodes" }

// ignored counts and logs a value of bucket without a valid MAC.
func (n *Node) ignored(bucket, key string) {
	c := n.count.add(&n.count.records, bucket)
	if !n.count.quiet("record " + bucket) {
		n.log.Warn("cluster: a record without the cluster's MAC ignored", "bucket", bucket, "key", key, "ignored", c)
	}
}

// Close stops applying and leaves the cluster (the embedded NATS server
// stops too).
func (n *Node) Close() error {
	if n.nodes != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if v, err := n.keys.sealRecord(MembersBucket(n.cfg.Cluster), n.cfg.NodeID, member{ID: n.cfg.NodeID, At: time.Now().UnixMilli(), Left: true}); err == nil {
			n.nodes.Put(ctx, n.cfg.NodeID, v)
		}
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
		embedded.Delete(n.ns)
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
		n.mu.Lock()
		watching := n.watching
		n.mu.Unlock()
		if !watching {
			if err := n.watchMembers(n.ctx); err != nil && n.ctx.Err() == nil {
				n.log.Warn("cluster: members", "err", err)
			}
		}
		n.resumeMoves(ctx)
		cancel()
		n.reconcile()
	}
}

// beat publishes this node's record and reads the others'.
func (n *Node) beat(ctx context.Context) error {
	n.mu.Lock()
	me := member{ID: n.cfg.NodeID, URL: n.cfg.Advertise, At: time.Now().UnixMilli(), LogVersion: LogVersion, Applied: map[string]uint64{}}
	for s, f := range n.running {
		// A stalled shard is not offered: the other nodes send its
		// requests to one that applies it in full.
		if f.serving && f.ap.Stalled() == nil {
			me.Serving = append(me.Serving, s)
			me.Applied[s] = f.ap.Applied()
		}
	}
	n.mu.Unlock()
	slices.Sort(me.Serving)
	b, err := n.keys.sealRecord(MembersBucket(n.cfg.Cluster), n.cfg.NodeID, me)
	if err != nil {
		return err
	}
	if _, err := n.nodes.Put(ctx, n.cfg.NodeID, b); err != nil {
		return err
	}
	live := map[string]member{n.cfg.NodeID: me}
	now := time.Now().UnixMilli()
	n.mu.Lock()
	for k, s := range n.seen {
		if k != n.cfg.NodeID && !s.m.Left && now-s.m.At < deadAfter.Milliseconds() {
			live[k] = s.m
		}
	}
	n.members = live
	n.mu.Unlock()
	return nil
}

// watchMembers keeps n.seen, the latest valid record of every node,
// current until ctx ends: it returns once the bucket's present values
// are read. A watcher sees every record written, so one written over by
// a forgery, or deleted, is still seen.
func (n *Node) watchMembers(ctx context.Context) error {
	w, err := n.nodes.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("cluster: watch the members bucket: %w", err)
	}
	for e := range w.Updates() {
		if e == nil {
			break
		}
		n.seeMember(e)
	}
	n.mu.Lock()
	n.watching = true
	n.mu.Unlock()
	go func() {
		defer w.Stop()
		defer func() {
			n.mu.Lock()
			n.watching = false
			n.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e != nil {
					n.seeMember(e)
				}
			}
		}
	}()
	return nil
}

// seeMember takes a value of the members bucket: a valid record later
// than the one seen of its node; a delete marker or a value without a
// valid MAC is ignored.
func (n *Node) seeMember(e jetstream.KeyValueEntry) {
	bucket := MembersBucket(n.cfg.Cluster)
	if e.Operation() != jetstream.KeyValuePut {
		n.ignored("members", e.Key())
		return
	}
	var m member
	at, err := n.keys.openRecord(bucket, e.Key(), e.Value(), &m)
	if err != nil || m.ID != e.Key() {
		n.ignored("members", e.Key())
		return
	}
	n.mu.Lock()
	if s, ok := n.seen[m.ID]; !ok || at > s.at {
		n.seen[m.ID] = seenMember{m: m, at: at}
	}
	n.mu.Unlock()
}

// rendezvous orders node ids by their rendezvous weight for key, highest
// first (ties by id): every node orders alike.
func rendezvous(ids []string, key string) {
	w := func(id string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(key))
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
	rendezvous(ids, shard)
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
	ap, err := NewApplier(n.app, n.js, n.keys, shard, ApplierOptions{Origin: n.origin, Places: n.place.MayHold, Receives: n.place.MayReceive,
		MaxWriteBytes: n.cfg.MaxWriteBytes, Rejected: func(reason string) { n.count.add(&n.count.writes, reason) }, Local: n.local})
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
		last, err := n.lastSeq(ctx, shard)
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

// lastSeq reads the last sequence of shard's log, retrying a failed
// read until ctx ends.
func (n *Node) lastSeq(ctx context.Context, shard string) (uint64, error) {
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
	return last, err
}

// local returns this node's applier of shard, or nil.
func (n *Node) local(shard string) *Applier {
	n.mu.Lock()
	defer n.mu.Unlock()
	if f := n.running[shard]; f != nil {
		return f.ap
	}
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
		if f != nil {
			if st := f.ap.Stalled(); st != nil {
				return fmt.Errorf("cluster: shard %s not caught up: %w", shard, st.err())
			}
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

// routeShard places org for a request: as this node's copy of the
// placement does, unless the org may have just moved away from that
// shard (its move flipping, or this store's copy of it removed by a
// move): then as the bucket says (the copy of the placement may lag it).
func (n *Node) routeShard(ctx context.Context, org string) (string, since, error) {
	shard, err := n.shardOf(ctx, org)
	if err != nil || org == "" {
		return shard, since{}, err
	}
	on, seq := n.place.Since(org)
	here := since{Shard: on, Seq: seq}
	flipping := false
	if mv, _ := n.place.Move(org); mv != nil && mv.From == shard && (mv.Phase == PhaseFenced || mv.Phase == PhaseFlipped) {
		flipping = true
	}
	if !flipping {
		book, err := bookOf(n.app)
		if err != nil {
			return "", since{}, err
		}
		st, err := book.get(org)
		if err != nil || st == nil || st.Src != shard || st.Era == 0 || st.At != st.Era {
			return shard, here, err
		}
	}
	shards, err := n.place.Shards(ctx)
	if err != nil {
		return "", since{}, fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
	}
	var o overrideRecord
	found, err := n.place.newest(ctx, "org."+org, &o)
	if err != nil {
		return "", since{}, fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
	}
	over := map[string]string{}
	if found && o.Shard != "" {
		over[org] = o.Shard
	}
	s, err := ShardOf(org, shards, over)
	if err != nil {
		return "", since{}, fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
	}
	return s, since{Shard: o.On, Seq: o.Since}, nil
}

// ready reports whether this node serves org from shard: it serves the
// shard (not stalled), and, if a move put the org there from a sequence
// of the shard's log on (its flip), it has applied it; it waits for that
// within ReadWait, then answers ErrUnavailable (a node of the shard never
// answers for an org before it holds all of it).
func (n *Node) ready(ctx context.Context, org, shard string, from since) (bool, error) {
	n.mu.Lock()
	f := n.running[shard]
	serving := f != nil && f.serving && f.ap.Stalled() == nil
	n.mu.Unlock()
	if !serving {
		return false, nil
	}
	on, seq := from.Shard, from.Seq
	if on != shard || seq == 0 || f.ap.Applied() >= seq {
		return true, nil
	}
	wctx, cancel := context.WithTimeout(ctx, n.cfg.ReadWait)
	defer cancel()
	if err := f.ap.WaitFor(wctx, seq); err != nil {
		return false, fmt.Errorf("%w: org %s moved to shard %s at %s:%d, which this node has not applied within %s; retry",
			ErrUnavailable, org, shard, shard, seq, n.cfg.ReadWait)
	}
	return true, nil
}

// Stale reports whether org's shard is one this node stopped applying at
// a write it cannot apply (Applier.Stalled): what it answers from it
// leaves out the writes since (api's Warning).
// It is asked of every request served here: the org's placement is looked
// up only when a shard has stalled.
func (n *Node) Stale(ctx context.Context, org string) bool {
	n.mu.Lock()
	stalled := false
	for _, f := range n.running {
		if f.ap.Stalled() != nil {
			stalled = true
			break
		}
	}
	n.mu.Unlock()
	if !stalled {
		return false
	}
	shard, err := n.shardOf(ctx, org)
	if err != nil {
		return false
	}
	n.mu.Lock()
	f := n.running[shard]
	n.mu.Unlock()
	return f != nil && f.ap.Stalled() != nil
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

// Write publishes w to its shard's log and answers once this node has
// applied it (service.Writer). The API sends a node only the writes of
// the orgs it serves (Route).
func (n *Node) Write(ctx context.Context, w service.Write) (service.WriteResult, error) {
	shard := GlobalShard
	if !w.Global() {
		if w.Org == "" {
			return service.WriteResult{}, fmt.Errorf("%w: a write of kind %q names no org", engine.ErrInvalidInput, w.Kind)
		}
		var err error
		if shard, err = n.shardOf(ctx, w.Org); err != nil {
			return service.WriteResult{}, err
		}
	}
	if mv, _ := n.place.Move(w.Org); mv != nil && w.Org != "" && mv.From == shard && (mv.Phase == PhaseFenced || mv.Phase == PhaseFlipped) {
		// Refused at the source from its fence on: nothing is published.
		return service.WriteResult{}, fmt.Errorf("%w: org %s is moving from shard %s to %s; its writes pause until it lives there, in moments; nothing was written; retry",
			ErrUnavailable, w.Org, mv.From, mv.To)
	}
	n.mu.Lock()
	f := n.running[shard]
	version := n.writeVersion()
	n.mu.Unlock()
	if f == nil {
		return service.WriteResult{}, fmt.Errorf("%w: this node does not apply shard %s", ErrUnavailable, shard)
	}
	if st := f.ap.Stalled(); st != nil {
		// Published, it would be applied by the newer replicas and never
		// here: refused before anything is written.
		return service.WriteResult{}, fmt.Errorf("%w; nothing was written", st.err())
	}
	o := PublishOptions{Origin: n.origin, MaxWriteBytes: n.cfg.MaxWriteBytes, Version: version}
	if scope, key, index, ok := service.NextIdempotencyKey(ctx); ok {
		o.ID = n.keys.keyedID(scope, key, index)
	}
	pctx, pcancel := context.WithTimeout(ctx, publishWait)
	seq, dup, err := Publish(pctx, n.js, n.keys, shard, w, o)
	pcancel()
	switch {
	case errors.Is(err, engine.ErrTooLarge):
		return service.WriteResult{}, err
	case errors.Is(err, ErrOutcomeUnknown):
		// err wraps ErrOutcomeUnknown, not ctx's error: the API must not
		// take it for the request's own deadline.
		return service.WriteResult{}, fmt.Errorf("%w within %s: the write may or may not have been stored and applied; %s",
			err, publishWait, retryAdvice(o.ID))
	case err != nil:
		return service.WriteResult{}, fmt.Errorf("%w: the write was not acknowledged by JetStream, nothing was written: %v", ErrUnavailable, err)
	}
	// Applying here follows the log within moments; ReadWait bounds the
	// wait when this node's applier is stalled (its NATS server lost).
	wctx, cancel := context.WithTimeout(ctx, n.cfg.ReadWait)
	defer cancel()
	var res service.WriteResult
	if dup {
		res, err = f.ap.Replayed(wctx, seq, o.ID)
	} else {
		res, err = f.ap.Result(wctx, seq)
	}
	if err != nil && wctx.Err() != nil {
		// Stored, but whether the service takes it (or refuses it, on
		// every replica alike) is not known here yet.
		return service.WriteResult{Seq: seq, Shard: shard}, fmt.Errorf("%w: written at %s:%d but not yet applied here, so its result is not known: %s",
			ErrOutcomeUnknown, shard, seq, retryAdvice(o.ID))
	}
	res.Seq, res.Shard = seq, shard
	return res, err
}

// retryAdvice says what a retry of a write whose outcome is unknown
// does.
func retryAdvice(id string) string {
	if id != "" {
		return "retrying with the same Idempotency-Key is safe (applied at most once)"
	}
	return "a retry may apply it twice; send an Idempotency-Key to make retries safe"
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
		if err := f.ap.WaitFor(ctx, seq); errors.Is(err, ErrStalled) {
			return fmt.Errorf("%s:%d will not be applied on this node: %w", shard, seq, err)
		} else if err != nil {
			return fmt.Errorf("%w: %s:%d not applied on this node within %s", ErrUnavailable, shard, seq, n.cfg.ReadWait)
		}
	}
	return nil
}

// WaitGlobal is WaitApplied for the global log's position alone (where
// tokens are written): what a request whose token this node does not know
// yet may wait for before it is authenticated.
func (n *Node) WaitGlobal(ctx context.Context, header string) error {
	pos, err := engine.ParsePositions(header)
	if err != nil {
		return fmt.Errorf("%w: %v", service.ErrBadSequence, err)
	}
	seq, ok := pos[GlobalShard]
	if !ok {
		return nil
	}
	return n.WaitApplied(ctx, GlobalShard+":"+strconv.FormatUint(seq, 10))
}

// Advertised is this node's HTTP base URL (Config.Advertise), as its
// member record gives it to the other nodes.
func (n *Node) Advertised() string { return n.cfg.Advertise }

// PrincipalMAC is the MAC of a principal forwarded with a proxied request
// (keyed by the cluster secret).
func (n *Node) PrincipalMAC(data []byte) []byte { return n.keys.PrincipalMAC(data) }

// caughtUp reports whether every live node serving shard had applied,
// at its last heartbeat, made after since, what published(heartbeat's
// time) names (the last sequence published by then), and how many serve
// it.
func (n *Node) caughtUp(shard string, since time.Time, published func(at time.Time) uint64) (ok bool, serving int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ok = true
	for id, m := range n.members {
		applied, at := m.Applied[shard], time.UnixMilli(m.At)
		if id == n.cfg.NodeID {
			// This node's own, now rather than at its last heartbeat.
			f := n.running[shard]
			if f == nil || !f.serving || f.ap.Stalled() != nil {
				continue
			}
			applied, at = f.ap.Applied(), time.Now()
		} else if !slices.Contains(m.Serving, shard) {
			continue
		}
		serving++
		if at.Before(since) || applied < published(at) {
			ok = false
		}
	}
	return ok, serving
}

// Counters reports the writes this node's appliers refused and the
// records it ignored since it started.
func (n *Node) Counters() Counters { return n.count.snapshot() }

// Route says where the requests of org are served: none for this node,
// else the base URLs of the live nodes that serve the org's shard, in
// rendezvous order. A shard stalled here (Applier.Stalled) is handed to
// the nodes that serve it; with none, this node answers from what it
// applied (its writes refused: Write).
func (n *Node) Route(ctx context.Context, org string) ([]string, error) {
	shard, from, err := n.routeShard(ctx, org)
	if err != nil {
		return nil, err
	}
	if ok, err := n.ready(ctx, org, shard, from); ok || err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	f := n.running[shard]
	var urls []string
	for _, id := range holders(shard, n.members, len(n.members)) {
		if m := n.members[id]; id != n.cfg.NodeID && slices.Contains(m.Serving, shard) {
			urls = append(urls, m.URL)
		}
	}
	if len(urls) == 0 && f != nil && f.serving {
		return nil, nil // stalled, and no other node serves it
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("%w: no live node serves shard %s (org %s) yet", ErrUnavailable, shard, org)
	}
	return urls, nil
}

// RouteSession says where org's session's in-session requests (tool
// calls, drains, forgetting) are served. The injector's memory of a
// session (the blocks pending its next turn, what it was shown) lives in
// one node's memory, so every node sends a session to the same node: the
// live node serving org's shard of highest rendezvous weight for the
// session. None: this node; else the base URLs of the nodes serving the
// shard, that node first, where "" stands for this node. With no live
// node serving the shard it answers as Route does.
//
// Nodes agree while their views of the members agree; a node that dies
// takes its sessions' in-session memory with it, as a restart of a
// single server does (compose.Injector), and its sessions move to the
// next node once the members bucket forgets it.
func (n *Node) RouteSession(ctx context.Context, org, session string) ([]string, error) {
	shard, from, err := n.routeShard(ctx, org)
	if err != nil {
		return nil, err
	}
	if _, err := n.ready(ctx, org, shard, from); err != nil {
		return nil, err
	}
	n.mu.Lock()
	var ids []string
	if f := n.running[shard]; f != nil && f.serving && f.ap.Stalled() == nil {
		ids = append(ids, n.cfg.NodeID)
	}
	urls := map[string]string{n.cfg.NodeID: ""}
	for id, m := range n.members {
		if id != n.cfg.NodeID && slices.Contains(m.Serving, shard) {
			ids = append(ids, id)
			urls[id] = m.URL
		}
	}
	n.mu.Unlock()
	if len(ids) == 0 {
		return n.Route(ctx, org)
	}
	rendezvous(ids, org+"\x00"+session)
	if ids[0] == n.cfg.NodeID {
		return nil, nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = urls[id]
	}
	return out, nil
}

// Status is what a node reports of itself.
type Status struct {
	Cluster string            `json:"cluster"`
	Node    string            `json:"node"`
	Applied map[string]uint64 `json:"applied"` // per shard applied here
	Serving []string          `json:"serving"`
	Members []Member          `json:"members"` // live, this node included
	// Stalled are the shards whose log this node stopped applying at a
	// write it cannot apply (a newer binary's), by shard.
	Stalled []Stall `json:"stalled"`
	// Moves are the orgs' moves in progress, and those that ended within
	// movesKept, by org.
	Moves []MoveRecord `json:"moves"`
}

// movesKept is how long the status lists a move that ended.
const movesKept = 24 * time.Hour

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
	st := Status{Cluster: n.cfg.Cluster, Node: n.cfg.NodeID, Applied: map[string]uint64{}, Serving: []string{}, Members: []Member{}, Stalled: []Stall{},
		Moves: []MoveRecord{}}
	for _, m := range n.place.Moves() {
		if !m.Ended() || time.Since(time.UnixMilli(m.Finished)) < movesKept {
			st.Moves = append(st.Moves, m)
		}
	}
	for _, m := range n.members {
		st.Members = append(st.Members, Member{ID: m.ID, URL: m.URL, Serving: append([]string{}, m.Serving...)})
	}
	for s, f := range n.running {
		st.Applied[s] = f.ap.Applied()
		stall := f.ap.Stalled()
		if f.serving && stall == nil {
			st.Serving = append(st.Serving, s)
		}
		if stall != nil {
			st.Stalled = append(st.Stalled, *stall)
		}
	}
	slices.SortFunc(st.Members, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(st.Stalled, func(a, b Stall) int { return strings.Compare(a.Shard, b.Shard) })
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
