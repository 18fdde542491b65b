package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

// moveEntry is the entry of a step of an org's move (service.Write.Move
// of the kinds service.MoveKind names): a log entry, signed and versioned
// as any (LogVersion 3 and later).
type moveEntry struct {
	V    int    `json:"v"`
	ID   string `json:"id"`   // the move's
	From string `json:"from"` // the shard it moves from
	To   string `json:"to"`   // the shard it moves to
	// Copy: org_copy's data entry of the source's log.
	Copy *copyEntry `json:"copy,omitempty"`
	// org_flip: the source's fence, the org's last data entry before it
	// and its era on the source's log; org_abort: that era.
	Fence uint64 `json:"fence,omitempty"`
	Last  uint64 `json:"last,omitempty"`
	Era   uint64 `json:"era,omitempty"`
	// Flip: org_drop's target flip, which an applier of the target on
	// the same store is waited for.
	Flip uint64 `json:"flip,omitempty"`
}

const moveEntryVersion = 1

// copyEntry is a data entry of the source's log, copied: where it stands
// in the org's history there (its sequence, the org's entry before it,
// the era), and how its source took it (the write, the log and sequence
// its ids are seeded by, the log's time, the record of its idempotency
// key), so that every replica of the target applies it as the source's
// did.
type copyEntry struct {
	Seq  uint64 `json:"seq"`
	Prev uint64 `json:"prev"`
	Era  uint64 `json:"era"`
	// Origin and OriginSeq seed the write's ids; At is its log's time.
	Origin    string          `json:"origin"`
	OriginSeq uint64          `json:"originSeq"`
	At        time.Time       `json:"at"`
	Write     json.RawMessage `json:"write"`
	KeyedID   string          `json:"keyedId,omitempty"`
	Keyed     *keyedRecord    `json:"keyed,omitempty"`
}

// copySlack is what a copy adds to the write it copies, at most: a write
// of the cluster's bound still copies.
const copySlack = 64 << 10

func decodeMove(w service.Write) (*moveEntry, error) {
	var me moveEntry
	if err := json.Unmarshal(w.Move, &me); err != nil {
		return nil, fmt.Errorf("%w: a %s without its entry: %v", engine.ErrInvalidInput, w.Kind, err)
	}
	if me.V < 1 || me.V > moveEntryVersion || me.ID == "" || !idRE.MatchString(me.From) || !idRE.MatchString(me.To) || me.From == me.To {
		return nil, fmt.Errorf("%w: a %s with an entry that is not one (version %d, %s to %s)", engine.ErrInvalidInput, w.Kind, me.V, me.From, me.To)
	}
	if (w.Kind == service.WriteOrgCopy) != (me.Copy != nil) {
		return nil, fmt.Errorf("%w: a %s with a copied write, or a copy without", engine.ErrInvalidInput, w.Kind)
	}
	return &me, nil
}

func encodeMove(me *moveEntry) (json.RawMessage, error) {
	me.V = moveEntryVersion
	return json.Marshal(me)
}

// entry is the data entry c copies for org, from the log of from.
func (c *copyEntry) entry(keys *Keys, org, from string) (*dataEntry, error) {
	var w service.Write
	if err := json.Unmarshal(c.Write, &w); err != nil {
		return nil, fmt.Errorf("%w: a copy of an undecodable write", engine.ErrInvalidInput)
	}
	switch {
	case w.Org != org:
		return nil, fmt.Errorf("%w: a copy for org %s of a write of org %q", engine.ErrInvalidInput, org, w.Org)
	case !service.KnownKind(w.Kind) || service.MoveKind(w.Kind) || w.Global():
		return nil, fmt.Errorf("%w: a copy of a write of kind %q", engine.ErrInvalidInput, w.Kind)
	case c.Seq == 0 || c.Prev >= c.Seq || c.Era > c.Prev || !idRE.MatchString(c.Origin) || c.OriginSeq == 0 || c.At.IsZero():
		return nil, fmt.Errorf("%w: a copy out of place (sequence %d after %d, era %d, of %s:%d)", engine.ErrInvalidInput, c.Seq, c.Prev, c.Era, c.Origin, c.OriginSeq)
	}
	return &dataEntry{org: org, src: from, seq: c.Seq, prev: c.Prev, era: c.Era, w: w,
		seed: keys.idSeed(StreamName(keys.cluster, c.Origin), c.OriginSeq), at: c.At.UTC(), keyedID: c.KeyedID, keyed: c.Keyed,
		origin: c.Origin, originSeq: c.OriginSeq, raw: c.Write}, nil
}

// admitMove checks that a move's step belongs on this log: a step of the
// target on the log of the shard a move of the org to was started
// (Receives), one of the source on the log of a shard the org was placed
// on.
func (a *Applier) admitMove(ctx context.Context, w service.Write) (*refusal, error) {
	me, err := decodeMove(w)
	if err != nil {
		return &refusal{RejectWrite, err}, nil
	}
	target := w.Kind == service.WriteOrgCopy || w.Kind == service.WriteOrgFlip || w.Kind == service.WriteOrgAbort
	shard, ok := me.From, false
	if target {
		shard = me.To
	}
	if shard != a.shard {
		return &refusal{RejectShard, fmt.Errorf("%w: a %s of a move from %s to %s on the log of %s", engine.ErrInvalidInput, w.Kind, me.From, me.To, a.shard)}, nil
	}
	switch {
	case target && a.o.Receives != nil:
		ok, err = a.o.Receives(ctx, w.Org, a.shard)
	case !target:
		ok, err = a.o.Places(ctx, w.Org, a.shard)
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return &refusal{RejectShard, fmt.Errorf("%w: no move of org %s to %s was started", engine.ErrForbidden, w.Org, me.To)}, nil
	}
	return nil, nil
}

