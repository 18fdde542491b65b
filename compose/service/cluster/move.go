package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

// The phases of an org's move.
const (
	// PhaseCopying: the org's history on the source's log is copied to
	// the target's; its writes go on at the source.
	PhaseCopying = "copying"
	// PhaseFenced: the source refuses the org's writes (503, to retry);
	// the last entries are copied, then the org flips to the target.
	PhaseFenced = "fenced"
	// PhaseFlipped: the org lives on the target (its placement says so);
	// the source's copy is being removed.
	PhaseFlipped = "flipped"
	PhaseDone    = "done"
	// PhaseAborting and PhaseAborted: the move is given up (an operator
	// placed the org back on its source, or the flip could not be made);
	// the source takes the org's writes again, the target's copy goes.
	PhaseAborting = "aborting"
	PhaseAborted  = "aborted"
)

// MoveRecord is an org's move as the placement bucket keeps it (key
// "move.ORG", a signedRecord): what every node reports, and what a node
// that takes the move over resumes from.
type MoveRecord struct {
	ID   string `json:"id"`
	Org  string `json:"org"`
	From string `json:"from"`
	To   string `json:"to"`
	// Unpin: the request removed the org's override; it ends placed by
	// hashing (which gives To).
	Unpin bool `json:"unpin,omitempty"`
	// Home is the shard the org was on before its first move (where a
	// store of a release before moves took its data from).
	Home  string `json:"home"`
	Phase string `json:"phase"`
	// Node runs the move; Beat is its last word (unix milliseconds).
	Node     string `json:"node"`
	Beat     int64  `json:"beat"`
	Started  int64  `json:"started"`
	Finished int64  `json:"finished,omitempty"`
	// Legacy: the source's log holds writes of the org applied by a
	// release before moves (read from the log, not an index).
	Legacy bool `json:"legacy,omitempty"`
	// Era is the org's era on the source's log; Through the last of its
	// entries copied (Era before the first); Copied and Bytes count the
	// copies, Left the entries known left to copy at the last word.
	Era     uint64 `json:"era"`
	Through uint64 `json:"through"`
	Copied  int    `json:"copied"`
	Bytes   int64  `json:"bytes"`
	Left    int    `json:"left"`
	// Fence, Flip and Drop are the sequences of those steps (0: not
	// made); FencedAt is when the org's writes paused (unix
	// milliseconds), PausedMs how long they did (to the placement's
	// flip).
	Fence    uint64 `json:"fence,omitempty"`
	Flip     uint64 `json:"flip,omitempty"`
	Drop     uint64 `json:"drop,omitempty"`
	FencedAt int64  `json:"fencedAt,omitempty"`
	PausedMs int64  `json:"pausedMs,omitempty"`
	// Error is the last error the move met (it retries), or why it was
	// given up.
	Error string `json:"error,omitempty"`
}

// Ended reports whether the move is over (done or aborted).
func (r *MoveRecord) Ended() bool { return r.Phase == PhaseDone || r.Phase == PhaseAborted }

// Move returns org's latest move record as this node's copy of the
// placement has it (nil: none).
func (n *Node) Move(org string) *MoveRecord {
	r, _ := n.place.Move(org)
	return r
}

// Errors of a move.
var (
	// ErrMoving: the org is moving elsewhere; a second move, or a write
	// to a shard that refuses its writes meanwhile, waits for it.
	ErrMoving = fmt.Errorf("%w: the org is moving", engine.ErrConflict)
	// errLost: another node runs the move now.
	errLost = errors.New("cluster: the move is run by another node")
)

const (
	// moveDeadAfter: a move whose runner said nothing this long is taken
	// over by another node.
	moveDeadAfter = 15 * time.Second
	// fenceBelow: the copy fences the source once a pass finds at most
	// this many entries left (the writes pause for the last ones only).
	fenceBelow = 16
	// fencedMax: a move still without its flip this long after the fence
	// is given up, so that the org's writes do not pause for long.
	fencedMax = 30 * time.Second
	// placeWait bounds how long PUT waits for the move it started.
	placeWait = 20 * time.Second
	// catchUpMax bounds how long the copy waits for the target's nodes
	// to take the copies before it fences the source anyway (their reads
	// of the org then wait for them).
	catchUpMax = 2 * time.Minute
)

