package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ShardOf places org on one of shards by rendezvous (highest random
// weight) hashing: every node computes the same answer from the same shard
// list, and adding a shard moves only the orgs the new shard wins (about
// 1/n of them). An override names the org's shard outright.
func ShardOf(org string, shards []string, overrides map[string]string) (string, error) {
	if s, ok := overrides[org]; ok {
		if !slices.Contains(shards, s) {
			return "", fmt.Errorf("cluster: org %q is placed on %q, which is not a shard", org, s)
		}
		return s, nil
	}
	if len(shards) == 0 {
		return "", errors.New("cluster: no shards")
	}
	best, bestW := "", uint64(0)
	for _, s := range shards {
		h := fnv.New64a()
		h.Write([]byte(s))
		h.Write([]byte{0})
		h.Write([]byte(org))
		if w := mix(h.Sum64()); best == "" || w > bestW || (w == bestW && s < best) {
			best, bestW = s, w
		}
	}
	return best, nil
}

// mix is splitmix64's finaliser: FNV's low bits are poor weights alone.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Placement is the cluster's placement map in a JetStream key-value
// bucket: a marker of the cluster (key "cluster"), the shard list (key
// "shards") and per-org overrides (key "org.<org>", an empty shard for
// none). Every value is a signedRecord: one without a valid MAC, and any
// delete marker (the cluster never deletes), is ignored, and of two valid
// values of a key the later wins. Once Watch runs, ShardOf answers from a
// copy the bucket's watcher keeps current, without a round trip to NATS
// per request.
type Placement struct {
	kv     jetstream.KeyValue
	keys   *Keys
	bucket string
	// bad is told of every value ignored (nil: none).
	bad func(key string)

	mu      sync.RWMutex
	watched bool // the copy below is current
	shards  []string
	at      map[string]int64    // key -> time of the value in the copy
	over    map[string]string   // org -> shard
	ever    map[string][]string // org -> every shard a valid override named
	since   map[string]since    // org -> where its last move put it, from which sequence
	moves   map[string]*moveAt  // org -> its latest move
	everTo  map[string][]string // org -> every shard a valid move record moved it to
}

// since is where an override placed an org at the end of a move: from
// sequence Seq of Shard's log on (its flip), which a node of that shard
// serves the org only once it has applied.
type since struct {
	Shard string
	Seq   uint64
}

// moveAt is a move record as the copy holds it, with the revision of the
// bucket's value (for a compare-and-set).
type moveAt struct {
	rec MoveRecord
	rev uint64
}

// PlacementBucket names the placement bucket of cluster.
func PlacementBucket(cluster string) string { return "kgctx_" + cluster + "_placement" }

// OpenPlacement opens (or creates, with replicas copies) the placement
// bucket of the cluster keys are of.
func OpenPlacement(ctx context.Context, js jetstream.JetStream, keys *Keys, replicas int) (*Placement, error) {
	b := PlacementBucket(keys.cluster)
	kv, err := ensureKV(ctx, js, jetstream.KeyValueConfig{Bucket: b, Replicas: replicas, History: 64})
	if err != nil {
		return nil, fmt.Errorf("cluster: placement bucket: %w", err)
	}
	p := &Placement{kv: kv, keys: keys, bucket: b}
	p.reset()
	return p, nil
}

func (p *Placement) reset() {
	p.shards, p.at, p.over, p.ever = nil, map[string]int64{}, map[string]string{}, map[string][]string{}
	p.since, p.moves, p.everTo = map[string]since{}, map[string]*moveAt{}, map[string][]string{}
}

// marker is the value of the key "cluster": signed with the secret the
// cluster was made with.
type marker struct {
	Cluster string `json:"cluster"`
}

// CheckMarker writes the cluster's marker if the bucket has none and
// checks it: ErrSecretMismatch when no value of it verifies with this
// node's keys.
func (p *Placement) CheckMarker(ctx context.Context) error {
	v, err := p.keys.sealRecord(p.bucket, "cluster", marker{Cluster: p.keys.cluster})
	if err != nil {
		return err
	}
	if _, err := p.kv.Create(ctx, "cluster", v); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return err
	}
	// The marker exists now (ours or another node's), but the replica
	// that serves this read may not hold it yet: an empty history is
	// waited out, and only values that are there and do not verify refuse.
	var m marker
	var ok, seen bool
	for wait := 50 * time.Millisecond; ; wait *= 2 {
		es, err := p.kv.History(ctx, "cluster")
		if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return err
		}
		if seen = len(es) > 0; seen {
			if ok, err = p.pick("cluster", es, &m); err != nil {
				return err
			}
			break
		}
		if wait > 5*time.Second {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	if !seen {
		return fmt.Errorf("cluster: the marker written to the NATS bucket %s cannot be read back (is JetStream's meta leader reachable?)", p.bucket)
	}
	if !ok || m.Cluster != p.keys.cluster {
		return fmt.Errorf("%w from the one cluster %s was made with (its marker in the NATS bucket %s does not verify with this node's --cluster-secret-file)",
			ErrSecretMismatch, p.keys.cluster, p.bucket)
	}
	return nil
}

// newest decodes into v the latest valid value of key, read from the
// bucket's history; false if none is valid.
func (p *Placement) newest(ctx context.Context, key string, v any) (bool, error) {
	es, err := p.kv.History(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return p.pick(key, es, v)
}

// pick decodes into v the latest valid value among es, the history of
// key; false if none is valid.
func (p *Placement) pick(key string, es []jetstream.KeyValueEntry, v any) (bool, error) {
	var best json.RawMessage
	var bestAt int64
	for _, e := range es {
		if e.Operation() != jetstream.KeyValuePut {
			continue
		}
		var raw json.RawMessage
		at, err := p.keys.openRecord(p.bucket, key, e.Value(), &raw)
		if err != nil {
			p.ignored(key)
			continue
		}
		if best == nil || at > bestAt {
			best, bestAt = raw, at
		}
	}
	if best == nil {
		return false, nil
	}
	return true, json.Unmarshal(best, v)
}

func (p *Placement) ignored(key string) {
	if p.bad != nil {
		p.bad(key)
	}
}

// overrideRecord is the value of "org.<org>".
type overrideRecord struct {
	Shard string `json:"shard"`
	// Since, set by a move, is the sequence of On's log (the move's
	// target: Shard, or the shard hashing gives when Shard is "") from
	// which the org lives there: a node of On serves it once it has
	// applied Since.
	Since uint64 `json:"since,omitempty"`
	On    string `json:"on,omitempty"`
}

// Watch keeps the in-memory copy of the map current until ctx ends. It
// returns once the copy holds the bucket's present values.
func (p *Placement) Watch(ctx context.Context) error {
	w, err := p.kv.WatchAll(ctx, jetstream.IncludeHistory())
	if err != nil {
		return fmt.Errorf("cluster: watch the placement bucket: %w", err)
	}
	p.mu.Lock()
	p.reset()
	p.mu.Unlock()
	for e := range w.Updates() {
		if e == nil { // the present values are all delivered
			break
		}
		p.apply(e)
	}
	p.mu.Lock()
	p.watched = true
	p.mu.Unlock()
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				p.stale()
				return
			case e, ok := <-w.Updates():
				if !ok {
					p.stale()
					return
				}
				if e != nil {
					p.apply(e)
				}
			}
		}
	}()
	return nil
}