// dropWait bounds how long a drop waits for the applier of the target
// on the same store to reach the flip.
const dropWait = 30 * time.Second

// move applies a move's step, message seq (first part first); admitMove
// passed it.
func (a *Applier) move(ctx context.Context, seq, first uint64, m *jetstream.RawStreamMsg, w service.Write) (h handled, err error) {
	h.release = nothing
	me, err := decodeMove(w)
	if err != nil {
		h.rej = &refusal{RejectWrite, err}
		return h, nil
	}
	org := w.Org
	if w.Kind == service.WriteOrgDrop && a.o.Local != nil {
		// A store that applies the target too keeps its copy: it is the
		// target's from the flip on. The target's applier is waited for
		// (outside the org's lock, which it needs), so that it takes the
		// copy over before the drop comes to it.
		if t := a.o.Local(me.To); t != nil && t.Applied() < me.Flip {
			wctx, cancel := context.WithTimeout(ctx, dropWait)
			t.WaitFor(wctx, me.Flip) // a timeout or a stall: the drop goes on, and the target fills its copy again
			cancel()
		}
	}
	so, err := a.streamOrg(org)
	if err != nil {
		return h, err
	}
	release := a.book.lock(org)
	defer func() {
		if err != nil {
			release()
		}
	}()
	var st *orgState
	var more []engine.AppliedKeyed
	switch w.Kind {
	case service.WriteOrgCopy:
		e, cerr := me.Copy.entry(a.keys, org, me.From)
		if cerr != nil {
			release()
			h.rej = &refusal{RejectWrite, cerr}
			return handled{rej: h.rej, release: nothing}, nil
		}
		var t taken
		if t, err = a.take(ctx, e, seq); err != nil {
			return h, err
		}
		st, h.res, h.err = t.state, t.res, t.err
		so.Incoming, so.From, so.Last = me.ID, me.From, seq
		more = append(more, stageIndex(org, seq, first))
		if e.keyedID != "" && e.keyed != nil {
			// A retry of the write sent here once the org lives here is
			// answered with its first result, as the source would.
			v, jerr := json.Marshal(e.keyed)
			if jerr != nil {
				return h, jerr
			}
			more = append(more, engine.AppliedKeyed{ID: e.keyedID, Value: v})
		}
	case service.WriteOrgFlip:
		if so.Moved == me.ID {
			break // flipped already (the step sent again)
		}
		if so.Incoming != me.ID {
			release()
			return handled{rej: &refusal{RejectWrite, fmt.Errorf("%w: the flip of move %s of org %s, which is not copying it here", engine.ErrInvalidInput, me.ID, org)}, release: nothing}, nil
		}
		cur, gerr := a.book.get(org)
		if gerr != nil {
			return h, gerr
		}
		so.Incoming, so.From, so.Fenced, so.Moved = "", "", "", me.ID
		if cur.includes(a.shard, seq) {
			break // the copy went past the flip already (through a later move's copies)
		}
		// The store's copy must be the org's history on the source's log
		// through the last entry before the fence.
		if cur == nil || cur.Src != me.From || cur.Era != me.Era {
			if err = a.fresh(ctx, org); err != nil {
				return h, err
			}
			cur = &orgState{Src: me.From, At: me.Era, Era: me.Era}
		}
		if cur.At < me.Last {
			if err = a.fill(ctx, cur, org, me.From, me.Last); err != nil {
				return h, err
			}
		}
		st = &orgState{Src: a.shard, At: seq, Era: so.Era, Past: map[string]uint64{me.From: me.Fence}}
		for s, q := range cur.Past {
			if s != a.shard && s != me.From {
				st.Past[s] = q
			}
		}
		a.log.Info("cluster: an org moved here now lives on this shard", "stream", a.stream, "org", org, "from", me.From, "seq", seq)
	case service.WriteOrgAbort:
		if so.Incoming != me.ID {
			break // not the move copying here: nothing to give up
		}
		so.Incoming, so.From, so.Era, so.Last = "", "", seq, seq
		cur, gerr := a.book.get(org)
		if gerr != nil {
			return h, gerr
		}
		// The store's copy, the source's history through some entry, is
		// kept where the source's applier runs (it is the source's copy
		// too); elsewhere it goes.
		if cur != nil && cur.Src == me.From && !cur.includes(a.shard, seq) && (a.o.Local == nil || a.o.Local(me.From) == nil) {
			if err = a.fresh(ctx, org); err != nil {
				return h, err
			}
			st = &orgState{Src: me.From, At: me.Era, Era: me.Era}
		}
	case service.WriteOrgFence:
		if so.Incoming == "" {
			so.Fenced = me.ID
		}
	case service.WriteOrgUnfence:
		if so.Fenced == me.ID {
			so.Fenced = ""
		}
	case service.WriteOrgDrop:
		so.Era, so.Last = seq, seq
		cur, gerr := a.book.get(org)
		if gerr != nil {
			return h, gerr
		}
		if cur == nil || cur.Src == a.shard && !cur.includes(a.shard, seq) {
			if err = a.fresh(ctx, org); err != nil {
				return h, err
			}
			st = &orgState{Src: a.shard, At: seq, Era: seq}
			a.log.Info("cluster: an org moved away; its copy here is removed", "stream", a.stream, "org", org, "to", me.To, "seq", seq)
		}
	}
	if h.extra, err = a.stageAll(org, so, st, more...); err != nil {
		return h, err
	}
	h.release = release
	return h, nil
}