// Place places org on shard ("" removes its override: hashing places
// it). The API routes the request to a node serving the org's present
// shard. When that changes the org's shard, the org's data moves (a
// move, run by this node, the placement flipping at its end): the result
// is the move record, once it ended or after placeWait (then in
// progress: GET of the placement, or the cluster's status, follow it). An
// org moving already is refused (ErrMoving), but for a request naming
// the move's own target (its record) or its source (the move is given
// up).
func (n *Node) Place(ctx context.Context, org, shard string) (*MoveRecord, error) {
	if err := engine.ValidateID(org); err != nil {
		return nil, fmt.Errorf("%w: org: %v", engine.ErrInvalidInput, err)
	}
	if shard != "" && !slices.Contains(n.shards, shard) {
		return nil, fmt.Errorf("%w: %q is not a shard of the cluster (%s)", engine.ErrInvalidInput, shard, strings.Join(n.shards, ", "))
	}
	cur, _, err := n.Placement(ctx, org)
	if err != nil {
		return nil, err
	}
	next := shard
	if next == "" {
		next, _ = ShardOf(org, n.shards, nil)
	}
	last, rev, err := n.place.latestMove(ctx, org)
	if err != nil {
		return nil, fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
	}
	if last != nil && !last.Ended() {
		switch {
		case next == last.To && (shard == "") == last.Unpin && last.Phase != PhaseAborting:
			return n.waitMove(ctx, org, last.ID)
		case next == last.From && (last.Phase == PhaseCopying || last.Phase == PhaseFenced || last.Phase == PhaseAborting):
			if err := n.abortMove(ctx, org, last.ID, "given up: the org was placed back on "+last.From); err != nil {
				return nil, err
			}
			return n.waitMove(ctx, org, last.ID)
		}
		return last, fmt.Errorf("%w from %s to %s (%s, %d entries copied): wait for it to end, or give it up with {\"shard\": %q}",
			ErrMoving, last.From, last.To, last.Phase, last.Copied, last.From)
	}
	if next == cur {
		// Nothing moves: the override is set (or removed) as asked.
		if err := n.place.Override(ctx, org, shard); err != nil {
			return nil, fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
		}
		n.waitPlaced(ctx, org, next, shard != "")
		return nil, nil
	}
	has, err := n.orgHasData(ctx, org, cur)
	if err != nil {
		return nil, err
	}
	if v := n.versionNow(); v < 3 {
		if has {
			return nil, fmt.Errorf("%w: moving org %s, which has data on shard %s, needs every live node at log version 3 or later (a node runs version %d): finish the upgrade first",
				engine.ErrConflict, org, cur, v)
		}
		// The release before moves placed an org without data so.
		if err := n.place.Override(ctx, org, shard); err != nil {
			return nil, fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
		}
		n.waitPlaced(ctx, org, next, shard != "")
		return nil, nil
	}
	n.mu.Lock()
	f := n.running[cur]
	serving := f != nil && f.serving && f.ap.Stalled() == nil
	n.mu.Unlock()
	if !serving {
		return nil, fmt.Errorf("%w: this node does not serve shard %s, where org %s is; retry", ErrUnavailable, cur, org)
	}
	if _, serving := n.caughtUp(next, time.Time{}, func(time.Time) uint64 { return 0 }); serving == 0 {
		return nil, fmt.Errorf("%w: no live node serves shard %s yet; the org is not moved", ErrUnavailable, next)
	}
	so, err := storedStreamOrg(n.app, n.keys, cur, org)
	if err != nil {
		return nil, err
	}
	var b [8]byte
	rand.Read(b[:])
	now := time.Now().UnixMilli()
	rec := MoveRecord{ID: hex.EncodeToString(b[:]), Org: org, From: cur, To: next, Unpin: shard == "", Home: cur, Phase: PhaseCopying,
		Node: n.cfg.NodeID, Beat: now, Started: now, Legacy: has, Era: so.Era, Through: so.Era}
	if last != nil && last.Home != "" {
		rec.Home = last.Home
	}
	nrev, err := n.place.putMove(ctx, rec, rev)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) || isConflict(err) {
			return nil, fmt.Errorf("%w: another move of org %s started meanwhile; see its placement", ErrMoving, org)
		}
		return nil, fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
	}
	n.log.Info("cluster: moving an org", "org", org, "from", cur, "to", next, "move", rec.ID)
	n.startMover(rec, nrev)
	return n.waitMove(ctx, org, rec.ID)
}

