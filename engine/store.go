package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// Store is the durable graph: Badger on disk, the graph image in memory.
//
// Concurrency: all methods are safe for concurrent use. Writes (Import,
// deletes, weight updates) are serialised by a writer mutex; each commits to
// Badger first and then applies to memory under a short exclusive lock, so
// readers (View) see whole batches only. Readers never wait on Badger I/O of
// a writer, only on its in-memory apply.
type Store struct {
	db   *badger.DB
	opts Options
	dim  int
	log  *slog.Logger

	wmu  fifoLock     // serialises writers, first come first served (locks.go)
	mu   sync.RWMutex // guards g
	g    *graph
	seq  uint64 // last change-log sequence written (guarded by wmu)
	next struct{ node, edge, obs uint32 }

	aq *applyQueue // applies change sets to the indexers (applyqueue.go)
	// applyBackoff is the first wait before an indexer's failed Apply is
	// retried; tests shrink it.
	applyBackoff time.Duration

	kv KV // the handle the packages beside engine use (kv.go)

	tlocks tenantLocks // projects' import locks (locks.go)
	chunks chunking    // import chunk bounds (bulk.go); tests shrink them
	// bulk counts the running bulk imports, which Close waits for.
	bulk struct {
		mu   sync.Mutex
		n    int
		idle chan struct{}
	}
	// hooks let tests watch an import's progress.
	hooks struct {
		chunk func(t Tenant, done int) // after each committed chunk
	}

	closed atomic.Bool
}

var descSeed = maphash.MakeSeed()

func descHash(s string) uint64 {
	if s == "" {
		return 0
	}
	return maphash.String(descSeed, s)
}

// Open opens or creates the store in dir. A nil opts means defaults. The
// caller MUST call Close; it flushes indexers' state and closes Badger.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	bo := badger.DefaultOptions(dir).
		WithLogger(badgerLogger{log}).
		WithSyncWrites(o.SyncWrites).
		WithNumVersionsToKeep(1).
		WithCompactL0OnClose(false).
		// Every record lives in the LSM tree, none in the value log: they
		// are small (edge pages reach a few KiB), in-memory mode requires
		// it, and reads need no second lookup.
		WithValueThreshold(1 << 20).
		// Records are small binary; Snappy saved little and cost a tenth of
		// an import's CPU. Uncompressed tables are read through mmap, so
		// no block cache is needed either.
		WithCompression(options.None).
		WithBlockCacheSize(0)
	if o.InMemory {
		bo = bo.WithInMemory(true).WithDir("").WithValueDir("")
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("engine: create data dir: %w", err)
	}
	if o.MemTableSize > 0 {
		bo = bo.WithMemTableSize(o.MemTableSize)
	}
	if o.BlockCacheSize > 0 {
		bo = bo.WithBlockCacheSize(o.BlockCacheSize)
	}
	db, err := badger.Open(bo)
	if err != nil {
		if isBadgerLocked(err) {
			return nil, fmt.Errorf("%w: %s: %v", ErrLocked, dir, err)
		}
		return nil, fmt.Errorf("engine: open badger: %w", err)
	}
	s := &Store{db: db, opts: o, log: log, g: newGraph()}
	s.kv.s = s
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	s.startApplyQueue()
	return s, nil
}

// Close flushes and closes the store, once the indexers have applied
// every committed change (unless Abandon stopped them). Further calls
// return ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return ErrClosed
	}

	// A running bulk import sees the store closing at its next chunk and
	// undoes what it wrote, which needs the store open.
	s.waitBulk()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.stopApplyQueue(false)
	s.trimChangeLog()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("engine: close badger: %w", err)
	}
	return nil
}

// Abandon stops the indexers' apply queue without letting them catch up:
// they finish the change set in hand, and the rest stays in the change
// log, which they replay when they are attached at the next open. It
// returns once they have stopped; searches then lag the store until it is
// reopened. For a process asked to stop (Ctrl-C) after a bulk write:
// Abandon, close the indexes, then Close.
func (s *Store) Abandon() {
	s.stopApplyQueue(true)
}

// Dim is the store's vector dimension (0 when it holds no vectors).
func (s *Store) Dim() int { return s.dim }

// Logger returns the store's logger.
func (s *Store) Logger() *slog.Logger { return s.log }

