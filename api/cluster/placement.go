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
// bucket: the shard list (key "shards") and per-org overrides (key
// "org.<org>"). Once Watch runs, ShardOf answers from a copy the bucket's
// watcher keeps current, without a round trip to NATS per request.
type Placement struct {
	kv jetstream.KeyValue

	mu      sync.RWMutex
	watched bool // the copy below is current
	shards  []string
	over    map[string]string
}

// OpenPlacement opens (or creates, with replicas copies) the placement
// bucket of cluster name.
func OpenPlacement(ctx context.Context, js jetstream.JetStream, name string, replicas int) (*Placement, error) {
	kv, err := ensureKV(ctx, js, jetstream.KeyValueConfig{Bucket: "kgctx_" + name + "_placement", Replicas: replicas, History: 5})
	if err != nil {
		return nil, fmt.Errorf("cluster: placement bucket: %w", err)
	}
	return &Placement{kv: kv}, nil
}

// Watch keeps the in-memory copy of the map current until ctx ends. It
// returns once the copy holds the bucket's present values.
func (p *Placement) Watch(ctx context.Context) error {
	w, err := p.kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("cluster: watch the placement bucket: %w", err)
	}
	shards, over := []string(nil), map[string]string{}
	for e := range w.Updates() {
		if e == nil { // the present values are all delivered
			break
		}
		applyEntry(e, &shards, over)
	}
	p.mu.Lock()
	p.shards, p.over, p.watched = shards, over, true
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
				if e == nil {
					continue
				}
				p.mu.Lock()
				applyEntry(e, &p.shards, p.over)
				p.mu.Unlock()
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

func applyEntry(e jetstream.KeyValueEntry, shards *[]string, over map[string]string) {
	del := e.Operation() != jetstream.KeyValuePut
	switch k := e.Key(); {
	case k == "shards" && !del:
		var s []string
		if json.Unmarshal(e.Value(), &s) == nil {
			*shards = s
		}
	case strings.HasPrefix(k, "org.") && del:
		delete(over, strings.TrimPrefix(k, "org."))
	case strings.HasPrefix(k, "org."):
		over[strings.TrimPrefix(k, "org.")] = string(e.Value())
	}
}

// SetShards replaces the shard list.
func (p *Placement) SetShards(ctx context.Context, shards []string) error {
	b, _ := json.Marshal(shards)
	_, err := p.kv.Put(ctx, "shards", b)
	return err
}

// Override places org on shard ("" removes the override).
func (p *Placement) Override(ctx context.Context, org, shard string) error {
	if shard == "" {
		err := p.kv.Delete(ctx, "org."+org)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		return err
	}
	_, err := p.kv.Put(ctx, "org."+org, []byte(shard))
	return err
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
	over := map[string]string{}
	if o, err := p.kv.Get(ctx, "org."+org); err == nil {
		over[org] = string(o.Value())
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", false, err
	}
	s, err := ShardOf(org, shards, over)
	return s, len(over) > 0, err
}

// Shards reads the shard list.
func (p *Placement) Shards(ctx context.Context) ([]string, error) {
	e, err := p.kv.Get(ctx, "shards")
	if err != nil {
		return nil, fmt.Errorf("cluster: shard list: %w", err)
	}
	var shards []string
	if err := json.Unmarshal(e.Value(), &shards); err != nil {
		return nil, fmt.Errorf("cluster: shard list: %w", err)
	}
	return shards, nil
}
