package engine

import (
	"context"
	"time"
)

// write runs stage on a new batch under the writer lock, commits it, queues
// its change set for the indexers and, unless noWait, waits until the
// indexes have it (read-your-writes). A stage error leaves everything as
// it was.
func (s *Store) write(ctx context.Context, stage func(b *batch) error, now time.Time, noWait bool) (*ChangeSet, error) {
	cs, err := func() (*ChangeSet, error) {
		s.wmu.Lock()
		defer s.wmu.Unlock()
		if err := s.checkOpen(); err != nil {
			return nil, err
		}
		b := s.newBatch(now.UnixNano())
		if err := stage(b); err != nil {
			s.next = b.next0 // give back the ids the stage took
			return nil, err
		}
		if err := b.commit(); err != nil {
			s.next = b.next0
			return nil, err
		}
		cs := b.changeSet()
		s.notify(cs)
		return cs, nil
	}()
	if err != nil || cs == nil || noWait {
		return cs, err
	}
	// The batch is committed: a cancelled wait does not undo it.
	return cs, s.waitApplied(context.WithoutCancel(ctx), cs.Seq)
}
