package engine

import (
	"context"
	"sync"
)

// applyQueue is the indexers' apply queue (the inject queue of sessions is
// another thing, in engine/delivery). It applies committed change sets to
// the attached indexers on one goroutine, in sequence order, so that a
// writer can go on with its next batch (or return) while the indexes of
// the last one are being updated: with two cores, the engine's work on
// batch n+1 overlaps the HNSW and text work on batch n. Writers that want
// read-your-writes wait for their sequence (waitApplied); Sync waits for
// everything queued.
type applyQueue struct {
	done chan struct{}
	// ctx is the indexers' context: cancelled when the queue is abandoned,
	// so that a long Apply (a chunk of HNSW inserts) gives up.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	cond     *sync.Cond
	sets     []*ChangeSet // committed, waiting for the indexers, in order
	stop     bool         // no more sets will come (Close)
	abandon  bool         // stop after the set in hand (CloseQuick)
	applied  uint64       // highest sequence handed to every indexer
	queued   uint64       // highest sequence enqueued
	pending  int          // the work (ChangeSet.work) of the sets queued and not yet applied
	closed   bool
	indexers []Indexer // copy-on-write: replaced under mu, read by the worker
}

// applyQueueDepth bounds the change sets waiting for the indexers: a writer
// that gets this far ahead blocks (back-pressure, never dropping).
const applyQueueDepth = 4

func (s *Store) startApplyQueue() {
	q := &applyQueue{done: make(chan struct{}), applied: s.seq, queued: s.seq}
	q.ctx, q.cancel = context.WithCancel(context.Background())
	q.cond = sync.NewCond(&q.mu)
	s.aq = q
	go s.runApplyQueue()
}

func (s *Store) runApplyQueue() {
	q := s.aq
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.sets) == 0 && !q.stop && !q.abandon {
			q.cond.Wait()
		}
		if q.abandon || len(q.sets) == 0 {
			// Abandoned sets stay in the change log: the indexers replay
			// them when they are attached at the next open.
			q.mu.Unlock()
			return
		}
		cs := q.sets[0]
		q.sets = q.sets[1:]
		ixs := q.indexers
		q.cond.Broadcast() // room for a blocked notify
		q.mu.Unlock()
		for _, ix := range ixs {
			if err := ix.Apply(q.ctx, cs); err != nil && q.ctx.Err() == nil {
				s.log.Error("indexer failed; it will catch up on the next open", "indexer", ix.Name(), "seq", cs.Seq, "err", err)
			}
		}
		q.mu.Lock()
		q.applied = cs.Seq
		q.pending -= cs.work()
		q.cond.Broadcast()
		q.mu.Unlock()
		if cs.Seq%64 == 0 {
			s.trimChangeLog()
		}
	}
}

// notify queues a committed change set for the indexers. Called with wmu
// held, so sets are queued in sequence order; it blocks while
// applyQueueDepth sets wait (back-pressure, never dropping).
func (s *Store) notify(cs *ChangeSet) {
	s.enqueue(cs, true)
}

// notifyNoWait queues cs without waiting for room: for an undo, which a
// person (Ctrl-C) or a request past its deadline waits for, and whose
// size is bounded by what its import wrote.
func (s *Store) notifyNoWait(cs *ChangeSet) {
	s.enqueue(cs, false)
}

func (s *Store) enqueue(cs *ChangeSet, wait bool) {
	if cs == nil {
		return
	}
	q := s.aq
	q.mu.Lock()
	for wait && len(q.sets) >= applyQueueDepth && !q.abandon {
		q.cond.Wait()
	}
	q.queued = cs.Seq
	q.pending += cs.work()
	q.sets = append(q.sets, cs)
	q.cond.Broadcast()
	q.mu.Unlock()
}

// waitApplied blocks until every indexer has seen sequence seq (or the
// store closes, or ctx ends).
func (s *Store) waitApplied(ctx context.Context, seq uint64) error {
	return s.waitQueue(ctx, func(q *applyQueue) bool { return q.applied >= seq })
}

// waitRoom blocks until the indexers have room for a change set of the
// given work (or the store closes, or ctx ends): until the work queued
// for them plus this set's is at most one chunk's worth of nodes, or
// nothing is queued. A bulk writer calls it before it commits each chunk:
// a write queues behind every change set before its own, so an import that
// ran ahead of the indexers would make every other writer wait for the
// indexing of all it wrote; a chunk that costs them little (most of its
// nodes exist) still commits while they work.
func (s *Store) waitRoom(ctx context.Context, work int) error {
	_, limit := s.chunks.limits()
	return s.waitQueue(ctx, func(q *applyQueue) bool { return q.pending == 0 || q.pending+work <= limit })
}

// work is what applying cs costs the indexers, in documents (at least 1:
// a set has a fixed cost too).
func (cs *ChangeSet) work() int {
	return 1 + len(cs.Upserts) + len(cs.Deletes) + len(cs.ObsUpserts) + len(cs.ObsDeletes)
}

// waitQueue blocks until done, called with q.mu held, holds.
func (s *Store) waitQueue(ctx context.Context, done func(q *applyQueue) bool) error {
	q := s.aq
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			q.mu.Lock()
			q.cond.Broadcast()
			q.mu.Unlock()
		})
		defer stop()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for !done(q) && !q.closed {
		if err := ctx.Err(); err != nil {
			return err
		}
		q.cond.Wait()
	}
	return nil
}

// Sync waits until the indexers have applied every committed change: after
// it, searches see every write that returned before it was called.
func (s *Store) Sync(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	q := s.aq
	q.mu.Lock()
	seq := q.queued
	q.mu.Unlock()
	return s.waitApplied(ctx, seq)
}

// attached returns the current indexers.
func (s *Store) attached() []Indexer {
	s.aq.mu.Lock()
	defer s.aq.mu.Unlock()
	return s.aq.indexers
}

// stopApplyQueue stops its goroutine: once the queue is drained or, with
// abandon, once the set in hand is applied (the rest stays in the change
// log, replayed at the next open). Called with wmu held by Close, so no
// writer can enqueue after it.
func (s *Store) stopApplyQueue(abandon bool) {
	q := s.aq
	q.mu.Lock()
	q.stop, q.abandon = true, q.abandon || abandon
	q.cond.Broadcast()
	q.mu.Unlock()
	if abandon {
		q.cancel()
	}
	<-q.done
	q.cancel()
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}