// stale marks the copy out of date: ShardOf reads the bucket until Watch
// runs again.
func (p *Placement) stale() {
	p.mu.Lock()
	p.watched = false
	p.mu.Unlock()
}

// apply takes a value of the bucket into the copy, if it is valid and
// later than the one the copy has.
func (p *Placement) apply(e jetstream.KeyValueEntry) {
	if e.Operation() != jetstream.KeyValuePut {
		p.ignored(e.Key())
		return
	}
	switch k := e.Key(); {
	case k == "shards":
		var s []string
		at, err := p.keys.openRecord(p.bucket, k, e.Value(), &s)
		if err != nil {
			p.ignored(k)
			return
		}
		p.mu.Lock()
		if at > p.at[k] {
			p.shards, p.at[k] = s, at
		}
		p.mu.Unlock()
	case strings.HasPrefix(k, "org."):
		var o overrideRecord
		at, err := p.keys.openRecord(p.bucket, k, e.Value(), &o)
		if err != nil {
			p.ignored(k)
			return
		}
		org := strings.TrimPrefix(k, "org.")
		p.mu.Lock()
		if o.Shard != "" && !slices.Contains(p.ever[org], o.Shard) {
			p.ever[org] = append(p.ever[org], o.Shard)
		}
		if at > p.at[k] {
			p.at[k] = at
			if o.Shard == "" {
				delete(p.over, org)
			} else {
				p.over[org] = o.Shard
			}
			if o.Since > 0 {
				p.since[org] = since{Shard: o.On, Seq: o.Since}
			} else {
				delete(p.since, org)
			}
		}
		p.mu.Unlock()
	case strings.HasPrefix(k, "move."):
		var r MoveRecord
		at, err := p.keys.openRecord(p.bucket, k, e.Value(), &r)
		org := strings.TrimPrefix(k, "move.")
		if err != nil || r.Org != org {
			p.ignored(k)
			return
		}
		p.mu.Lock()
		if r.To != "" && !slices.Contains(p.everTo[org], r.To) {
			p.everTo[org] = append(p.everTo[org], r.To)
		}
		if at > p.at[k] {
			p.at[k] = at
			p.moves[org] = &moveAt{rec: r, rev: e.Revision()}
		}
		p.mu.Unlock()
	case k == "cluster":
		if _, err := p.keys.openRecord(p.bucket, k, e.Value(), &marker{}); err != nil {
			p.ignored(k)
		}
	default:
		p.ignored(k)
	}
}

