package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// applyQueue is the indexers' apply queue (the inject queue of sessions is
// another thing, in engine/delivery). It applies committed change sets to
// the attached indexers on one goroutine, in sequence order, so that a
// writer can go on with its next batch (or return) while the indexes of
// the last one are being updated: with two cores, the engine's work on
// batch n+1 overlaps the HNSW and text work on batch n. Writers that want
// read-your-writes wait for their sequence (waitApplied); Sync waits for
// everything queued.
//
// An Apply that fails is retried (applyAttempts, with backoff). When the
// retries fail too the indexer is behind: it gets no further sets, so its
// watermark stays below the set it missed, the change log keeps that set
// (trimChangeLog trims below every watermark) and the next open replays
// it. At each later set the queue tries once to catch the indexer up from
// the change log instead; until one succeeds, Sync (and Check) return an
// *IndexError and IndexFailure reports it. A write's read-your-writes wait
// does not: its set is committed whatever the indexers did with it, so the
// failure is the index's to report, not the write's.
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
	// behind holds, by position in indexers, the failure of each indexer
	// that is behind. Written by the worker, read by waiters.
	behind map[int]*IndexError
	// anyBehind mirrors len(behind) > 0 for readers that must not take mu
	// (IndexFailure, asked by every HTTP answer).
	anyBehind atomic.Bool
}

// applyQueueDepth bounds the change sets waiting for the indexers: a writer
// that gets this far ahead blocks (back-pressure, never dropping).
const applyQueueDepth = 4

// applyAttempts bounds the Applies of one change set to one indexer; the
// waits between them start at Store.applyBackoff and double. Writers
// blocked on a full queue wait for them (about 0.7 s in all by default).
const applyAttempts = 4

const defaultApplyBackoff = 100 * time.Millisecond

func (s *Store) startApplyQueue() {
	q := &applyQueue{done: make(chan struct{}), applied: s.seq, queued: s.seq, behind: map[int]*IndexError{}}
	q.ctx, q.cancel = context.WithCancel(context.Background())
	q.cond = sync.NewCond(&q.mu)
	if s.applyBackoff == 0 {
		s.applyBackoff = defaultApplyBackoff
	}
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
		behind := make([]*IndexError, len(ixs))
		for i := range ixs {
			behind[i] = q.behind[i]
		}
		q.cond.Broadcast() // room for a blocked notify
		q.mu.Unlock()
		for i, ix := range ixs {
			behind[i] = s.applyTo(ix, cs, behind[i])
		}
		q.mu.Lock()
		for i := range ixs {
			if behind[i] != nil {
				q.behind[i] = behind[i]
			} else {
				delete(q.behind, i)
			}
		}
		q.anyBehind.Store(len(q.behind) > 0)
		q.applied = cs.Seq
		q.pending -= cs.work()
		q.cond.Broadcast()
		q.mu.Unlock()
		if cs.Seq%64 == 0 {
			s.trimChangeLog()
		}
	}
}

// applyTo hands cs to ix and returns ix's failure afterwards (nil when it
// is current). An indexer that is behind (failed != nil) is not given cs
// but caught up from the change log, once. When the queue is abandoned,
// a failure is not one: what ix missed stays in the change log.
func (s *Store) applyTo(ix Indexer, cs *ChangeSet, failed *IndexError) *IndexError {
	q := s.aq
	if failed != nil {
		err := s.catchUp(q.ctx, ix, cs.Seq)
		switch {
		case err == nil:
			s.log.Info("indexer caught up", "indexer", ix.Name(), "from", failed.Seq, "to", cs.Seq)
			return nil
		case q.ctx.Err() != nil:
			return failed
		}
		s.log.Warn("indexer still behind", "indexer", ix.Name(), "from", failed.Seq, "seq", cs.Seq, "err", err)
		return &IndexError{Indexer: ix.Name(), Seq: failed.Seq, Err: err}
	}
	wait := s.applyBackoff
	for attempt := 1; ; attempt++ {
		err := ix.Apply(q.ctx, cs)
		if err == nil || q.ctx.Err() != nil {
			return nil
		}
		if attempt == applyAttempts {
			s.log.Error("indexer failed; searches miss this write until it catches up", "indexer", ix.Name(), "seq", cs.Seq, "attempts", attempt, "err", err)
			return &IndexError{Indexer: ix.Name(), Seq: cs.Seq, Err: err}
		}
		s.log.Warn("indexer failed; retrying", "indexer", ix.Name(), "seq", cs.Seq, "attempt", attempt, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-q.ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait *= 2
	}
}

// catchUp applies to ix, in one change set, every change the log holds
// above ix's watermark up to seq (the replay of Attach). Without the
// writer lock, the documents it reads may be newer than seq; the sets
// after seq, which the queue applies next, bring the index to them anyway.
func (s *Store) catchUp(ctx context.Context, ix Indexer, seq uint64) error {
	cs, err := s.replayFrom(ix.Watermark(), seq)
	if err != nil || cs == nil {
		return err
	}
	cs.Seq = seq
	return ix.Apply(ctx, cs)
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

// waitApplied blocks until every indexer has been handed sequence seq and
// applied it or failed to (or the store closes, or ctx ends); it returns
// only ctx's error. A writer calls it after its commit, for
// read-your-writes: an indexer that failed the set (it is behind) does
// not make the write fail, since the write is stored; IndexFailure and
// Sync report the index.
func (s *Store) waitApplied(ctx context.Context, seq uint64) error {
	return s.waitQueue(ctx, func(q *applyQueue) bool { return q.applied >= seq })
}

// behindAt returns the failure of the indexer that is behind at seq, the
// one with the earliest missed set if several; nil if none. Called with
// mu held.
func (q *applyQueue) behindAt(seq uint64) error {
	var first *IndexError
	for _, e := range q.behind {
		if e.Seq <= seq && (first == nil || e.Seq < first.Seq) {
			first = e
		}
	}
	if first == nil {
		return nil
	}
	return first
}

// IndexFailure returns the *IndexError of an attached indexer that failed
// to apply a committed change set and has not caught up since, nil when
// every indexer has applied what it was given (it may still be working on
// the latest sets). For health reports and metrics.
func (s *Store) IndexFailure() error {
	q := s.aq
	if !q.anyBehind.Load() {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.behindAt(^uint64(0))
}

// indexFloor is the highest sequence the change log may be trimmed to
// without losing a set an indexer that is behind has missed.
func (s *Store) indexFloor() uint64 {
	q := s.aq
	q.mu.Lock()
	defer q.mu.Unlock()
	floor := ^uint64(0)
	for _, e := range q.behind {
		floor = min(floor, e.Seq-1)
	}
	return floor
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
// it, searches see every write that returned before it was called. When
// an indexer is behind (it failed to apply a change, see ErrIndexBehind)
// it returns its *IndexError instead.
func (s *Store) Sync(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	q := s.aq
	q.mu.Lock()
	seq := q.queued
	q.mu.Unlock()
	if err := s.waitApplied(ctx, seq); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.behindAt(seq)
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