// isConflict reports a key-value update over a revision that is not the
// key's last.
func isConflict(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

// orgHasData reports whether org has data on shard, as this node's store
// says once it applied the shard's log as it stands now (a write
// acknowledged by another node a moment ago counts).
func (n *Node) orgHasData(ctx context.Context, org, shard string) (bool, error) {
	n.mu.Lock()
	f := n.running[shard]
	n.mu.Unlock()
	if f != nil {
		last, err := n.lastSeq(ctx, shard)
		if err != nil {
			return false, fmt.Errorf("%w: shard %s's log: %v", ErrUnavailable, shard, err)
		}
		wctx, cancel := context.WithTimeout(ctx, n.cfg.ReadWait)
		err = f.ap.WaitFor(wctx, last)
		cancel()
		if err != nil {
			return false, fmt.Errorf("%w: shard %s not applied here up to its last write: %v", ErrUnavailable, shard, err)
		}
	}
	has, err := n.app.OrgHasData(org)
	if err != nil || has {
		return has, err
	}
	so, err := storedStreamOrg(n.app, n.keys, shard, org)
	return err == nil && so.Last > so.Era, err
}

// storedStreamOrg reads what this store records of org on shard's log.
func storedStreamOrg(app *service.App, keys *Keys, shard, org string) (*streamOrg, error) {
	rec, err := app.Store.KV().AppliedLog(StreamName(keys.cluster, shard))
	if err != nil {
		return nil, err
	}
	so := &streamOrg{}
	v, err := rec.Keyed(streamOrgPrefix + org)
	if errors.Is(err, engine.ErrNotFound) {
		return so, nil
	}
	if err != nil {
		return nil, err
	}
	return so, json.Unmarshal(v, so)
}

// versionNow is the log version this node publishes in (the oldest live
// node's).
func (n *Node) versionNow() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.writeVersion()
}

// waitPlaced waits (a few seconds at most) until this node's copy of
// the placement puts org on shard, by an override or not as over says.
func (n *Node) waitPlaced(ctx context.Context, org, shard string, over bool) {
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		if s, o, err := n.place.Lookup(ctx, org); err == nil && s == shard && o == over {
			return
		}
	}
}