// SetShards replaces the shard list.
func (p *Placement) SetShards(ctx context.Context, shards []string) error {
	v, err := p.keys.sealRecord(p.bucket, "shards", shards)
	if err != nil {
		return err
	}
	_, err = p.kv.Put(ctx, "shards", v)
	return err
}

// createShards writes the shard list if the bucket has none.
func (p *Placement) createShards(ctx context.Context, shards []string) error {
	v, err := p.keys.sealRecord(p.bucket, "shards", shards)
	if err != nil {
		return err
	}
	if _, err := p.kv.Create(ctx, "shards", v); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return err
	}
	return nil
}

// Override places org on shard ("" removes the override).
func (p *Placement) Override(ctx context.Context, org, shard string) error {
	return p.override(ctx, org, overrideRecord{Shard: shard})
}

func (p *Placement) override(ctx context.Context, org string, o overrideRecord) error {
	v, err := p.keys.sealRecord(p.bucket, "org."+org, o)
	if err != nil {
		return err
	}
	_, err = p.kv.Put(ctx, "org."+org, v)
	return err
}

// Since says from which sequence of which shard's log org lives there,
// when a move put it where it is (0: no move did, or the copy is not
// current: nothing to wait for).
func (p *Placement) Since(org string) (string, uint64) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	s := p.since[org]
	return s.Shard, s.Seq
}

// Move returns org's latest move record as the copy has it (nil: none)
// and the revision of its value.
func (p *Placement) Move(org string) (*MoveRecord, uint64) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	m, ok := p.moves[org]
	if !ok {
		return nil, 0
	}
	r := m.rec
	return &r, m.rev
}

// Moves returns every move record the copy has, by org.
func (p *Placement) Moves() []MoveRecord {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]MoveRecord, 0, len(p.moves))
	for _, m := range p.moves {
		out = append(out, m.rec)
	}
	slices.SortFunc(out, func(a, b MoveRecord) int { return strings.Compare(a.Org, b.Org) })
	return out
}

// putMove writes r as org's move record: created (rev 0: ErrKeyExists
// when there is one) or updated over revision rev (a conflict when
// another wrote it since). It returns the new revision.
func (p *Placement) putMove(ctx context.Context, r MoveRecord, rev uint64) (uint64, error) {
	k := "move." + r.Org
	v, err := p.keys.sealRecord(p.bucket, k, r)
	if err != nil {
		return 0, err
	}
	if rev == 0 {
		return p.kv.Create(ctx, k, v)
	}
	return p.kv.Update(ctx, k, v, rev)
}

