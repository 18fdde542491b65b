package compose

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/configstore"
)

// document is one kind of configuration document (a project's memory
// configuration, an org's plan, the recall matrix ...): durable in the
// store's configuration key space under (kind, key(k)), and cached in
// memory because blocks read it on every request.
//
// Invariants, and why:
//   - A cache miss loads from the store under the write lock, so a load can
//     never land after (and overwrite) a Set that finished meanwhile: the
//     cache holds what the store holds, until restart and after.
//   - Get hands out a deep copy (clone), and Set keeps one: a caller that
//     mutates what it got or gave cannot change what others read.
//
// Safe for concurrent use.
type document[K comparable, T any] struct {
	cs   *configstore.Store
	kind string
	key  func(K) string
	// def is the value of a key nothing was stored under.
	def func() T
	// normalize fixes a value before it is cached or stored (nil maps and
	// slices become empty, lists are normalised); an error refuses a Set
	// (and reports a stored value that no longer holds).
	normalize func(*T) error
	clone     func(T) T

	mu    sync.RWMutex
	cache map[K]T
}

// Get returns the document under k: the stored one, else the default.
func (d *document[K, T]) Get(k K) (T, error) {
	d.mu.RLock()
	v, ok := d.cache[k]
	d.mu.RUnlock()
	if ok {
		return d.clone(v), nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if v, ok := d.cache[k]; ok { // loaded while we waited
		return d.clone(v), nil
	}
	v = d.def()
	b, err := d.cs.Get(d.kind, d.key(k))
	switch {
	case errors.Is(err, engine.ErrNotFound):
	case err != nil:
		return v, err
	default:
		if err := json.Unmarshal(b, &v); err != nil {
			return v, fmt.Errorf("compose: stored %s %s: %w", d.kind, d.key(k), err)
		}
	}
	if err := d.normalize(&v); err != nil {
		return v, fmt.Errorf("compose: stored %s %s: %w", d.kind, d.key(k), err)
	}
	if d.cache == nil {
		d.cache = map[K]T{}
	}
	d.cache[k] = v
	return d.clone(v), nil
}

// Set validates v (normalize), makes it durable, then caches it. On error
// nothing changes.
func (d *document[K, T]) Set(k K, v T) error {
	v = d.clone(v)
	if err := d.normalize(&v); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.cs.Put(d.kind, d.key(k), b); err != nil {
		return err
	}
	if d.cache == nil {
		d.cache = map[K]T{}
	}
	d.cache[k] = v
	return nil
}

// read calls fn with the document under k without copying it: fn must
// not keep or change it. Hot paths (a quota per request) use it.
func (d *document[K, T]) read(k K, fn func(T)) error {
	d.mu.RLock()
	v, ok := d.cache[k]
	d.mu.RUnlock()
	if !ok {
		var err error
		if v, err = d.Get(k); err != nil {
			return err
		}
	}
	fn(v)
	return nil
}

// drop deletes every stored document whose key stored matches and every
// cached one whose key cached matches, under the write lock (no load can
// bring one back meanwhile).
func (d *document[K, T]) drop(stored func(key string) bool, cached func(K) bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var keys []string
	err := d.cs.Each(d.kind, func(key string, _ []byte) error {
		if stored(key) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, key := range keys {
		if err := d.cs.Delete(d.kind, key); err != nil {
			return fmt.Errorf("compose: delete %s %s: %w", d.kind, key, err)
		}
	}
	for k := range d.cache {
		if cached(k) {
			delete(d.cache, k)
		}
	}
	return nil
}
