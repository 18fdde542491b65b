package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/engine"
)

// Write is one replicated write, as published to a shard's stream.
type Write struct {
	Kind         string                    `json:"kind"` // "import" or "observations"
	Org          string                    `json:"org"`
	Project      string                    `json:"project"`
	Triplets     []engine.TripletInput     `json:"triplets,omitempty"`
	Observations []engine.ObservationInput `json:"observations,omitempty"`
}

// StreamName and Subject name a shard's stream and its write subject.
func StreamName(cluster, shard string) string { return "kgctx_" + cluster + "_" + shard }
func Subject(cluster, shard string) string    { return "kgctx." + cluster + "." + shard + ".w" }

// EnsureShard creates the shard's stream (replicas copies) if it is not
// there.
func EnsureShard(ctx context.Context, js jetstream.JetStream, cluster, shard string, replicas int) error {
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: StreamName(cluster, shard),
		Subjects: []string{Subject(cluster, shard)}, Replicas: replicas, Storage: jetstream.FileStorage})
	return err
}

// Publish appends w to the shard's stream and returns its sequence once
// JetStream has acknowledged it: stored on a majority of the replicas.
func Publish(ctx context.Context, js jetstream.JetStream, cluster, shard string, w Write) (uint64, error) {
	b, err := json.Marshal(w)
	if err != nil {
		return 0, err
	}
	ack, err := js.Publish(ctx, Subject(cluster, shard), b)
	if err != nil {
		return 0, fmt.Errorf("cluster: publish to %s: %w", shard, err)
	}
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
	st     *engine.Store
	js     jetstream.JetStream
	stream string
	key    []byte

	mu      sync.Mutex
	applied uint64
	changed chan struct{} // closed and replaced at every applied write
}

// NewApplier reads the sequence st has applied of the shard's stream.
func NewApplier(st *engine.Store, js jetstream.JetStream, cluster, shard string) (*Applier, error) {
	a := &Applier{st: st, js: js, stream: StreamName(cluster, shard), changed: make(chan struct{})}
	a.key = append([]byte{engine.PrefixCluster}, a.stream...)
	v, err := st.KV().Get(a.key)
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

// Run applies the stream until ctx is done. NATS errors (a stream leader
// being elected, a server restarting) are waited out: the consumer is made
// again from the sequence after the last applied. An error of the store
// stops it.
func (a *Applier) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		err := a.follow(ctx)
		var se storeError
		if errors.As(err, &se) {
			return se.err
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// storeError is an error of applying a write, which retrying would repeat.
type storeError struct{ err error }

func (e storeError) Error() string { return e.err.Error() }

// follow reads the stream from the sequence after the last applied until
// an error.
func (a *Applier) follow(ctx context.Context) error {
	c, err := a.js.OrderedConsumer(ctx, a.stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: a.Applied() + 1})
	if err != nil {
		return fmt.Errorf("cluster: consumer of %s: %w", a.stream, err)
	}
	for {
		m, err := c.Next(jetstream.FetchMaxWait(time.Second))
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
			continue // nothing new within the wait: ask again
		}
		if err != nil {
			return err
		}
		md, err := m.Metadata()
		if err != nil {
			return err
		}
		if md.Sequence.Stream <= a.Applied() {
			continue
		}
		if err := a.apply(ctx, md.Sequence.Stream, md.Timestamp, m.Data()); err != nil {
			return storeError{fmt.Errorf("cluster: apply %s #%d: %w", a.stream, md.Sequence.Stream, err)}
		}
	}
}

func (a *Applier) apply(ctx context.Context, seq uint64, at time.Time, data []byte) error {
	var w Write
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	t := engine.Tenant{Org: w.Org, Project: w.Project}
	o := engine.ImportOptions{Now: at.UTC(), IDs: engine.NewIDSource([]byte(fmt.Sprintf("%s/%d", a.stream, seq)))}
	var err error
	switch w.Kind {
	case "import":
		_, err = a.st.Import(ctx, t, w.Triplets, o)
	case "observations":
		_, err = a.st.AddObservations(ctx, t, w.Observations, o)
	default:
		err = fmt.Errorf("unknown write kind %q", w.Kind)
	}
	if err != nil {
		// A write the store refuses was refused on every replica alike
		// (validation is deterministic): it is skipped, and recorded.
		var ve *engine.ValidationError
		if !errors.As(err, &ve) {
			return err
		}
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	if err := a.st.KV().Update(func(txn *badger.Txn) error { return txn.Set(a.key, b[:]) }); err != nil {
		return err
	}
	a.mu.Lock()
	a.applied = seq
	close(a.changed)
	a.changed = make(chan struct{})
	a.mu.Unlock()
	return nil
}