// latestMove reads org's move record from the bucket (nil: none valid),
// with its revision.
func (p *Placement) latestMove(ctx context.Context, org string) (*MoveRecord, uint64, error) {
	k := "move." + org
	es, err := p.kv.History(ctx, k)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var best *MoveRecord
	var bestAt int64
	var rev uint64
	for _, e := range es {
		rev = max(rev, e.Revision()) // an update names the key's last value, whatever it is
		if e.Operation() != jetstream.KeyValuePut {
			continue
		}
		var r MoveRecord
		at, err := p.keys.openRecord(p.bucket, k, e.Value(), &r)
		if err != nil || r.Org != org {
			continue
		}
		if best == nil || at > bestAt {
			best, bestAt = &r, at
		}
	}
	return best, rev, nil
}

// MayReceive reports whether a move of org to shard was ever started: a
// valid move record named it (the target's appliers take a move's steps
// only then). Every replica answers alike whichever records it has seen.
func (p *Placement) MayReceive(ctx context.Context, org, shard string) (bool, error) {
	p.mu.RLock()
	ok := slices.Contains(p.everTo[org], shard)
	p.mu.RUnlock()
	if ok {
		return true, nil
	}
	es, err := p.kv.History(ctx, "move."+org)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range es {
		var r MoveRecord
		if e.Operation() == jetstream.KeyValuePut {
			if _, err := p.keys.openRecord(p.bucket, e.Key(), e.Value(), &r); err == nil && r.Org == org && r.To == shard {
				return true, nil
			}
		}
	}
	return false, nil
}

// current reports whether the watched copy is current.
func (p *Placement) current() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.watched
}

// ShardOf places org: from the watched copy, else reading the bucket.
func (p *Placement) ShardOf(ctx context.Context, org string) (string, error) {
	s, _, err := p.Lookup(ctx, org)
	return s, err
}

// Lookup places org and says whether an override put it there.
func (p *Placement) Lookup(ctx context.Context, org string) (string, bool, error) {
	p.mu.RLock()
	if p.watched && len(p.shards) > 0 {
		defer p.mu.RUnlock()
		o, ok := p.over[org]
		if !ok {
			s, err := ShardOf(org, p.shards, nil)
			return s, false, err
		}
		s, err := ShardOf(org, p.shards, map[string]string{org: o})
		return s, true, err
	}
	p.mu.RUnlock()
	shards, err := p.Shards(ctx)
	if err != nil {
		return "", false, err
	}
	var o overrideRecord
	found, err := p.newest(ctx, "org."+org, &o)
	if err != nil {
		return "", false, err
	}
	over := map[string]string{}
	if found && o.Shard != "" {
		over[org] = o.Shard
	}
	s, err := ShardOf(org, shards, over)
	return s, len(over) > 0, err
}

// MayHold reports whether shard's log may hold writes of org: the shard
// rendezvous hashing gives it, or one a valid override named at any time
// (an org is placed by an override only while it has no data, so a write
// published before an override moved it is still the org's). Every
// replica answers alike whichever of the overrides it has seen.
func (p *Placement) MayHold(ctx context.Context, org, shard string) (bool, error) {
	p.mu.RLock()
	shards := p.shards
	held := slices.Contains(p.ever[org], shard)
	p.mu.RUnlock()
	if len(shards) == 0 {
		var err error
		if shards, err = p.Shards(ctx); err != nil {
			return false, err
		}
	}
	if s, err := ShardOf(org, shards, nil); err == nil && s == shard || held {
		return true, nil
	}
	// Not in the copy (its watcher may lag): the bucket's history.
	es, err := p.kv.History(ctx, "org."+org)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range es {
		var o overrideRecord
		if e.Operation() == jetstream.KeyValuePut {
			if _, err := p.keys.openRecord(p.bucket, e.Key(), e.Value(), &o); err == nil && o.Shard == shard {
				return true, nil
			}
		}
	}
	return false, nil
}

// Shards reads the shard list: the latest valid value of "shards".
func (p *Placement) Shards(ctx context.Context) ([]string, error) {
	var shards []string
	found, err := p.newest(ctx, "shards", &shards)
	if err != nil {
		return nil, fmt.Errorf("cluster: shard list: %w", err)
	}
	if !found || len(shards) == 0 {
		return nil, fmt.Errorf("cluster: shard list: no valid value in the bucket %s", p.bucket)
	}
	return shards, nil
}
