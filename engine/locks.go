package engine

import (
	"cmp"
	"context"
	"slices"
	"sync"
)

// fifoLock is the store's writer lock: a mutex that hands itself over in
// arrival order. A bulk import takes it once per chunk step and gives it
// back in between; with sync.Mutex a goroutine that unlocks and locks
// again at once may barge ahead of one that has waited (until the
// waiter's 1 ms starvation threshold), so a small write could wait for
// several chunks instead of one. Here an unlock hands the lock to the
// longest waiter, and a locker that finds waiters queues behind them.
type fifoLock struct {
	mu      sync.Mutex
	held    bool
	waiters []chan struct{}
}

func (l *fifoLock) Lock() {
	l.mu.Lock()
	if !l.held {
		l.held = true
		l.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	l.waiters = append(l.waiters, ch)
	l.mu.Unlock()
	<-ch // the unlocker handed the lock over: held stays true
}

func (l *fifoLock) Unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		panic("BUG: engine: unlock of an unlocked writer lock")
	}
	if len(l.waiters) == 0 {
		l.held = false
		return
	}
	ch := l.waiters[0]
	l.waiters[0] = nil
	l.waiters = l.waiters[1:]
	close(ch)
}

// waiting is the number of goroutines queued for the lock (tests).
func (l *fifoLock) waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiters)
}

// tenantLocks are the projects' import locks (see "Concurrency" in
// doc.go). A bulk import holds the projects it writes exclusively from its
// first chunk to its last, so that no other import can build on what it
// wrote before it is known to stay; a single-chunk import holds them
// shared, so that small imports of one project do not wait for each other
// beyond the writer lock. Writers prefer: once a bulk import waits for a
// project, new shared holders queue behind it. Locks are taken in Tenant
// order, so two imports cannot wait for each other.
type tenantLocks struct {
	mu sync.Mutex
	m  map[Tenant]*tenantLock
}

type tenantLock struct {
	readers  int
	writer   bool
	wwaiting int           // bulk imports waiting for it
	changed  chan struct{} // closed (and replaced) when the lock is released
	refs     int           // holders and waiters: the entry goes at 0
}

// lock takes ts (sorted, distinct) exclusively or shared, waiting at most
// until ctx ends. It returns the function that releases them.
func (tl *tenantLocks) lock(ctx context.Context, ts []Tenant, exclusive bool) (func(), error) {
	held := 0
	release := func() {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		for _, t := range ts[:held] {
			l := tl.m[t]
			if exclusive {
				l.writer = false
			} else {
				l.readers--
			}
			tl.put(t, l)
			close(l.changed)
			l.changed = make(chan struct{})
		}
	}
	for _, t := range ts {
		if err := tl.lockOne(ctx, t, exclusive); err != nil {
			release()
			return nil, err
		}
		held++
	}
	return release, nil
}

func (tl *tenantLocks) lockOne(ctx context.Context, t Tenant, exclusive bool) error {
	tl.mu.Lock()
	if tl.m == nil {
		tl.m = make(map[Tenant]*tenantLock)
	}
	l := tl.m[t]
	if l == nil {
		l = &tenantLock{changed: make(chan struct{})}
		tl.m[t] = l
	}
	l.refs++
	waiting := false
	for {
		free := !l.writer && l.readers == 0
		if exclusive && free {
			l.writer = true
			break
		}
		if !exclusive && !l.writer && l.wwaiting == 0 {
			l.readers++
			break
		}
		if exclusive && !waiting {
			l.wwaiting++
			waiting = true
		}
		ch := l.changed
		tl.mu.Unlock()
		select {
		case <-ch:
			tl.mu.Lock()
		case <-ctx.Done():
			tl.mu.Lock()
			if waiting {
				l.wwaiting--
				// Shared lockers may have queued behind this waiter.
				close(l.changed)
				l.changed = make(chan struct{})
			}
			tl.put(t, l)
			tl.mu.Unlock()
			return ctx.Err()
		}
	}
	if waiting {
		l.wwaiting--
	}
	tl.mu.Unlock()
	return nil
}

// put drops a reference to l (tl.mu held).
func (tl *tenantLocks) put(t Tenant, l *tenantLock) {
	if l.refs--; l.refs == 0 {
		delete(tl.m, t)
	}
}

// importTenants lists the projects an import into t writes: t, each
// sourceProjectId's and each target's, sorted and distinct.
func importTenants(t Tenant, in []TripletInput) []Tenant {
	ts := []Tenant{t}
	seen := map[Tenant]bool{t: true}
	add := func(x Tenant) {
		if !seen[x] {
			seen[x] = true
			ts = append(ts, x)
		}
	}
	for i := range in {
		tr := &in[i]
		if tr.SourceProjectID != "" {
			add(Tenant{Org: t.Org, Project: tr.SourceProjectID})
		}
		if tr.TargetOrgID != "" || tr.TargetProjectID != "" {
			add(Tenant{Org: cmpOr(tr.TargetOrgID, t.Org), Project: cmpOr(tr.TargetProjectID, t.Project)})
		}
	}
	slices.SortFunc(ts, func(a, b Tenant) int { return cmp.Or(cmp.Compare(a.Org, b.Org), cmp.Compare(a.Project, b.Project)) })
	return ts
}
