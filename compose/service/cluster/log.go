package cluster

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
)

// StreamName and Subject name a shard's stream and its write subject.
func StreamName(cluster, shard string) string { return "kgctx_" + cluster + "_" + shard }

func Subject(cluster, shard string) string { return "kgctx." + cluster + "." + shard + ".w" }

// notifySubject is where a publisher tells the appliers the sequence a
// write got (plain NATS: a hint, polling covers its loss).
func notifySubject(cluster, shard string) string { return "kgctx." + cluster + "." + shard + ".n" }

// EnsureShard creates the shard's stream (replicas copies) if it is not
// there. An existing stream is left as it is: the nodes of a forming
// cluster all ensure the same streams at once, and updates racing the
// stream's first leader election stall.
func EnsureShard(ctx context.Context, js jetstream.JetStream, cluster, shard string, replicas int) error {
	name := StreamName(cluster, shard)
	if _, err := js.Stream(ctx, name); err == nil || !errors.Is(err, jetstream.ErrStreamNotFound) {
		return err
	}
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name,
		Subjects: []string{Subject(cluster, shard)}, Replicas: replicas, Storage: jetstream.FileStorage,
		Duplicates: dupWindow,
		// Any replica answers a read of one message: a node catches up
		// while the stream elects a leader.
		AllowDirect: true})
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return nil // another node made it first
	}
	return err
}

// ensureKV opens the key-value bucket cfg names, creating it if it is not
// there (left as it is if it is, as EnsureShard).
func ensureKV(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if err == nil || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return kv, err
	}
	kv, err = js.CreateKeyValue(ctx, cfg)
	if errors.Is(err, jetstream.ErrBucketExists) {
		return js.KeyValue(ctx, cfg.Bucket)
	}
	return kv, err
}

// The headers of a logged write. Every one but the MAC is covered by it,
// with the stream's name: a write cannot be moved to another stream or
// have its headers changed without the MAC failing.
const (
	// idHeader is the write's id: random, or derived from the request's
	// idempotency key (Keys.keyedID); JetStream's Nats-Msg-Id is derived
	// from it (msgID), so that a replay or a retry within the stream's
	// duplicate window is dropped by JetStream itself, and the appliers
	// skip a keyed id they applied before (after the window).
	idHeader = "Kgctx-Id"
	// atHeader is when the publisher made the write (unix milliseconds
	// of its clock): the applier refuses a write stored far from it (a
	// replay after the duplicate window).
	atHeader = "Kgctx-At"
	// originHeader names the node that published a write, so that its
	// applier keeps the result for the waiting request.
	originHeader = "Kgctx-Origin"
	// chunkHeader marks a part of a write split over several messages:
	// "INDEX/COUNT/BYTES" (BYTES: the whole write's).
	chunkHeader = "Kgctx-Chunk"
	// versionHeader is the write's format version (LogVersion when this
	// binary published it); a write without it was published by a
	// release before versions, and is version 1.
	versionHeader = "Kgctx-Version"
	macHeader     = "Kgctx-Mac"
)

// Format versions of a logged write. A version says what an applier must
// know to apply the write: its encoding and the kinds of service.Write it
// may carry. An applier meets a version above the one it knows, or a
// kind it does not know, only when a newer binary published it: it stops
// applying the shard there (Stall) rather than skip the write, which
// would make its store differ from the newer replicas'.
const (
	// LogVersion is the version this binary writes and the newest it
	// applies. Version 3 adds the steps of an org's move
	// (service.MoveKind kinds), published only once every live node
	// applies it.
	LogVersion = 3
	// unversioned is the version of a write without versionHeader: the
	// format before versions (the same encoding and kinds as version 2,
	// which adds only the header).
	unversioned = 1
)

const (
	// dupWindow is the streams' duplicate window: JetStream drops a
	// message whose Nats-Msg-Id it stored within it.
	dupWindow = 2 * time.Minute
	// maxAge and maxAhead bound how much earlier or later than the time
	// JetStream stored it a write may say it was made (clocks of the
	// nodes and NATS servers differ by less): older is a replay.
	maxAge   = 90 * time.Second
	maxAhead = 30 * time.Second
	// chunkSetWait: the parts of a split write all arrive within it, by
	// the log's time, or the set is dropped (its publisher died).
	chunkSetWait = 2 * time.Minute
	// DefaultMaxWriteBytes bounds a write, split or not (Config).
	DefaultMaxWriteBytes = 128 << 20
	// maxChunks bounds the parts of a write.
	maxChunks = 1 << 16
	// keyedKeep is how long, by the log's time, an applier remembers a
	// keyed write it applied: a retry within it is not applied again.
	// It covers any client's retries of one call (the Go client gives up
	// after minutes) and the usual day of an idempotency key.
	keyedKeep = 24 * time.Hour
	// keyedSweep is how often, by the log's time, the remembered keyed
	// writes older than keyedKeep are deleted.
	keyedSweep = time.Hour
	// keptResultBytes bounds the result kept with a keyed write; a
	// larger one is answered to a retry as empty.
	keptResultBytes = 64 << 10
)

// msgID is the Nats-Msg-Id of part index of write id (-1: not split).
func msgID(id string, index int) string {
	if index < 0 {
		return id
	}
	return id + "." + strconv.Itoa(index)
}

// writeMAC is the MAC of a logged write. A write with versionHeader has
// it covered, as a further field (a write cannot be moved to another
// version, nor its header dropped, without the MAC failing); a write
// without it has the MAC of the releases before versions, so that their
// logs still apply.
func (k *Keys) writeMAC(stream string, h nats.Header, data []byte) []byte {
	fields := [][]byte{[]byte(stream), []byte(h.Get(idHeader)), []byte(h.Get(atHeader)),
		[]byte(h.Get(originHeader)), []byte(h.Get(chunkHeader)), data}
	if v := h.Values(versionHeader); len(v) > 0 {
		fields = append(fields, []byte(strings.Join(v, ",")))
	}
	return mac(k.log, "write", fields...)
}

// writeVersion is the format version of a logged write whose MAC was
// checked; 0 for a value that is not a version (a format this binary
// cannot read).
func writeVersion(h nats.Header) int {
	v := h.Values(versionHeader)
	if len(v) == 0 {
		return unversioned
	}
	n, err := strconv.Atoi(v[0])
	if len(v) != 1 || err != nil || n < unversioned {
		return 0
	}
	return n
}

