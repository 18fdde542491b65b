package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

// StreamName and Subject name a shard's stream and its write subject.
func StreamName(cluster, shard string) string { return "kgctx_" + cluster + "_" + shard }

// shardOfStream is the shard a StreamName names.
func shardOfStream(stream string) string   { return stream[strings.LastIndexByte(stream, '_')+1:] }
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

// originHeader names the node that published a write and the write's
// number there, so that its applier keeps the result for the waiting
// request.
const originHeader = "Kgctx-Origin"

// Publish appends w to the shard's stream and returns its sequence once
// JetStream has acknowledged it: stored on a majority of the replicas.
// origin ("" for none) is the originHeader.
func Publish(ctx context.Context, js jetstream.JetStream, cluster, shard string, w service.Write, origin string) (uint64, error) {
	b, err := json.Marshal(w)
	if err != nil {
		return 0, err
	}
	msg := nats.NewMsg(Subject(cluster, shard))
	msg.Data = b
	if origin != "" {
		msg.Header.Set(originHeader, origin)
	}
	ack, err := js.PublishMsg(ctx, msg)
	if err != nil {
		return 0, fmt.Errorf("cluster: publish to %s: %w", shard, err)
	}
	js.Conn().Publish(notifySubject(cluster, shard), strconv.AppendUint(nil, ack.Sequence, 10))
	return ack.Sequence, nil
}

// Applier applies one shard's stream to a store, in order, from the
// sequence after the last one it recorded: a restarted node resumes where
// it stopped. A write applies with ids drawn from the stream and its
// sequence and with the time JetStream stamped on it, so every replica
// gives it the same ids and times; the applied sequence is recorded after
// the write, and a write applied twice (a crash between the two) changes
// nothing the second time (imports merge; observations keep their id).
type Applier struct {
	app     *service.App
	js      jetstream.JetStream
	stream  string
	st      jetstream.Stream // the stream's handle, once had
	subject string
	key     []byte
	origin  string // this node's originHeader prefix ("" keeps no results)
	log     *slog.Logger

	mu      sync.Mutex
	applied uint64
	changed chan struct{} // closed and replaced at every applied write
	results map[uint64]applied
}

// applied is the outcome of a write this node published.
type applied struct {
	res service.WriteResult
	err error
}

// NewApplier reads the sequence app's store has applied of the shard's
// stream. origin is this node's id: the results of the writes it
// published are kept for Result.
func NewApplier(app *service.App, js jetstream.JetStream, cluster, shard, origin string) (*Applier, error) {
	a := &Applier{app: app, js: js, stream: StreamName(cluster, shard), subject: notifySubject(cluster, shard), changed: make(chan struct{}), origin: origin,
		results: map[uint64]applied{}, log: app.Logger}
	if a.log == nil {
		a.log = slog.Default()
	}
	a.key = append([]byte{engine.PrefixCluster}, a.stream...)
	v, err := app.Store.KV().Get(a.key)
	switch {
	case errors.Is(err, engine.ErrNotFound):
	case err != nil:
		return nil, err
	case len(v) == 8:
		a.applied = binary.BigEndian.Uint64(v)
	default:
		return nil, fmt.Errorf("cluster: applied sequence of %s: %d bytes", a.stream, len(v))
	}
	return a, nil
}

// Applied is the last sequence applied.
func (a *Applier) Applied() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.applied
}

// WaitFor waits until seq is applied or ctx is done (read-your-writes).
func (a *Applier) WaitFor(ctx context.Context, seq uint64) error {
	for {
		a.mu.Lock()
		done, ch := a.applied >= seq, a.changed
		a.mu.Unlock()
		if done {
			return nil
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
func (a *Applier) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		err := a.follow(ctx)
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

// follow reads the stream from the sequence after the last applied until
// an error: message by message (a direct get, which any replica answers),
// woken by the publishers' notices and, failing those, every second.
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
			gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			m, err := a.st.GetMsg(gctx, seq)
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, jetstream.ErrMsgNotFound) && seq <= known {
				// Written, but the replica that answered has not stored
				// it yet: ask again in a moment.
				time.Sleep(5 * time.Millisecond)
				continue
			}
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				break // not written yet
			}
			if err != nil {
				return err
			}
			if err := a.apply(ctx, seq, m.Time, m.Header.Get(originHeader), m.Data); err != nil {
				return fmt.Errorf("cluster: apply %s #%d: %w", a.stream, seq, err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case m := <-wake:
			for more := true; more; {
				if q, err := strconv.ParseUint(string(m.Data), 10, 64); err == nil {
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

func (a *Applier) apply(ctx context.Context, seq uint64, at time.Time, origin string, data []byte) error {
	var w service.Write
	var res service.WriteResult
	err := json.Unmarshal(data, &w)
	if err != nil {
		err = fmt.Errorf("%w: undecodable write: %v", engine.ErrInvalidInput, err)
	} else {
		res, err = a.app.Apply(ctx, w, service.ApplyOptions{Now: at.UTC(), IDs: engine.NewIDSource([]byte(fmt.Sprintf("%s/%d", a.stream, seq)))})
	}
	if err != nil && !service.Refused(err) {
		return err // this replica's own failure: try again
	}
	// A refused write was refused on every replica alike; it is recorded
	// as applied and answered with its error.
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	if err := a.app.Store.KV().Update(func(txn *badger.Txn) error { return txn.Set(a.key, b[:]) }); err != nil {
		return err
	}
	res.Seq, res.Shard = seq, shardOfStream(a.stream)
	a.mu.Lock()
	a.applied = seq
	if a.origin != "" && origin == a.origin {
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