// waitMove waits, within placeWait and ctx, until move id of org ended,
// and returns its record as it stands then.
func (n *Node) waitMove(ctx context.Context, org, id string) (*MoveRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, placeWait)
	defer cancel()
	var rec *MoveRecord
	for {
		rec, _ = n.place.Move(org)
		if rec == nil || rec.ID != id {
			// The copy lags the bucket.
			if r, _, err := n.place.latestMove(ctx, org); err == nil && r != nil {
				rec = r
			}
		}
		if rec != nil && rec.ID == id && rec.Ended() {
			if rec.Phase == PhaseDone {
				n.waitPlaced(ctx, org, rec.To, !rec.Unpin)
			}
			return rec, nil
		}
		select {
		case <-ctx.Done():
			if rec == nil {
				return nil, fmt.Errorf("%w: the move's record cannot be read", ErrUnavailable)
			}
			return rec, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// abortMove asks move id of org to be given up (its runner, wherever it
// is, does it).
func (n *Node) abortMove(ctx context.Context, org, id, why string) error {
	for range 20 {
		rec, rev, err := n.place.latestMove(ctx, org)
		if err != nil {
			return fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
		}
		if rec == nil || rec.ID != id || rec.Ended() || rec.Phase == PhaseAborting {
			return nil
		}
		if rec.Phase == PhaseFlipped {
			return fmt.Errorf("%w: the move of org %s to %s has flipped already; move it back once it is done", ErrMoving, org, rec.To)
		}
		rec.Phase, rec.Error = PhaseAborting, why
		if _, err := n.place.putMove(ctx, *rec, rev); err == nil {
			n.log.Info("cluster: an org's move is given up", "org", org, "move", id, "why", why)
			return nil
		} else if !isConflict(err) {
			return fmt.Errorf("%w: placement: %v", ErrUnavailable, err)
		}
		time.Sleep(20 * time.Millisecond) // its runner wrote meanwhile
	}
	return fmt.Errorf("%w: the move's record keeps changing; retry", ErrUnavailable)
}

// mover runs one move on this node.
type mover struct {
	n      *Node
	rec    MoveRecord
	rev    uint64
	saved  time.Time
	reader *logReader
	// copies are the target's sequences of the copies published lately,
	// with when (the target's nodes must have taken those of a second
	// before their heartbeat before the source is fenced).
	copies []copyAt
}

type copyAt struct {
	seq uint64
	at  time.Time
}

// published is the target's sequence of the last copy published a
// little before at (0: none).
func (m *mover) published(at time.Time) uint64 {
	at = at.Add(-copyMargin)
	var seq uint64
	for _, c := range m.copies {
		if c.at.After(at) {
			break
		}
		seq = c.seq
	}
	return seq
}

// copyMargin: a node's heartbeat is taken to show the copies published
// this long before it (the time it takes a node to apply a copy just
// published, and the clocks of two nodes to differ, on one machine).
const copyMargin = 250 * time.Millisecond

// startMover runs the move of rec on this node, unless one runs here.
func (n *Node) startMover(rec MoveRecord, rev uint64) {
	n.mu.Lock()
	if n.movers[rec.Org] {
		n.mu.Unlock()
		return
	}
	n.movers[rec.Org] = true
	n.mu.Unlock()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer func() {
			n.mu.Lock()
			delete(n.movers, rec.Org)
			n.mu.Unlock()
		}()
		m := &mover{n: n, rec: rec, rev: rev, saved: time.Now()}
		m.run(n.ctx)
	}()
}

// run takes the move through its phases, retrying each step until it is
// made (or the move is given up, or another node took it over).
func (m *mover) run(ctx context.Context) {
	pause := 250 * time.Millisecond
	for ctx.Err() == nil && !m.rec.Ended() {
		var err error
		switch m.rec.Phase {
		case PhaseCopying:
			err = m.copy(ctx)
		case PhaseFenced:
			err = m.finish(ctx)
		case PhaseFlipped:
			err = m.drop(ctx)
		case PhaseAborting:
			err = m.abort(ctx)
		default:
			err = fmt.Errorf("cluster: a move in phase %q", m.rec.Phase)
		}
		if errors.Is(err, errLost) || ctx.Err() != nil {
			return
		}
		if err == nil {
			pause = 250 * time.Millisecond
			continue
		}
		m.n.log.Warn("cluster: an org's move met an error; retrying", "org", m.rec.Org, "move", m.rec.ID, "phase", m.rec.Phase, "err", err)
		m.rec.Error = err.Error()
		if m.rec.Phase == PhaseFenced && m.rec.Flip == 0 && time.Since(time.UnixMilli(m.rec.FencedAt)) > fencedMax {
			m.rec.Phase, m.rec.Error = PhaseAborting, fmt.Sprintf("given up: no flip %s after the fence (%v)", fencedMax, err)
		}
		if serr := m.save(ctx); errors.Is(serr, errLost) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 4*time.Second)
	}
}

// save writes the record over the revision last written; errLost when
// another node runs the move now. An abort asked meanwhile is taken up.
func (m *mover) save(ctx context.Context) error {
	m.rec.Beat = time.Now().UnixMilli()
	for range 10 {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rev, err := m.n.place.putMove(sctx, m.rec, m.rev)
		cancel()
		if err == nil {
			m.rev, m.saved = rev, time.Now()
			return nil
		}
		if !isConflict(err) {
			return err
		}
		cur, crev, rerr := m.n.place.latestMove(ctx, m.rec.Org)
		if rerr != nil {
			return rerr
		}
		if cur == nil || cur.ID != m.rec.ID || cur.Node != m.n.cfg.NodeID {
			return errLost
		}
		if cur.Phase == PhaseAborting && m.rec.Phase != PhaseAborting && m.rec.Phase != PhaseFlipped && !m.rec.Ended() {
			m.rec.Phase, m.rec.Error = PhaseAborting, cur.Error
		}
		m.rev = crev
	}
	return fmt.Errorf("cluster: the move's record keeps changing")
}