func (k *Keys) noticeMAC(stream string, seq []byte) []byte {
	return mac(k.log, "notice", []byte(stream), seq)
}

// PublishOptions tune Publish.
type PublishOptions struct {
	// Origin is the originHeader ("" for none).
	Origin string
	// MaxWriteBytes bounds the write's encoding (default
	// DefaultMaxWriteBytes): over it, ErrTooLarge.
	MaxWriteBytes int
	// ID is the write's id (Keys.keyedID for a write with an idempotency
	// key); "" draws a random one.
	ID string
	// Version is the format the write is published in (0: LogVersion):
	// the oldest live node's (Node.writeVersion), so that a node of a
	// release before this one applies it during a rolling upgrade.
	// Version 1 is published without versionHeader, as such releases
	// did.
	Version int
}

// Publish appends w, signed, to the shard's stream and returns its
// sequence once JetStream has acknowledged it: stored on a majority of
// the replicas. A write over the connection's max payload is split into
// parts, published one after the other; its sequence is the last part's,
// where the appliers apply it whole. A write over o.MaxWriteBytes is
// refused with engine.ErrTooLarge, nothing published.
//
// dup reports that JetStream already held a write of the same id (o.ID:
// a retry within the duplicate window): seq is the first one's. An error
// wrapping ErrOutcomeUnknown is a message sent whose acknowledgement did
// not come (ctx ended, the connection closed while waiting): it may be
// stored and applied. Any other error is JetStream's certain refusal (no
// stream answered, an error answer) or a failure before anything was
// sent: the write will not be applied (the parts of a split write stored
// before it are dropped by the appliers, incomplete).
func Publish(ctx context.Context, js jetstream.JetStream, keys *Keys, shard string, w service.Write, o PublishOptions) (seq uint64, dup bool, err error) {
	b, err := json.Marshal(w)
	if err != nil {
		return 0, false, err
	}
	if o.MaxWriteBytes <= 0 {
		o.MaxWriteBytes = DefaultMaxWriteBytes
	}
	if len(b) > o.MaxWriteBytes {
		return 0, false, fmt.Errorf("%w: the write is %d bytes, over the cluster's limit of %d bytes a write; send it in smaller requests",
			engine.ErrTooLarge, len(b), o.MaxWriteBytes)
	}
	if o.Version == 0 {
		o.Version = LogVersion
	}
	if o.Version < unversioned || o.Version > LogVersion {
		return 0, false, fmt.Errorf("cluster: cannot publish in log version %d: this binary writes versions %d to %d", o.Version, unversioned, LogVersion)
	}
	stream := StreamName(keys.cluster, shard)
	id := o.ID
	if id == "" {
		var r [16]byte
		rand.Read(r[:])
		id = hex.EncodeToString(r[:])
	}
	at := strconv.FormatInt(time.Now().UnixMilli(), 10)
	hdr := func(chunk string, index int) nats.Header {
		h := nats.Header{}
		h.Set(idHeader, id)
		h.Set(atHeader, at)
		if o.Version > unversioned {
			h.Set(versionHeader, strconv.Itoa(o.Version))
		}
		if o.Origin != "" {
			h.Set(originHeader, o.Origin)
		}
		if chunk != "" {
			h.Set(chunkHeader, chunk)
		}
		h.Set(jetstream.MsgIDHeader, msgID(h.Get(idHeader), index))
		return h
	}
	// Room for the headers in each message.
	part := int(js.Conn().MaxPayload()) - 4<<10
	if part < 1<<10 {
		part = int(js.Conn().MaxPayload()) / 2
	}
	n := (len(b) + part - 1) / part
	for i := 0; i == 0 || i < n; i++ {
		data, h := b, hdr("", -1)
		if n > 1 {
			data = b[i*part : min(len(b), (i+1)*part)]
			h = hdr(fmt.Sprintf("%d/%d/%d", i, n, len(b)), i)
		}
		h.Set(macHeader, base64.StdEncoding.EncodeToString(keys.writeMAC(stream, h, data)))
		msg := &nats.Msg{Subject: Subject(keys.cluster, shard), Header: h, Data: data}
		if err := ctx.Err(); err != nil {
			return 0, false, fmt.Errorf("cluster: publish to %s: %w", shard, err) // nothing more sent
		}
		if js.Conn().IsClosed() {
			return 0, false, fmt.Errorf("cluster: publish to %s: %w", shard, nats.ErrConnectionClosed)
		}
		ack, err := js.PublishMsg(ctx, msg)
		if err != nil {
			if ackUnknown(err) {
				return 0, false, fmt.Errorf("%w: JetStream did not acknowledge the write to %s (%v)", ErrOutcomeUnknown, shard, err)
			}
			return 0, false, fmt.Errorf("cluster: publish to %s: %w", shard, err)
		}
		seq, dup = ack.Sequence, ack.Duplicate
	}
	q := strconv.AppendUint(nil, seq, 10)
	js.Conn().Publish(notifySubject(keys.cluster, shard), append(append(q, ' '), base64.StdEncoding.EncodeToString(keys.noticeMAC(stream, q))...))
	return seq, dup, nil
}

// ackUnknown reports an error of a publish whose message went out (or
// may go out: one buffered while the connection reconnects is sent when
// it is back) without its acknowledgement: the wait ended or the
// connection closed under it. No responders, an error answer from
// JetStream, a bad message are certain refusals.
func ackUnknown(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrConnectionDraining)
}