func (s *Store) load() (err error) {
	start := time.Now()
	g := s.g
	// A store of an older version is upgraded before anything is read
	// into memory: the steps work on Badger alone.
	var oldVer uint64
	if err := s.db.View(func(txn *badger.Txn) (err error) {
		oldVer, _, err = metaValue(txn, keyMetaVer)
		return err
	}); err != nil {
		return fmt.Errorf("engine: load meta: %w", err)
	}
	if oldVer != 0 && oldVer != storeVersion {
		if err := s.migrate(oldVer); err != nil {
			return err
		}
	}
	err = s.db.View(func(txn *badger.Txn) error {
		meta := func(k string) (uint64, bool, error) { return metaValue(txn, k) }
		if ver, ok, err := meta(keyMetaVer); err != nil {
			return err
		} else if ok && ver != storeVersion {
			return fmt.Errorf("%w: store version %d after upgrading, this build reads %d", ErrCorrupt, ver, storeVersion)
		}
		dim, hasDim, err := meta(keyMetaDim)
		if err != nil {
			return err
		}
		want := s.opts.dim()
		switch {
		case hasDim && want != 0 && int(dim) != want:
			return fmt.Errorf("%w: store holds %d-dimensional vectors, the embedder makes %d", ErrDimensionMismatch, dim, want)
		case hasDim:
			s.dim = int(dim)
		default:
			s.dim = want
		}
		nn, _, err := meta(keyMetaNode)
		if err != nil {
			return err
		}
		ne, _, err := meta(keyMetaEdge)
		if err != nil {
			return err
		}
		no, _, err := meta(keyMetaObs)
		if err != nil {
			return err
		}
		s.next.obs = uint32(no)
		if s.seq, _, err = meta(keyMetaSeq); err != nil {
			return err
		}
		s.next.node, s.next.edge = uint32(nn), uint32(ne)
		return nil
	})
	if err != nil {
		return fmt.Errorf("engine: load meta: %w", err)
	}
	if err := s.iterate([]byte{pfxTenant}, func(k, v []byte) error {
		id := binary.BigEndian.Uint32(k[1:])
		org, project, ok := bytes.Cut(v, []byte{0})
		if !ok {
			return fmt.Errorf("%w: tenant %d", ErrCorrupt, id)
		}
		g.ensureTenant(id, Tenant{Org: string(org), Project: string(project)})
		return nil
	}); err != nil {
		return fmt.Errorf("engine: load tenants: %w", err)
	}
	if err := s.iterate([]byte{pfxRel}, func(k, v []byte) error {
		g.ensureRel(binary.BigEndian.Uint32(k[1:]), string(v))
		return nil
	}); err != nil {
		return fmt.Errorf("engine: load relationships: %w", err)
	}
	if f := s.opts.WhileLoading; f != nil {
		done := make(chan error, 1)
		go func() { done <- f(s) }()
		defer func() {
			if werr := <-done; err == nil {
				err = werr
			}
		}()
	}
	// The id high-water marks bound the record counts: size the dense
	// arrays and the hash indexes once instead of growing them record by
	// record (at 5M edges, regrowing cost seconds of copying).
	g.growNodes(s.next.node)
	g.growEdges(s.next.edge)
	g.byName.reserve(g.nameHashOf, int(s.next.node))
	g.byUUID.reserve(g.uuidHashOf, int(s.next.node))
	g.byTriple.reserve(g.tripleHashOf, int(s.next.edge))
	if err := s.iterate([]byte{pfxNode}, func(k, v []byte) error {
		id := binary.BigEndian.Uint32(k[1:])
		rec, _, err := decodeNode(v, false)
		if err != nil {
			return fmt.Errorf("node %d: %w", id, err)
		}
		if int(rec.tenant) >= len(g.tenants) {
			return fmt.Errorf("%w: node %d names unknown tenant %d", ErrCorrupt, id, rec.tenant)
		}
		g.putNode(id, rec)
		s.next.node = max(s.next.node, id+1)
		return nil
	}); err != nil {
		return fmt.Errorf("engine: load nodes: %w", err)
	}
	if err := s.loadLegacy(); err != nil {
		return fmt.Errorf("engine: load legacy name keys: %w", err)
	}
	var dangling []uint32
	if err := s.eachStoredEdge(func(id uint32, v []byte) error {
		rec, err := decodeEdgeHead(v)
		if err != nil {
			return fmt.Errorf("edge %d: %w", id, err)
		}
		s.next.edge = max(s.next.edge, id+1)
		// A crash inside a batch too big for one transaction can leave an
		// edge whose endpoint record never landed; such an edge was never
		// acknowledged, so it is dropped.
		if int(rec.src) >= len(g.nodes) || !g.nodes[rec.src].live || int(rec.dst) >= len(g.nodes) || !g.nodes[rec.dst].live ||
			int(rec.rel) >= len(g.rels) || int(rec.tenant) >= len(g.tenants) {
			dangling = append(dangling, id)
			return nil
		}
		g.putEdge(id, rec)
		if edgeHasProvenance(v) {
			g.provEdges.Add(id)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("engine: load edges: %w", err)
	}
	if err := s.iterate([]byte{pfxObs}, func(k, v []byte) error {
		id := binary.BigEndian.Uint32(k[1:])
		rec, _, err := decodeObs(v, false)
		if err != nil {
			return fmt.Errorf("observation %d: %w", id, err)
		}
		if int(rec.tenant) >= len(g.tenants) {
			return fmt.Errorf("%w: observation %d names unknown tenant %d", ErrCorrupt, id, rec.tenant)
		}
		g.putObs(id, rec)
		s.next.obs = max(s.next.obs, id+1)
		return nil
	}); err != nil {
		return fmt.Errorf("engine: load observations: %w", err)
	}
	g.growNodes(s.next.node)
	g.growEdges(s.next.edge)
	g.growObs(s.next.obs)
	if len(dangling) > 0 {
		s.log.Warn("dropping edges of an unfinished batch", "edges", len(dangling))
		b := s.newBatch(time.Now().UnixNano())
		b.delEdges = dangling
		if err := b.writePages(); err != nil {
			return fmt.Errorf("engine: drop dangling edges: %w", err)
		}
	}
	s.log.Info("store loaded", "nodes", g.liveNodes, "edges", g.liveEdges, "observations", g.liveObs, "dim", s.dim, "took", time.Since(start).String())
	return nil
}

// metaValue reads a big-endian uint64 meta record; ok is false when absent.
func metaValue(txn *badger.Txn, k string) (v uint64, ok bool, err error) {
	it, err := txn.Get([]byte(k))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, false, nil
	} else if err != nil {
		return 0, false, err
	}
	err = it.Value(func(b []byte) error {
		if len(b) != 8 {
			return fmt.Errorf("%w: meta %s", ErrCorrupt, k)
		}
		v = binary.BigEndian.Uint64(b)
		return nil
	})
	return v, err == nil, err
}

// iterate calls fn for every key with prefix, in key order. k and v are only
// valid during the call.
func (s *Store) iterate(prefix []byte, fn func(k, v []byte) error) error {
	return s.db.View(func(txn *badger.Txn) error {
		io := badger.DefaultIteratorOptions
		io.Prefix = prefix
		io.PrefetchSize = 256
		it := txn.NewIterator(io)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			if err := item.Value(func(v []byte) error { return fn(item.Key(), v) }); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) checkOpen() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// View runs fn with a consistent read-only view of the graph. The view and
// everything it hands out (bitmaps, strings) are valid only during fn and
// must not be modified. fn must not call write methods of the store.
func (s *Store) View(fn func(v *View) error) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return fn(&View{g: s.g})
}

// Tenants lists every (org, project) the store has seen.
func (s *Store) Tenants() []Tenant {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]Tenant(nil), s.g.tenants...)
}

type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any) {
	b.l.Error(fmt.Sprintf(f, a...), "component", "badger")
}
func (b badgerLogger) Warningf(f string, a ...any) {
	b.l.Warn(fmt.Sprintf(f, a...), "component", "badger")
}
func (b badgerLogger) Infof(f string, a ...any) {
	b.l.Debug(fmt.Sprintf(f, a...), "component", "badger")
}
func (b badgerLogger) Debugf(f string, a ...any) {}

var _ = context.Background

// isBadgerLocked reports whether err is Badger's failure to take the
// directory lock. Badger formats the flock error with %+v (its y.Wrapf
// wraps only in debug builds), so the cause cannot be matched with
// errors.Is; its message, the same on every platform, can.
func isBadgerLocked(err error) bool {
	return strings.Contains(err.Error(), "Another process is using this Badger database")
}