// beat saves the record if a second passed since the last save, and
// reports an abort asked meanwhile.
func (m *mover) beat(ctx context.Context) (aborted bool, err error) {
	if cur, _ := m.n.place.Move(m.rec.Org); cur != nil && cur.ID == m.rec.ID && cur.Phase == PhaseAborting && m.rec.Phase != PhaseAborting {
		m.rec.Phase, m.rec.Error = PhaseAborting, cur.Error
		return true, m.save(ctx)
	}
	if time.Since(m.saved) < time.Second {
		return false, nil
	}
	err = m.save(ctx)
	return m.rec.Phase == PhaseAborting, err
}

// source is this node's applier of the move's source, which must serve it.
func (m *mover) source() (*Applier, error) {
	m.n.mu.Lock()
	defer m.n.mu.Unlock()
	f := m.n.running[m.rec.From]
	if f == nil || f.ap.Stalled() != nil {
		return nil, fmt.Errorf("%w: this node no longer applies shard %s", errLost, m.rec.From)
	}
	return f.ap, nil
}

// pass copies the org's entries of the source's log after Through, up
// to through (0: what the source's applier here applied), and returns
// how many it copied.
func (m *mover) pass(ctx context.Context, through uint64) (int, error) {
	src, err := m.source()
	if err != nil {
		return 0, err
	}
	if through == 0 {
		through = src.Applied()
	}
	var places placeFunc
	if m.rec.Legacy {
		places = m.n.place.MayHold
	}
	refs, err := dataEntries(ctx, m.n.app, m.n.js, m.n.keys, m.rec.From, m.rec.Org, m.rec.Through, through, places)
	if err != nil {
		return 0, err
	}
	if m.reader == nil {
		if m.reader, err = newReader(ctx, m.n.js, m.n.keys, m.rec.From); err != nil {
			return 0, err
		}
	}
	m.rec.Left = len(refs)
	for i, ref := range refs {
		if aborted, err := m.beat(ctx); err != nil || aborted {
			return i, err
		}
		e, _, err := readEntry(ctx, m.reader, m.n.keys, m.rec.From, ref)
		if err != nil {
			return i, err
		}
		c := &copyEntry{Seq: ref.seq, Prev: m.rec.Through, Era: m.rec.Era, Origin: e.origin, OriginSeq: e.originSeq, At: e.at,
			Write: e.raw, KeyedID: e.keyedID, Keyed: e.keyed}
		if c.KeyedID != "" && c.Keyed == nil {
			// A write of the source's own: the record its appliers keep
			// of its key (as long as they keep it).
			if r, err := src.keyed(c.KeyedID, e.at); err != nil {
				return i, err
			} else if r != nil && r.Seq == ref.seq {
				c.Keyed = r
			}
		}
		seq, err := m.publish(ctx, service.WriteOrgCopy, m.rec.To, fmt.Sprintf("c%d", ref.seq), &moveEntry{Copy: c})
		if err != nil {
			return i, err
		}
		m.copies = append(m.copies, copyAt{seq, time.Now()})
		if len(m.copies) > 4096 {
			m.copies = slices.Delete(m.copies, 0, 2048)
		}
		m.rec.Through, m.rec.Copied, m.rec.Bytes, m.rec.Left = ref.seq, m.rec.Copied+1, m.rec.Bytes+int64(len(e.raw)), len(refs)-i-1
		if moveHook != nil {
			if err := moveHook(ctx, &m.rec); err != nil {
				return i + 1, err
			}
		}
	}
	return len(refs), nil
}

// moveHook, when set (tests only), is called after each copy a mover
// publishes; an error stops the pass.
var moveHook func(ctx context.Context, rec *MoveRecord) error

// publish publishes a step of the move to shard's log, as a write of the
// org, under an id of the move and the step's name (a step published
// again within the log's duplicate window is JetStream's duplicate: its
// first sequence).
func (m *mover) publish(ctx context.Context, kind, shard, step string, me *moveEntry) (uint64, error) {
	me.ID, me.From, me.To = m.rec.ID, m.rec.From, m.rec.To
	raw, err := encodeMove(me)
	if err != nil {
		return 0, err
	}
	pctx, cancel := context.WithTimeout(ctx, publishWait)
	defer cancel()
	seq, _, err := Publish(pctx, m.n.js, m.n.keys, shard, service.Write{Kind: kind, Org: m.rec.Org, Move: raw},
		PublishOptions{Origin: m.n.origin, MaxWriteBytes: m.n.cfg.MaxWriteBytes + copySlack, ID: "m" + m.rec.ID + "-" + step, Version: LogVersion})
	if err != nil {
		return 0, fmt.Errorf("publish the move's %s to %s: %w", kind, shard, err)
	}
	return seq, nil
}