// Applier applies one shard's stream to a store, in order, from the
// sequence after the last one it recorded: a restarted node resumes where
// it stopped. A write applies with ids drawn from a seed keyed by the
// cluster secret, the stream and its sequence, and with the time
// JetStream stamped on it, so every replica gives it the same ids and
// times; the applied sequence is recorded after the write, and a write
// applied twice (a crash between the two) changes nothing the second time
// (imports merge; observations keep their id).
//
// Only the cluster's writes apply: a message without a valid MAC, stored
// far from the time it names (a replay), of an org the shard does not
// hold, of a kind that belongs on another stream, or a part of a split
// write out of place is refused: recorded as applied, so that the log
// moves on, counted and logged. Every replica refuses it alike.
//
// A write of the cluster this binary cannot apply (a format version
// above ApplierOptions.KnownVersion, a kind service.KnownKind does not
// know: a newer binary published it) is not refused, as a newer replica
// applies it: the applier stops there (Stalled), records nothing more,
// and a binary that knows the write resumes from it.
type Applier struct {
	app      *service.App
	js       jetstream.JetStream
	keys     *Keys
	o        ApplierOptions
	stream   string
	shard    string
	st       jetstream.Stream // the stream's handle, once had
	subject  string
	rec      *engine.AppliedLog // the store's record of the stream applied
	log      *slog.Logger
	parts    map[string]*partial // split writes being received, by id
	recovery []partialMark       // the split writes to read again at start
	logged   map[string]*logLimit
	swept    time.Time // the log's time of the last sweep of keyed writes
	// book is the store's state of each org's copy, orgs this log's
	// record of each org (a cache), pending the cache updates of the
	// sequence being recorded; reader reads this log for a gap.
	book    *orgBook
	orgs    map[string]*streamOrg
	pending []func()
	reader  *logReader

	mu      sync.Mutex
	applied uint64
	changed chan struct{} // closed and replaced at every applied write, and at a stall
	results map[uint64]applied
	stall   *Stall
}

// Stall is where an applier stopped: the first write of its log that
// this binary cannot apply, never recorded as applied.
type Stall struct {
	Shard string `json:"shard"`
	Seq   uint64 `json:"seq"`
	// Version is the write's format version (0: not one this binary
	// reads); Kind its kind when that is what this binary does not know.
	Version int    `json:"version"`
	Kind    string `json:"kind,omitempty"`
	Reason  string `json:"reason"`
}

// ErrStalled: a log position at or past where this node's applier of
// the shard stalled (Stall): a newer binary wrote the log from there, and
// this node must be upgraded to apply it. An error wrapping it wraps
// ErrUnavailable too.
var ErrStalled = errors.New("cluster: shard stalled")

// ApplierOptions configure an Applier.
type ApplierOptions struct {
	// Origin is this node's originHeader: the results of the writes it
	// published are kept for Result ("" keeps none).
	Origin string
	// Places reports whether the shard's log may hold writes of org
	// (Placement.MayHold); required but for the global log.
	Places func(ctx context.Context, org, shard string) (bool, error)
	// MaxWriteBytes bounds a split write (default DefaultMaxWriteBytes).
	MaxWriteBytes int
	// Rejected is told the reason of every write refused (nil: none).
	Rejected func(reason string)
	// KnownVersion is the newest write format version the applier
	// applies (default LogVersion; tests simulate an upgraded binary).
	KnownVersion int
	// Receives reports whether a move of org to shard was ever started
	// (Placement.MayReceive): the steps of a move into this log are
	// admitted only then. Nil: none is.
	Receives func(ctx context.Context, org, shard string) (bool, error)
	// Local returns this node's applier of shard (nil: none runs here):
	// a drop of a moved org waits for the applier of the shard it moved
	// to on the same store, and a move given up keeps the copy of a
	// store that applies the source.
	Local func(shard string) *Applier
}

// applied is the outcome of a write this node published.
type applied struct {
	res service.WriteResult
	err error
}

// partial is a split write whose parts are arriving.
type partial struct {
	id, at, origin string
	count, size    int
	next           int       // the index of the part expected next
	last           uint64    // the sequence of the last part taken
	first          uint64    // the sequence of part 0
	since          time.Time // when the log stored part 0
	data           []byte
}

// partialMark is a partial as the applied record keeps it: enough to
// read its parts again after a restart.
type partialMark struct {
	ID    string `json:"id"`
	First uint64 `json:"first"`
}

// NewApplier reads the sequence app's store has applied of the shard's
// stream.
func NewApplier(app *service.App, js jetstream.JetStream, keys *Keys, shard string, o ApplierOptions) (*Applier, error) {
	if shard != GlobalShard && o.Places == nil {
		return nil, errors.New("BUG: cluster: an applier of a shard without ApplierOptions.Places")
	}
	if o.MaxWriteBytes <= 0 {
		o.MaxWriteBytes = DefaultMaxWriteBytes
	}
	if o.KnownVersion <= 0 {
		o.KnownVersion = LogVersion
	}
	a := &Applier{app: app, js: js, keys: keys, o: o, stream: StreamName(keys.cluster, shard), shard: shard,
		subject: notifySubject(keys.cluster, shard), changed: make(chan struct{}), results: map[uint64]applied{},
		parts: map[string]*partial{}, log: app.Logger, orgs: map[string]*streamOrg{}}
	if a.log == nil {
		a.log = slog.Default()
	}
	rec, err := app.Store.KV().AppliedLog(a.stream)
	if err != nil {
		return nil, err
	}
	a.rec = rec
	seq, note, err := rec.Applied()
	if err != nil {
		return nil, err
	}
	a.applied = seq
	if len(note) > 0 && json.Unmarshal(note, &a.recovery) != nil {
		return nil, fmt.Errorf("cluster: applied record of %s: undecodable split writes", a.stream)
	}
	if a.book, err = bookOf(app); err != nil {
		return nil, err
	}
	// The index of the orgs' data entries starts where this release
	// first applied the log.
	if _, err := rec.Keyed(indexFrom); errors.Is(err, engine.ErrNotFound) {
		if err := rec.Put(engine.AppliedKeyed{ID: indexFrom, Value: binary.BigEndian.AppendUint64(nil, seq+1)}); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	return a, nil
}

// Applied is the last sequence applied.
func (a *Applier) Applied() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.applied
}

// Stalled is where the applier stopped applying, or nil.
func (a *Applier) Stalled() *Stall {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stall == nil {
		return nil
	}
	st := *a.stall
	return &st
}

// err is the error of a wait for a position at or past st.
func (st *Stall) err() error {
	return fmt.Errorf("%w: %w: shard %s stopped at sequence %d: %s; upgrade this node to apply it", ErrUnavailable, ErrStalled, st.Shard, st.Seq, st.Reason)
}

