package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

// An org's writes are a history: the writes of its shard's log that were
// applied to it (its data entries), and, once it has moved, the writes of
// the log it moved from, copied into the log it moved to. Two records
// follow that history, one per log and one per store.
//
// streamOrg is what one shard's log says of an org, as every replica of
// the log derives it (the keyed record "o/ORG" of the log's AppliedLog,
// staged with each sequence that changes it), with an index of the org's
// data entries on the log (the keyed records "x/ORG\x00SEQ", each naming
// the sequence of the entry's first part): what a move copies, exactly as
// the log's appliers took it.
type streamOrg struct {
	V int `json:"v"`
	// Last is the org's last data entry on the log (a write applied, a
	// copy, a drop); Era its last drop or abort, after which its data on
	// the log starts empty again.
	Last uint64 `json:"last,omitempty"`
	Era  uint64 `json:"era,omitempty"`
	// Fenced: a move away (its id) refuses the org's writes from here on;
	// Incoming: a move here (its id, from From) is copying the org in,
	// its writes refused until the flip.
	Fenced   string `json:"fenced,omitempty"`
	Incoming string `json:"incoming,omitempty"`
	From     string `json:"from,omitempty"`
	// Moved is the last move that flipped the org here (its id).
	Moved string `json:"moved,omitempty"`
}

const streamOrgVersion = 1

// orgState is where a store's copy of an org stands: its data is the
// org's history on Src's log, from Era (a drop, or 0: the start, where it
// is empty) through At. One per org and store, shared by the store's
// appliers (the keyed record ORG of the store's orgsLog), and changed
// only under the org's lock (orgBook.lock), in the transaction that
// records the applied sequence. A store that never held anything of an
// org has none: its copy is empty.
type orgState struct {
	V   int    `json:"v"`
	Src string `json:"src"` // a shard id
	At  uint64 `json:"at"`
	Era uint64 `json:"era"`
	// Past is, per shard the org moved from to get to Src, the last
	// sequence of that shard's log the copy includes (its fence): an
	// applier of that shard on this store meets entries of it up to
	// there, already in.
	Past map[string]uint64 `json:"past,omitempty"`
}

const orgStateVersion = 1

// includes reports whether the copy st stands for has shard's history
// through sequence pos: it follows that log to pos or past it, or the
// org moved from that log after pos (Past).
func (st *orgState) includes(shard string, pos uint64) bool {
	if st == nil {
		return false
	}
	if st.Src == shard {
		return pos <= st.At
	}
	return pos <= st.Past[shard]
}

// orgsLog names the AppliedLog whose keyed records are a store's
// orgStates (a name no stream has: streams are kgctx_CLUSTER_SHARD).
const orgsLog = "kgctx-orgs"

// Keyed record ids of a log's AppliedLog (none starts with keyedPrefix,
// so the sweep of the keyed writes never meets them).
const (
	streamOrgPrefix = "o/"
	indexPrefix     = "x/"
	// indexFrom is the first sequence of the log this store indexed: a
	// store that applied the log's start with a release before moves
	// has no index of it (dataEntries reads that part of the log).
	indexFrom = "x-from"
)

func indexID(org string, seq uint64) string {
	return string(binary.BigEndian.AppendUint64([]byte(indexPrefix+org+"\x00"), seq))
}

// orgBook is a store's orgStates, with a lock per org that an applier
// holds from its decision to take a data entry of the org to the record
// of it (so that two appliers of one store never both apply one write of
// the org), and the results of the writes one applier took for another
// (a copy applied ahead of its source's applier on the same store). One
// per store (engine.KV.Shared); safe for concurrent use.
type orgBook struct {
	log   *engine.AppliedLog
	locks [64]sync.Mutex

	mu      sync.Mutex
	cache   map[string]*orgState // nil value: none
	results map[string]applied   // "SHARD/SEQ" -> what taking it gave
}