// copy copies until a pass finds few entries left and the target's
// nodes have taken the copies (within catchUpMax), then fences the
// source: the org's writes pause only while the last entries copy.
func (m *mover) copy(ctx context.Context) error {
	since := time.Now()
	var small time.Time // since when the passes find few entries
	for m.rec.Phase == PhaseCopying {
		began := time.Now()
		n, err := m.pass(ctx, 0)
		if err != nil {
			return err
		}
		if m.rec.Phase != PhaseCopying || n > fenceBelow {
			small = time.Time{}
			continue
		}
		if small.IsZero() {
			small = began
		}
		if ok, serving := m.n.caughtUp(m.rec.To, small, m.published); (!ok || serving == 0) && m.rec.Copied > 0 && time.Since(since) < catchUpMax {
			if aborted, err := m.beat(ctx); err != nil || aborted {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		seq, err := m.publish(ctx, service.WriteOrgFence, m.rec.From, "fence", &moveEntry{})
		if err != nil {
			return err
		}
		m.rec.Phase, m.rec.Fence, m.rec.FencedAt, m.rec.Error = PhaseFenced, seq, time.Now().UnixMilli(), ""
		m.n.log.Info("cluster: an org's writes pause while it flips to its new shard", "org", m.rec.Org, "move", m.rec.ID, "from", m.rec.From, "to", m.rec.To)
		return m.save(ctx)
	}
	return nil
}

// finish copies the entries up to the fence, flips the org on the
// target and places it there.
func (m *mover) finish(ctx context.Context) error {
	src, err := m.source()
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, m.n.cfg.ReadWait)
	err = src.WaitFor(wctx, m.rec.Fence)
	cancel()
	if err != nil {
		return fmt.Errorf("the fence not applied here: %w", err)
	}
	if m.rec.Flip == 0 {
		if _, err := m.pass(ctx, m.rec.Fence); err != nil || m.rec.Phase != PhaseFenced {
			return err
		}
		if m.rec.Through > m.rec.Era {
			seq, err := m.publish(ctx, service.WriteOrgFlip, m.rec.To, "flip", &moveEntry{Fence: m.rec.Fence, Last: m.rec.Through, Era: m.rec.Era})
			if err != nil {
				return err
			}
			m.rec.Flip = seq
			if err := m.save(ctx); err != nil {
				return err
			}
		}
	}
	// The placement flips: the target's nodes serve the org once they
	// applied the flip (none: nothing of it was copied).
	o := overrideRecord{Shard: m.rec.To}
	if m.rec.Unpin {
		o.Shard = ""
	}
	if m.rec.Flip > 0 {
		o.Since, o.On = m.rec.Flip, m.rec.To
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = m.n.place.override(pctx, m.rec.Org, o)
	cancel()
	if err != nil {
		return fmt.Errorf("placement: %w", err)
	}
	m.rec.Phase, m.rec.PausedMs, m.rec.Error = PhaseFlipped, time.Now().UnixMilli()-m.rec.FencedAt, ""
	m.n.log.Info("cluster: an org lives on its new shard", "org", m.rec.Org, "move", m.rec.ID, "to", m.rec.To, "copied", m.rec.Copied,
		"paused", time.Duration(m.rec.PausedMs)*time.Millisecond)
	return m.save(ctx)
}

// drop removes the source's copy of the org.
func (m *mover) drop(ctx context.Context) error {
	seq, err := m.publish(ctx, service.WriteOrgDrop, m.rec.From, "drop", &moveEntry{Flip: m.rec.Flip})
	if err != nil {
		return err
	}
	m.rec.Phase, m.rec.Drop, m.rec.Finished, m.rec.Error = PhaseDone, seq, time.Now().UnixMilli(), ""
	m.n.log.Info("cluster: an org's move is done", "org", m.rec.Org, "move", m.rec.ID, "from", m.rec.From, "to", m.rec.To)
	return m.save(ctx)
}

// abort gives the move up: the source takes the org's writes again, the
// target's copy goes.
func (m *mover) abort(ctx context.Context) error {
	if _, err := m.publish(ctx, service.WriteOrgUnfence, m.rec.From, "unfence", &moveEntry{}); err != nil {
		return err
	}
	if _, err := m.publish(ctx, service.WriteOrgAbort, m.rec.To, "abort", &moveEntry{Era: m.rec.Era}); err != nil {
		return err
	}
	m.rec.Phase, m.rec.Finished = PhaseAborted, time.Now().UnixMilli()
	m.n.log.Info("cluster: an org's move is given up", "org", m.rec.Org, "move", m.rec.ID, "why", m.rec.Error)
	return m.save(ctx)
}

// resumeMoves takes over the moves whose runner fell silent (or is this
// node, restarted) and that this node can run: those copying or fenced
// need a node serving their source; the others only publish.
func (n *Node) resumeMoves(ctx context.Context) {
	now := time.Now()
	for _, rec := range n.place.Moves() {
		if rec.Ended() {
			continue
		}
		n.mu.Lock()
		running := n.movers[rec.Org]
		_, live := n.members[rec.Node]
		f := n.running[rec.From]
		serving := f != nil && f.serving && f.ap.Stalled() == nil
		n.mu.Unlock()
		if running {
			continue
		}
		mine := rec.Node == n.cfg.NodeID
		silent := !live || now.Sub(time.UnixMilli(rec.Beat)) > moveDeadAfter
		if !mine && !silent {
			continue
		}
		if (rec.Phase == PhaseCopying || rec.Phase == PhaseFenced) && !serving {
			continue
		}
		cur, rev, err := n.place.latestMove(ctx, rec.Org)
		if err != nil || cur == nil || cur.ID != rec.ID || cur.Ended() {
			continue
		}
		cur.Node, cur.Beat = n.cfg.NodeID, now.UnixMilli()
		nrev, err := n.place.putMove(ctx, *cur, rev)
		if err != nil {
			continue // another node took it first, or NATS is away: next beat
		}
		n.log.Info("cluster: resuming an org's move", "org", cur.Org, "move", cur.ID, "phase", cur.Phase, "was", rec.Node)
		n.startMover(*cur, nrev)
	}
}

// tagged marks a store whose orgs have their state (orgState): every org
// this release applied a write of has one; tagLegacy gives one to the
// orgs a release before moves wrote.
const tagged = "tagged"

// tagLegacy gives every org this store holds data of, without a state
// (written by a release before moves), the state of its data: the
// history, through what the store applied, of the shard it had data on
// then (the shard its first move left, else where it is placed), or, when
// the store applied none of that shard, an unknown one (whatever comes
// next starts the copy again). It runs once per store, before the
// appliers start.
func (n *Node) tagLegacy(ctx context.Context) error {
	book, err := bookOf(n.app)
	if err != nil {
		return err
	}
	if _, err := book.log.Keyed(tagged); err == nil {
		return nil
	} else if !errors.Is(err, engine.ErrNotFound) {
		return err
	}
	orgs, err := n.app.Orgs()
	if err != nil {
		return err
	}
	for _, org := range orgs {
		if st, err := book.get(org); err != nil || st != nil {
			if err != nil {
				return err
			}
			continue
		}
		if has, err := n.app.OrgHasData(org); err != nil || !has {
			if err != nil {
				return err
			}
			continue
		}
		home, err := n.shardOf(ctx, org)
		if err != nil {
			return err
		}
		if mv, _, err := n.place.latestMove(ctx, org); err != nil {
			return err
		} else if mv != nil && mv.Home != "" {
			home = mv.Home
		}
		rec, err := n.app.Store.KV().AppliedLog(StreamName(n.cfg.Cluster, home))
		if err != nil {
			return err
		}
		at, _, err := rec.Applied()
		if err != nil {
			return err
		}
		st := &orgState{Src: home, At: at}
		if at == 0 {
			st.Src = "" // none of it here: the data is from elsewhere
		}
		if err := book.put(org, st); err != nil {
			return err
		}
		n.log.Info("cluster: an org written by a release before moves", "org", org, "shard", home, "applied", at)
	}
	return book.log.Put(engine.AppliedKeyed{ID: tagged, Value: []byte{1}})
}