// WaitFor waits until seq is applied or ctx is done (read-your-writes).
// A seq at or past a stall is answered at once with an error wrapping
// ErrStalled: it will not be applied by this binary.
func (a *Applier) WaitFor(ctx context.Context, seq uint64) error {
	for {
		a.mu.Lock()
		done, ch, st := a.applied >= seq, a.changed, a.stall
		a.mu.Unlock()
		if done {
			return nil
		}
		if st != nil && seq >= st.Seq {
			return st.err()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("cluster: sequence %d of %s not applied yet: %w", seq, a.stream, ctx.Err())
		}
	}
}

// Result waits until seq is applied and returns what applying it did,
// for a write this node published (else an empty result).
func (a *Applier) Result(ctx context.Context, seq uint64) (service.WriteResult, error) {
	if err := a.WaitFor(ctx, seq); err != nil {
		return service.WriteResult{}, err
	}
	a.mu.Lock()
	r, ok := a.results[seq]
	delete(a.results, seq)
	a.mu.Unlock()
	if !ok {
		return service.WriteResult{Seq: seq}, nil
	}
	return r.res, r.err
}

// keptResults bounds the results kept for requests that gave up waiting.
const keptResults = 4096

// Run applies the stream until ctx is done. NATS errors (a stream leader
// being elected, a server restarting) are waited out: the consumer is made
// again from the sequence after the last applied. A write this replica
// fails to apply for a reason of its own (the store, the embedder) is
// tried again, never skipped: skipping would make it differ from the
// others.
//
// A stall (Stalled) ends the applying: Run waits for ctx then.
func (a *Applier) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		err := a.follow(ctx)
		if errors.Is(err, ErrStalled) {
			<-ctx.Done()
			return nil
		}
		if err != nil && ctx.Err() == nil {
			a.log.Warn("cluster: applying the log", "stream", a.stream, "applied", a.Applied(), "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// get reads message seq of the stream (nil, nil: not written yet).
func (a *Applier) get(ctx context.Context, seq uint64) (*jetstream.RawStreamMsg, error) {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := a.st.GetMsg(gctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	return m, err
}

// follow reads the stream from the sequence after the last applied until
// an error: message by message (a direct get, which any replica answers),
// woken by the publishers' signed notices and, failing those, every
// second.
func (a *Applier) follow(ctx context.Context) error {
	if a.st == nil {
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := a.js.Stream(ictx, a.stream)
		cancel()
		if err != nil {
			return fmt.Errorf("cluster: stream %s: %w", a.stream, err)
		}
		a.st = st
	}
	if err := a.recover(ctx); err != nil {
		return err
	}
	wake := make(chan *nats.Msg, 64)
	sub, err := a.js.Conn().ChanSubscribe(a.subject, wake)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	var known uint64 // the highest sequence a notice named
	for {
		for {
			seq := a.Applied() + 1
			m, err := a.get(ctx, seq)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return err
			}
			if m == nil && seq <= known {
				// Written, but the replica that answered has not stored
				// it yet: ask again in a moment.
				time.Sleep(5 * time.Millisecond)
				continue
			}
			if m == nil {
				break // not written yet
			}
			if err := a.apply(ctx, seq, m); err != nil {
				return fmt.Errorf("cluster: apply %s #%d: %w", a.stream, seq, err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case m := <-wake:
			for more := true; more; {
				if q, ok := a.notice(m.Data); ok {
					known = max(known, q)
				}
				select {
				case m = <-wake:
				default:
					more = false
				}
			}
		case <-time.After(time.Second):
		}
	}
}

// notice reads a publisher's notice "SEQ MAC"; a notice without a valid
// MAC is none (a forged one would keep the applier asking for a message
// that will not come).
func (a *Applier) notice(b []byte) (uint64, bool) {
	q, m, ok := bytes.Cut(b, []byte(" "))
	if !ok {
		return 0, false
	}
	sig, err := base64.StdEncoding.DecodeString(string(m))
	seq, perr := strconv.ParseUint(string(q), 10, 64)
	if err != nil || perr != nil || !hmac.Equal(sig, a.keys.noticeMAC(a.stream, q)) {
		return 0, false
	}
	return seq, true
}

// recover reads again, after a restart, the parts of the split writes
// that were incomplete when the applied record was written.
func (a *Applier) recover(ctx context.Context) error {
	if len(a.recovery) == 0 {
		return nil
	}
	ids := map[string]bool{}
	from := a.Applied()
	for _, p := range a.recovery {
		ids[p.ID] = true
		from = min(from, p.First)
	}
	a.parts = map[string]*partial{}
	for seq := from; seq <= a.Applied(); seq++ {
		m, err := a.get(ctx, seq)
		if err != nil {
			return err
		}
		if m == nil || !ids[m.Header.Get(idHeader)] {
			continue
		}
		if reason, _ := a.check(seq, m); reason == "" {
			a.part(m) // a part refused now was refused before
		}
	}
	a.recovery = nil
	return nil
}

// refusal is a write refused for what it is, not by the service.
type refusal struct {
	reason string
	err    error
}

// check verifies message seq, m: the log's own headers, its MAC, its
// other headers and its age; "" when the cluster wrote it.
func (a *Applier) check(seq uint64, m *jetstream.RawStreamMsg) (string, error) {
	h := m.Header
	sig, err := base64.StdEncoding.DecodeString(h.Get(macHeader))
	if err != nil || len(sig) == 0 || !hmac.Equal(sig, a.keys.writeMAC(a.stream, h, m.Data)) {
		return RejectMAC, fmt.Errorf("%w: a write without the cluster's MAC", engine.ErrForbidden)
	}
	if err := logHeaders(seq, m); err != nil {
		// A write of the cluster published again with the headers it
		// was read with.
		return RejectStale, err
	}
	index := -1
	if c := h.Get(chunkHeader); c != "" {
		i, _, ok := strings.Cut(c, "/")
		n, err := strconv.Atoi(i)
		if !ok || err != nil {
			return RejectChunk, fmt.Errorf("%w: a part of a write marked %q", engine.ErrInvalidInput, c)
		}
		index = n
	}
	if h.Get(jetstream.MsgIDHeader) != msgID(h.Get(idHeader), index) {
		// A signed write published again under another message id, to
		// get past JetStream's duplicate window.
		return RejectStale, fmt.Errorf("%w: a write replayed under another message id", engine.ErrForbidden)
	}
	ms, err := strconv.ParseInt(h.Get(atHeader), 10, 64)
	if err != nil {
		return RejectWrite, fmt.Errorf("%w: a write without its time", engine.ErrInvalidInput)
	}
	if d := m.Time.Sub(time.UnixMilli(ms)); d > maxAge || d < -maxAhead {
		return RejectStale, fmt.Errorf("%w: the write was made %s before the log stored it (a replay, or clocks that differ by more than %s)",
			service.ErrUnavailable, d.Round(time.Millisecond), maxAhead)
	}
	return "", nil
}

// logHeaders checks the headers JetStream adds to a message it returns
// (its sequence, time, stream, subject): a publisher that set one too
// would have it read first, and taken for the log's.
func logHeaders(seq uint64, m *jetstream.RawStreamMsg) error {
	for k, v := range m.Header {
		if strings.HasPrefix(k, "Nats-") && len(v) != 1 {
			return fmt.Errorf("%w: a write carrying the log's own header %s", engine.ErrForbidden, k)
		}
	}
	if m.Sequence != seq {
		return fmt.Errorf("%w: message %d read as %d", engine.ErrForbidden, seq, m.Sequence)
	}
	return nil
}

// part takes a part of a split write; it returns the whole write's
// bytes with its last part (the set stays in a.parts until the caller
// has recorded it), and a refusal for a part out of place. A part taken
// again (its record failed) is not taken twice.
func (a *Applier) part(m *jetstream.RawStreamMsg) ([]byte, *refusal) {
	h := m.Header
	id := h.Get(idHeader)
	bad := func(format string, v ...any) ([]byte, *refusal) {
		delete(a.parts, id)
		return nil, &refusal{RejectChunk, fmt.Errorf("%w: split write %s: %s", engine.ErrInvalidInput, id, fmt.Sprintf(format, v...))}
	}
	var i, n, size int
	if _, err := fmt.Sscanf(h.Get(chunkHeader), "%d/%d/%d", &i, &n, &size); err != nil || n < 2 || n > maxChunks || i < 0 || i >= n || size < n {
		return bad("part %q", h.Get(chunkHeader))
	}
	if size > a.o.MaxWriteBytes {
		return bad("%d bytes, over the limit of %d", size, a.o.MaxWriteBytes)
	}
	p := a.parts[id]
	// The parts of a keyed write may come from two attempts (a retry
	// sends the parts the first one did not store, JetStream drops the
	// others): made at another time, by another node.
	keyed := strings.HasPrefix(id, keyedPrefix)
	switch {
	case p != nil && p.last == m.Sequence:
		// Taken already.
	case i == 0 && p != nil:
		return bad("part 0 twice")
	case i == 0:
		p = &partial{id: id, at: h.Get(atHeader), origin: h.Get(originHeader), count: n, size: size, first: m.Sequence, since: m.Time,
			data: make([]byte, 0, min(size, 64<<20))}
		a.parts[id] = p
		fallthrough
	case p != nil && i == p.next && n == p.count && size == p.size && (h.Get(atHeader) == p.at && h.Get(originHeader) == p.origin || keyed):
		p.data = append(p.data, m.Data...)
		p.next, p.last = p.next+1, m.Sequence
	case p == nil:
		return bad("part %d without the parts before it", i)
	default:
		return bad("part %d of %d does not follow the parts before it", i, n)
	}
	if len(p.data) > p.size || (i == n-1 && len(p.data) != p.size) {
		return bad("%d bytes, not the %d it said", len(p.data), p.size)
	}
	if i < n-1 {
		return nil, nil
	}
	return p.data, nil
}

// expire drops the split writes whose parts stopped coming, by the time
// of the log (the same on every replica).
func (a *Applier) expire(now time.Time) {
	for id, p := range a.parts {
		if now.Sub(p.since) > chunkSetWait {
			delete(a.parts, id)
			a.rejected(RejectChunk, p.first, fmt.Errorf("split write %s: incomplete after %s (%d bytes of %d)", id, chunkSetWait, len(p.data), p.size))
		}
	}
}

// rejected counts a refused write and logs it: the first of a reason,
// then one every 10 s with the number refused since (a flood of
// forgeries does not flood the log).
func (a *Applier) rejected(reason string, seq uint64, err error) {
	if a.o.Rejected != nil {
		a.o.Rejected(reason)
	}
	if a.logged == nil {
		a.logged = map[string]*logLimit{}
	}
	l := a.logged[reason]
	if l == nil {
		l = &logLimit{}
		a.logged[reason] = l
	}
	l.n++
	if time.Since(l.at) < 10*time.Second {
		return
	}
	a.log.Warn("cluster: a logged write refused", "stream", a.stream, "seq", seq, "reason", reason, "err", err, "refused", l.n)
	l.at, l.n = time.Now(), 0
}

// logLimit is when a reason of refusal was last logged, and how many
// were refused since.
type logLimit struct {
	at time.Time
	n  int
}

// apply applies message seq, m (or takes it as a part of a split write)
// and records seq.
func (a *Applier) apply(ctx context.Context, seq uint64, m *jetstream.RawStreamMsg) error {
	var res service.WriteResult
	var err error
	trusted := false
	a.pending = a.pending[:0]
	if logHeaders(seq, m) == nil {
		a.expire(m.Time)
	}
	reason, cerr := a.check(seq, m)
	if v := writeVersion(m.Header); reason == "" && (v == 0 || v > a.o.KnownVersion) {
		// Checked after the MAC: only a write of the cluster stalls.
		return a.stalled(Stall{Seq: seq, Version: v,
			Reason: fmt.Sprintf("write format version %q, newer than this binary's %d", m.Header.Get(versionHeader), a.o.KnownVersion)})
	}
	data := m.Data
	var rej *refusal
	split := ""  // the id of a split write whose last part this is
	first := seq // the sequence of its first part
	switch {
	case reason != "":
		rej = &refusal{reason, cerr}
	case m.Header.Get(chunkHeader) != "":
		trusted = true
		data, rej = a.part(m)
		if data == nil && rej == nil {
			// A part: nothing to apply until the last one.
			return a.record(seq, false, res, nil, nil)
		}
		if rej == nil {
			split = m.Header.Get(idHeader)
			first = a.parts[split].first
		}
	default:
		trusted = true
	}
	var keyed *keyedRecord // a keyed write applied now, to remember
	if id := m.Header.Get(idHeader); rej == nil && strings.HasPrefix(id, keyedPrefix) {
		// A retry of a keyed write applied before (past JetStream's
		// duplicate window): answered with the first result, not applied
		// again. Every replica decides alike: by the log's time.
		prev, err := a.keyed(id, m.Time)
		if err != nil {
			return err
		}
		if prev != nil {
			a.log.Info("cluster: a retried write already applied; not applied again", "stream", a.stream, "seq", seq, "first", prev.Seq)
			res, err = prev.result()
			if err := a.record(seq, trusted && m.Header.Get(originHeader) == a.o.Origin && a.o.Origin != "", res, err, nil); err != nil {
				return err
			}
			if split != "" {
				delete(a.parts, split)
			}
			return nil
		}
		keyed = &keyedRecord{ID: id, Seq: seq, At: m.Time.UnixMilli()}
	}
	var extra []engine.AppliedKeyed
	if rej == nil {
		var w service.Write
		if json.Unmarshal(data, &w) != nil {
			rej = &refusal{RejectWrite, fmt.Errorf("%w: undecodable write", engine.ErrInvalidInput)}
		} else if !service.KnownKind(w.Kind) {
			// Before admit, which would take a newer global kind for one
			// on the wrong log.
			return a.stalled(Stall{Seq: seq, Version: writeVersion(m.Header), Kind: w.Kind,
				Reason: fmt.Sprintf("write kind %q, unknown to this binary", w.Kind)})
		} else if rej, err = a.admit(ctx, w); err != nil {
			return err // the placement is out of reach: try again
		} else if rej == nil {
			h, herr := a.handle(ctx, seq, first, m, w)
			if herr != nil {
				if errors.Is(herr, service.ErrUnknownKind) {
					return a.stalled(Stall{Seq: seq, Version: writeVersion(m.Header), Kind: w.Kind, Reason: herr.Error()})
				}
				return herr // this replica's own failure: try again
			}
			defer h.release()
			res, err, extra, rej = h.res, h.err, h.extra, h.rej
		}
	}
	if rej != nil {
		a.rejected(rej.reason, seq, rej.err)
		err = rej.err
		keyed = nil // not the write's own answer: a retry may do better
	}
	if keyed != nil {
		keyed.keep(res, err)
	}
	// A refused write was refused on every replica alike; it is recorded
	// as applied and answered with its error.
	if err := a.record(seq, trusted && m.Header.Get(originHeader) == a.o.Origin && a.o.Origin != "", res, err, keyed, extra...); err != nil {
		return err
	}
	if keyed != nil && m.Time.Sub(a.swept) > keyedSweep {
		if err := a.sweep(m.Time); err != nil {
			a.log.Warn("cluster: forgetting old keyed writes", "stream", a.stream, "err", err)
		}
	}
	if split != "" {
		delete(a.parts, split) // applied whole
	}
	return nil
}

// handled is what handle did with a write: its result, the records to
// stage with its sequence, or a refusal; release ends what it holds (the
// org's lock) once the sequence is recorded.
type handled struct {
	res     service.WriteResult
	err     error
	extra   []engine.AppliedKeyed
	rej     *refusal
	release func()
}

func nothing() {}

// handle applies w, the write of message seq (whose first part is
// first): a global write, an org's write (a data entry of the org's
// history, unless the org's writes pause here while it moves) or a
// step of a move. An error is this replica's own (the write is to be
// applied again).
func (a *Applier) handle(ctx context.Context, seq, first uint64, m *jetstream.RawStreamMsg, w service.Write) (h handled, err error) {
	h.release = nothing
	if a.shard == GlobalShard {
		h.res, h.err = a.app.Apply(ctx, w, service.ApplyOptions{Now: m.Time.UTC(), IDs: engine.NewIDSource(a.keys.idSeed(a.stream, seq))})
		if h.err != nil && (errors.Is(h.err, service.ErrUnknownKind) || !service.Refused(h.err)) {
			return h, h.err
		}
		return h, nil
	}
	if service.MoveKind(w.Kind) {
		return a.move(ctx, seq, first, m, w)
	}
	so, err := a.streamOrg(w.Org)
	if err != nil {
		return h, err
	}
	if so.Fenced != "" || so.Incoming != "" {
		h.rej = &refusal{RejectMoving, fmt.Errorf("%w: org %s is moving between shards (%s); its writes pause until it lives on its new shard, in moments; retry",
			ErrUnavailable, w.Org, a.shard)}
		return h, nil
	}
	release := a.book.lock(w.Org)
	e := &dataEntry{org: w.Org, src: a.shard, seq: seq, prev: so.Last, era: so.Era, w: w, seed: a.keys.idSeed(a.stream, seq), at: m.Time.UTC()}
	t, err := a.take(ctx, e, seq)
	if err != nil {
		release()
		return h, err
	}
	so.Last = seq
	if h.extra, err = a.stageAll(w.Org, so, t.state, stageIndex(w.Org, seq, first)); err != nil {
		release()
		return h, err
	}
	h.res, h.err, h.release = t.res, t.err, release
	return h, nil
}

// stageAll stages so (this log's record of org), st (the store's state
// of org; nil: unchanged) and more, and takes st into the book once the
// sequence is recorded.
func (a *Applier) stageAll(org string, so *streamOrg, st *orgState, more ...engine.AppliedKeyed) ([]engine.AppliedKeyed, error) {
	k, err := a.stageOrg(org, so)
	if err != nil {
		return nil, err
	}
	out := append([]engine.AppliedKeyed{k}, more...)
	if st != nil {
		ks, err := a.book.stage(org, st)
		if err != nil {
			return nil, err
		}
		c := *st
		a.pending = append(a.pending, func() { a.book.set(org, &c) })
		out = append(out, ks)
	}
	return out, nil
}

// taken is what take did.
type taken struct {
	res   service.WriteResult
	err   error
	state *orgState // the store's state of the org to record
}

// take applies data entry e, at position pos of this applier's log, to
// the store, unless the store's copy of the org has it already
// (orgState), after the entries before it that the copy lacks; the org's
// lock is held. A copy's entry (from another log) taken first here
// leaves its result for the applier of its own log, which finds it taken
// (a store that applies both logs).
//
// The store's copy of an org follows one log from an era: an entry this
// log's history up to where the copy stands includes is skipped (the
// copy went ahead of this applier, through another log's copies of it);
// an entry of another log, or of another era, starts the copy again from
// the entry's era (empty), but for an entry of this applier's own log
// that the copy is past (a later era).
func (a *Applier) take(ctx context.Context, e *dataEntry, pos uint64) (taken, error) {
	st, err := a.book.get(e.org)
	if err != nil {
		return taken{}, err
	}
	native := e.src == a.shard
	switch {
	case st == nil:
		st = &orgState{Src: e.src, At: e.era, Era: e.era} // nothing of the org here: empty
	case st.includes(a.shard, pos):
		// This log's history through here is in the copy already.
		return a.found(e), nil
	case st.Src == e.src && st.Era > e.era && native:
		// An entry the copy is past: a later era started (applied
		// ahead of this log's applier, from a copy of it).
		return a.found(e), nil
	case st.Src != e.src || st.Era != e.era:
		if err := a.fresh(ctx, e.org); err != nil {
			return taken{}, err
		}
		st = &orgState{Src: e.src, At: e.era, Era: e.era}
	}
	if e.seq <= st.At {
		t := a.found(e)
		return t, nil
	}
	if e.prev > st.At {
		if err := a.fill(ctx, st, e.org, e.src, e.prev); err != nil {
			return taken{}, err
		}
	}
	res, werr := a.app.Apply(ctx, e.w, service.ApplyOptions{Now: e.at, IDs: engine.NewIDSource(e.seed)})
	if werr != nil && (errors.Is(werr, service.ErrUnknownKind) || !service.Refused(werr)) {
		return taken{}, werr
	}
	if !native {
		a.book.took(e.src, e.seq, res, werr)
	}
	st.At = e.seq
	return taken{res: res, err: werr, state: st}, nil
}

// found is what taking an entry the store's copy already has gives: the
// result another applier of the store kept, if any.
func (a *Applier) found(e *dataEntry) taken {
	if r, ok := a.book.taken(e.src, e.seq); ok {
		return taken{res: r.res, err: r.err}
	}
	return taken{}
}

// fresh empties the store's copy of org, if it holds anything of it.
func (a *Applier) fresh(ctx context.Context, org string) error {
	has, err := a.app.OrgHasData(org)
	if err != nil || !has {
		return err
	}
	a.log.Info("cluster: this store's copy of an org removed", "stream", a.stream, "org", org)
	return a.app.DropOrg(ctx, org)
}

// fill applies the entries of org's history on src's log in (st.At,
// through], read from this applier's own log: its own entries (src is
// its shard), or the copies from src it holds. It records st after each.
// It is what a copy that lost its place catches up with (an era started
// again under it, a store whose source's applier went ahead or away).
func (a *Applier) fill(ctx context.Context, st *orgState, org, src string, through uint64) error {
	so, err := a.streamOrg(org)
	if err != nil {
		return err
	}
	after := so.Era
	if src == a.shard {
		after = st.At
	}
	refs, err := dataEntries(ctx, a.app, a.js, a.keys, a.shard, org, after, a.Applied(), a.o.Places)
	if err != nil {
		return err
	}
	if a.reader == nil {
		if a.reader, err = newReader(ctx, a.js, a.keys, a.shard); err != nil {
			return err
		}
	}
	a.log.Info("cluster: filling a gap in this store's copy of an org from the log", "stream", a.stream, "org", org, "from", src,
		"after", st.At, "through", through, "entries", len(refs))
	for _, ref := range refs {
		e, _, err := readEntry(ctx, a.reader, a.keys, a.shard, ref)
		if err != nil {
			return err
		}
		if src == a.shard {
			// This log's own history: its entries, copies of an earlier
			// move here among them, by their place here.
			e.src, e.seq = a.shard, ref.seq
		}
		if e.src != src || e.seq <= st.At || e.org != org {
			continue
		}
		if e.seq > through {
			break
		}
		res, werr := a.app.Apply(ctx, e.w, service.ApplyOptions{Now: e.at, IDs: engine.NewIDSource(e.seed)})
		if werr != nil && (errors.Is(werr, service.ErrUnknownKind) || !service.Refused(werr)) {
			return werr
		}
		if e.src != a.shard {
			a.book.took(e.src, e.seq, res, werr)
		}
		st.At = e.seq
		if err := a.book.put(org, st); err != nil {
			return err
		}
	}
	if st.At != through {
		return fmt.Errorf("cluster: org %s's history on %s through %d is not all on %s (reached %d); the log is not applied past it", org, src, through, a.stream, st.At)
	}
	return nil
}

// stalled stops the applier at st.Seq (nothing recorded: a restart of a
// binary that knows the write resumes there) and says so once; it
// returns an error wrapping ErrStalled, which ends Run.
func (a *Applier) stalled(st Stall) error {
	st.Shard = a.shard
	a.mu.Lock()
	first := a.stall == nil
	if first {
		a.stall = &st
		close(a.changed) // waiters past the stall are answered now
		a.changed = make(chan struct{})
	}
	a.mu.Unlock()
	if first {
		a.log.Error("cluster: a logged write this binary cannot apply; the shard is stalled here until this node is upgraded",
			"stream", a.stream, "seq", st.Seq, "version", st.Version, "kind", st.Kind, "reason", st.Reason, "applied", a.Applied())
	}
	return st.err()
}

// admit checks that w belongs on this stream: a global kind on the global
// log, any other on the shard its org is placed on.
func (a *Applier) admit(ctx context.Context, w service.Write) (*refusal, error) {
	if w.Global() != (a.shard == GlobalShard) {
		return &refusal{RejectKind, fmt.Errorf("%w: a write of kind %q on the log of %s", engine.ErrInvalidInput, w.Kind, a.shard)}, nil
	}
	if a.shard == GlobalShard {
		return nil, nil
	}
	if engine.ValidateID(w.Org) != nil {
		return &refusal{RejectShard, fmt.Errorf("%w: a write of kind %q names no valid org", engine.ErrInvalidInput, w.Kind)}, nil
	}
	if service.MoveKind(w.Kind) {
		return a.admitMove(ctx, w)
	}
	ok, err := a.o.Places(ctx, w.Org, a.shard)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &refusal{RejectShard, fmt.Errorf("%w: org %s is not placed on shard %s; retry", service.ErrUnavailable, w.Org, a.shard)}, nil
	}
	return nil, nil
}

// record notes seq applied in the store's AppliedLog (with the split
// writes still incomplete, to read again after a restart, a keyed write's
// record when keyed is not nil, and extra, in the same transaction) and,
// for a write this node published, its result. The caches of what it
// recorded follow (a.pending) once it committed.
func (a *Applier) record(seq uint64, keep bool, res service.WriteResult, err error, keyed *keyedRecord, extra ...engine.AppliedKeyed) error {
	var note []byte // the split writes still incomplete, JSON
	if len(a.parts) > 0 {
		marks := make([]partialMark, 0, len(a.parts))
		for _, p := range a.parts {
			if p.next < p.count { // a complete one is applied with this record
				marks = append(marks, partialMark{ID: p.id, First: p.first})
			}
		}
		if len(marks) > 0 {
			var jerr error
			if note, jerr = json.Marshal(marks); jerr != nil {
				return jerr
			}
		}
	}
	staged := extra
	if keyed != nil {
		kv, jerr := json.Marshal(keyed)
		if jerr != nil {
			return jerr
		}
		staged = append(staged, engine.AppliedKeyed{ID: keyed.ID, Value: kv})
	}
	if err := a.rec.Record(seq, note, staged...); err != nil {
		a.pending = a.pending[:0]
		return err
	}
	for _, f := range a.pending {
		f()
	}
	a.pending = a.pending[:0]
	res.Seq, res.Shard = seq, a.shard
	a.mu.Lock()
	a.applied = seq
	if keep {
		a.results[seq] = applied{res, err}
		if len(a.results) > keptResults {
			for s := range a.results {
				if s+keptResults < seq {
					delete(a.results, s)
				}
			}
		}
	}
	close(a.changed)
	a.changed = make(chan struct{})
	a.mu.Unlock()
	return nil
}

// keyedRecord is what an applier keeps of a keyed write it applied (a
// storage record, in the store's AppliedLog): when, and the result to
// answer a retry with.
type keyedRecord struct {
	V   int    `json:"v"`
	ID  string `json:"id"`
	Seq uint64 `json:"seq"`
	At  int64  `json:"at"` // the log's time of the write, unix milliseconds
	// Res is the result (nil: over keptResultBytes); Err and Code the
	// refusal (Code: its kind, refusalKinds).
	Res  json.RawMessage `json:"res,omitempty"`
	Err  string          `json:"err,omitempty"`
	Code string          `json:"code,omitempty"`
}

const keyedVersion = 1

// refusalKinds are the errors a service refusal is answered with again
// to a retry, by Code.
var refusalKinds = []struct {
	code string
	err  error
}{
	{"invalid_input", engine.ErrInvalidInput}, {"not_found", engine.ErrNotFound}, {"forbidden", engine.ErrForbidden},
	{"too_large", engine.ErrTooLarge}, {"conflict", engine.ErrConflict}, {"dimension_mismatch", engine.ErrDimensionMismatch},
	{"invalid_request", compose.ErrInvalidRequest}, {"invalid_policy", policy.ErrInvalidPolicy},
}

// keep sets r's result to res, err.
func (r *keyedRecord) keep(res service.WriteResult, err error) {
	r.V = keyedVersion
	if err != nil {
		r.Err, r.Code = err.Error(), "invalid_input"
		for _, k := range refusalKinds {
			if errors.Is(err, k.err) {
				r.Code = k.code
				break
			}
		}
		return
	}
	if b, jerr := json.Marshal(res); jerr == nil && len(b) <= keptResultBytes {
		r.Res = b
	}
}

// result is the kept result, marked a replay.
func (r *keyedRecord) result() (service.WriteResult, error) {
	var res service.WriteResult
	if r.Err != "" {
		e := replayedError{msg: r.Err, is: engine.ErrInvalidInput}
		for _, k := range refusalKinds {
			if k.code == r.Code {
				e.is = k.err
			}
		}
		return service.WriteResult{Replayed: true}, e
	}
	if len(r.Res) > 0 && json.Unmarshal(r.Res, &res) != nil {
		res = service.WriteResult{}
	}
	res.Replayed = true
	return res, nil
}

// replayedError is a refusal answered again to a retry: its first text,
// and the sentinel it matched.
type replayedError struct {
	msg string
	is  error
}

func (e replayedError) Error() string { return e.msg }
func (e replayedError) Unwrap() error { return e.is }

// keyed is the record of keyed write id if it was applied within
// keyedKeep of now (the log's time), else nil.
func (a *Applier) keyed(id string, now time.Time) (*keyedRecord, error) {
	v, err := a.rec.Keyed(id)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r keyedRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, fmt.Errorf("cluster: keyed write %s of %s: %w", id, a.stream, err)
	}
	if now.Sub(time.UnixMilli(r.At)) > keyedKeep {
		return nil, nil // forgotten, as if swept
	}
	return &r, nil
}

// sweep deletes the keyed writes applied more than keyedKeep before now
// (the log's time); keyed takes them for absent already, so when a
// replica sweeps changes nothing it decides.
func (a *Applier) sweep(now time.Time) error {
	var old []string
	err := a.rec.EachKeyedPrefix(keyedPrefix, func(id string, v []byte) error {
		var r keyedRecord
		if json.Unmarshal(v, &r) != nil || now.Sub(time.UnixMilli(r.At)) > keyedKeep {
			old = append(old, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := a.rec.Forget(old); err != nil {
		return err
	}
	a.swept = now
	return nil
}

// Replayed waits until seq is applied and answers a write JetStream found
// a duplicate of (the same keyed id, within its window): the first
// one's result, at seq, marked a replay (empty when it was not kept).
func (a *Applier) Replayed(ctx context.Context, seq uint64, id string) (service.WriteResult, error) {
	if err := a.WaitFor(ctx, seq); err != nil {
		return service.WriteResult{}, err
	}
	a.mu.Lock()
	delete(a.results, seq) // the first attempt's, if it gave up waiting here
	a.mu.Unlock()
	r, err := a.keyed(id, time.Now())
	if err != nil {
		return service.WriteResult{}, err
	}
	if r == nil {
		return service.WriteResult{Replayed: true}, nil
	}
	return r.result()
}