func bookOf(app *service.App) (*orgBook, error) {
	v, err := app.Store.KV().Shared("cluster/orgs", func() (any, error) {
		l, err := app.Store.KV().AppliedLog(orgsLog)
		if err != nil {
			return nil, err
		}
		return &orgBook{log: l, cache: map[string]*orgState{}, results: map[string]applied{}}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*orgBook), nil
}

// lock takes org's lock; the caller calls the function returned.
func (b *orgBook) lock(org string) func() {
	h := fnv.New32a()
	h.Write([]byte(org))
	m := &b.locks[h.Sum32()%uint32(len(b.locks))]
	m.Lock()
	return m.Unlock
}

// get returns a copy of org's state (nil: none).
func (b *orgBook) get(org string) (*orgState, error) {
	b.mu.Lock()
	st, ok := b.cache[org]
	b.mu.Unlock()
	if !ok {
		v, err := b.log.Keyed(org)
		switch {
		case errors.Is(err, engine.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			st = &orgState{}
			if err := json.Unmarshal(v, st); err != nil {
				return nil, fmt.Errorf("cluster: state of org %s: %w", org, err)
			}
		}
		b.mu.Lock()
		if cached, ok := b.cache[org]; ok {
			st = cached // an applier recorded one meanwhile: it is newer
		} else {
			b.cache[org] = st
		}
		b.mu.Unlock()
	}
	if st == nil {
		return nil, nil
	}
	c := *st
	return &c, nil
}

// stage is st as a record of the transaction of an applied sequence.
func (b *orgBook) stage(org string, st *orgState) (engine.AppliedKeyed, error) {
	st.V = orgStateVersion
	v, err := json.Marshal(st)
	return engine.AppliedKeyed{ID: org, Value: v, Log: b.log}, err
}

// put stores st at once (outside a sequence's record: a gap filled).
func (b *orgBook) put(org string, st *orgState) error {
	k, err := b.stage(org, st)
	if err != nil {
		return err
	}
	if err := b.log.Put(k); err != nil {
		return err
	}
	b.set(org, st)
	return nil
}

// set takes st into the cache once its record committed.
func (b *orgBook) set(org string, st *orgState) {
	c := *st
	b.mu.Lock()
	b.cache[org] = &c
	b.mu.Unlock()
}

// keptTaken bounds the results kept for another applier.
const keptTaken = 1024

// took keeps what taking data entry shard/seq gave, for the applier of
// that shard on this store, which finds it taken.
func (b *orgBook) took(shard string, seq uint64, res service.WriteResult, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.results) >= keptTaken {
		for k := range b.results {
			delete(b.results, k)
			if len(b.results) < keptTaken/2 {
				break
			}
		}
	}
	b.results[fmt.Sprintf("%s/%d", shard, seq)] = applied{res, err}
}

// taken returns (and forgets) what another applier's taking of shard/seq
// gave.
func (b *orgBook) taken(shard string, seq uint64) (applied, bool) {
	k := fmt.Sprintf("%s/%d", shard, seq)
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.results[k]
	delete(b.results, k)
	return r, ok
}

// streamOrg returns a copy of what this applier's log says of org.
func (a *Applier) streamOrg(org string) (*streamOrg, error) {
	if so, ok := a.orgs[org]; ok {
		c := *so
		return &c, nil
	}
	so := &streamOrg{}
	v, err := a.rec.Keyed(streamOrgPrefix + org)
	switch {
	case errors.Is(err, engine.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(v, so); err != nil {
			return nil, fmt.Errorf("cluster: record of org %s on %s: %w", org, a.stream, err)
		}
	}
	a.orgs[org] = so
	c := *so
	return &c, nil
}

// stageOrg is so as a record of the transaction of an applied sequence;
// the applier takes it into its cache with the record (a.pending).
func (a *Applier) stageOrg(org string, so *streamOrg) (engine.AppliedKeyed, error) {
	so.V = streamOrgVersion
	v, err := json.Marshal(so)
	if err != nil {
		return engine.AppliedKeyed{}, err
	}
	c := *so
	a.pending = append(a.pending, func() { a.orgs[org] = &c })
	return engine.AppliedKeyed{ID: streamOrgPrefix + org, Value: v}, nil
}

// stageIndex is the index record of org's data entry seq, whose first
// part is first (seq when not split).
func stageIndex(org string, seq, first uint64) engine.AppliedKeyed {
	var v []byte
	if first != seq {
		v = binary.BigEndian.AppendUint64(nil, first)
	}
	return engine.AppliedKeyed{ID: indexID(org, seq), Value: v}
}

// entryRef is a data entry of an org on a log: its sequence and its first
// part's.
type entryRef struct {
	seq, first uint64
}

// dataEntries lists org's data entries on shard's log in (after,
// through], from this store's index of the log (which its applier of the
// shard keeps), and, for the part of the log this store applied before it
// kept one, from the log itself (legacyEntries, admitting by places; nil:
// the org has nothing there, that part is not read).
func dataEntries(ctx context.Context, app *service.App, js jetstream.JetStream, keys *Keys, shard, org string, after, through uint64, places placeFunc) ([]entryRef, error) {
	if through <= after {
		return nil, nil
	}
	rec, err := app.Store.KV().AppliedLog(StreamName(keys.cluster, shard))
	if err != nil {
		return nil, err
	}
	from := uint64(1)
	if v, err := rec.Keyed(indexFrom); err == nil && len(v) == 8 {
		from = binary.BigEndian.Uint64(v)
	} else if err != nil && !errors.Is(err, engine.ErrNotFound) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("cluster: this node keeps no index of shard %s's log", shard)
	}
	var out []entryRef
	if after+1 < from && places != nil {
		if out, err = legacyEntries(ctx, js, keys, shard, org, after, min(through, from-1), places); err != nil {
			return nil, err
		}
	}
	prefix := indexPrefix + org + "\x00"
	err = rec.EachKeyedPrefix(prefix, func(id string, v []byte) error {
		seq := binary.BigEndian.Uint64([]byte(id[len(prefix):]))
		if seq <= after || seq > through || seq < from {
			return nil
		}
		first := seq
		if len(v) == 8 {
			first = binary.BigEndian.Uint64(v)
		}
		out = append(out, entryRef{seq, first})
		return nil
	})
	return out, err
}

// placeFunc is Placement.MayHold.
type placeFunc func(ctx context.Context, org, shard string) (bool, error)

// legacyEntries reads shard's log from its start through through and
// lists org's data entries in (after, through] as an applier of the
// release before moves took them: every write of the cluster (MAC,
// headers, age), of a kind known and of the org placed on the shard, that
// was not a retry of a keyed write applied within keyedKeep before it.
// That release had no moves, so nothing else refused a write. It reads
// from the log's start to know the keyed writes.
func legacyEntries(ctx context.Context, js jetstream.JetStream, keys *Keys, shard, org string, after, through uint64, places placeFunc) ([]entryRef, error) {
	r, err := newReader(ctx, js, keys, shard)
	if err != nil {
		return nil, err
	}
	a := &Applier{keys: keys, stream: r.stream, shard: shard, parts: map[string]*partial{}, o: ApplierOptions{MaxWriteBytes: DefaultMaxWriteBytes}}
	seen := map[string]time.Time{} // keyed ids applied, when (the log's time)
	var out []entryRef
	for seq := uint64(1); seq <= through; seq++ {
		m, err := r.get(ctx, seq)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, fmt.Errorf("cluster: %s #%d is not in the log", r.stream, seq)
		}
		if reason, _ := a.check(seq, m); reason != "" {
			continue
		}
		data := m.Data
		first := seq
		if m.Header.Get(chunkHeader) != "" {
			var rej *refusal
			if data, rej = a.part(m); data == nil || rej != nil {
				continue
			}
			first = a.parts[m.Header.Get(idHeader)].first
			delete(a.parts, m.Header.Get(idHeader))
		}
		id := m.Header.Get(idHeader)
		if strings.HasPrefix(id, keyedPrefix) {
			if at, ok := seen[id]; ok && m.Time.Sub(at) <= keyedKeep {
				continue // a retry, answered with the first result
			}
			seen[id] = m.Time
		}
		var w service.Write
		if json.Unmarshal(data, &w) != nil || !service.KnownKind(w.Kind) || w.Global() || w.Org != org {
			continue
		}
		if ok, err := places(ctx, org, shard); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		if seq > after {
			out = append(out, entryRef{seq, first})
		}
	}
	return out, nil
}

// logReader reads a shard's log by sequence (direct gets, which any
// replica answers).
type logReader struct {
	stream string
	st     jetstream.Stream
}

func newReader(ctx context.Context, js jetstream.JetStream, keys *Keys, shard string) (*logReader, error) {
	name := StreamName(keys.cluster, shard)
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := js.Stream(ictx, name)
	if err != nil {
		return nil, fmt.Errorf("cluster: stream %s: %w", name, err)
	}
	return &logReader{stream: name, st: st}, nil
}

// get reads message seq (nil, nil: not written yet).
func (r *logReader) get(ctx context.Context, seq uint64) (*jetstream.RawStreamMsg, error) {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := r.st.GetMsg(gctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	return m, err
}

// dataEntry is one write of an org's history: its place there (the log
// of Src, its sequence, the org's entry before it and its era on that
// log) and what applying it takes (the write, the seed of its ids, the
// log's time).
type dataEntry struct {
	org       string
	src       string
	seq, prev uint64
	era       uint64
	w         service.Write
	seed      []byte
	at        time.Time
	// origin and originSeq: the log and sequence seed names (the entry's
	// own, or the one a copy keeps).
	origin    string
	originSeq uint64
	// raw is the write's bytes (the copied write's, for a copy).
	raw json.RawMessage
	// keyedID and keyed: the write's idempotency key and the record of
	// its application (a copy carries it, so that the target's appliers
	// skip a retry).
	keyedID string
	keyed   *keyedRecord
}

// readEntry reads data entry ref of shard's log (its parts, each checked)
// and returns it: a write of the log (its ids seeded by the log and the
// sequence), or, for an org_copy, the write it copies, as its source took
// it (src and seq: its place on the source's log), and the entry's bytes.
func readEntry(ctx context.Context, r *logReader, keys *Keys, shard string, ref entryRef) (*dataEntry, []byte, error) {
	a := &Applier{keys: keys, stream: r.stream, shard: shard, parts: map[string]*partial{}, o: ApplierOptions{MaxWriteBytes: DefaultMaxWriteBytes + copySlack}}
	var data []byte
	var last *jetstream.RawStreamMsg
	id := ""
	for seq := ref.first; seq <= ref.seq; seq++ {
		m, err := r.get(ctx, seq)
		if err != nil {
			return nil, nil, err
		}
		if m == nil {
			return nil, nil, fmt.Errorf("cluster: %s #%d is not in the log", r.stream, seq)
		}
		if seq == ref.first {
			id = m.Header.Get(idHeader)
		} else if m.Header.Get(idHeader) != id {
			continue // another write between the parts
		}
		if reason, err := a.check(seq, m); reason != "" {
			return nil, nil, fmt.Errorf("cluster: %s #%d, an entry of the index: %w", r.stream, seq, err)
		}
		last = m
		if ref.first == ref.seq {
			data = m.Data
			break
		}
		d, rej := a.part(m)
		if rej != nil {
			return nil, nil, fmt.Errorf("cluster: %s #%d, an entry of the index: %w", r.stream, seq, rej.err)
		}
		data = d
	}
	if last == nil || last.Sequence != ref.seq || data == nil {
		return nil, nil, fmt.Errorf("cluster: %s #%d, an entry of the index, does not read whole", r.stream, ref.seq)
	}
	var w service.Write
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, nil, fmt.Errorf("cluster: %s #%d: %w", r.stream, ref.seq, err)
	}
	if w.Kind != service.WriteOrgCopy {
		e := &dataEntry{org: w.Org, src: shard, seq: ref.seq, w: w, seed: keys.idSeed(r.stream, ref.seq), at: last.Time.UTC(),
			origin: shard, originSeq: ref.seq, raw: data}
		if strings.HasPrefix(id, keyedPrefix) {
			e.keyedID = id
		}
		return e, data, nil
	}
	me, err := decodeMove(w)
	if err != nil || me.Copy == nil {
		return nil, nil, fmt.Errorf("cluster: %s #%d: a copy without its entry (%v)", r.stream, ref.seq, err)
	}
	e, err := me.Copy.entry(keys, w.Org, me.From)
	return e, data, err
}
