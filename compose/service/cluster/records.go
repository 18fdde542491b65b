package cluster

import (
	"crypto/hmac"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// signedRecord is the value of a key in one of the cluster's buckets
// (members, placement): the record, when it was written (the writer's
// clock, in nanoseconds: of two valid values of a key the later wins,
// so a replayed old value changes nothing) and a MAC over the bucket,
// the key, the time and the record. A value without a valid MAC is not
// the cluster's and is ignored.
type signedRecord struct {
	V   int             `json:"v"`
	At  int64           `json:"at"`
	Val json.RawMessage `json:"val"`
	MAC []byte          `json:"mac"`
}

const recordVersion = 1

var errBadRecord = errors.New("cluster: record without a valid MAC")

func (k *Keys) recordMAC(bucket, key string, at int64, val []byte) []byte {
	return mac(k.kv, "record", []byte(bucket), []byte(key), strconv.AppendInt(nil, at, 10), val)
}

// sealRecord encodes v as key's value in bucket, signed.
func (k *Keys) sealRecord(bucket, key string, v any) ([]byte, error) {
	val, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	at := time.Now().UnixNano()
	return json.Marshal(signedRecord{V: recordVersion, At: at, Val: val, MAC: k.recordMAC(bucket, key, at, val)})
}

// openRecord checks a value of key in bucket and decodes its record into
// v; it returns the record's time.
func (k *Keys) openRecord(bucket, key string, b []byte, v any) (int64, error) {
	var r signedRecord
	if json.Unmarshal(b, &r) != nil || r.V != recordVersion || !hmac.Equal(r.MAC, k.recordMAC(bucket, key, r.At, r.Val)) {
		return 0, errBadRecord
	}
	if err := json.Unmarshal(r.Val, v); err != nil {
		return 0, errBadRecord
	}
	return r.At, nil
}

// Rejection reasons: why an applier refused a logged write
// (kgctx_cluster_rejected_writes_total{reason}).
const (
	RejectMAC   = "mac"   // no MAC, or not the cluster's
	RejectStale = "stale" // signed, but its time is far from the log's (a replay)
	RejectShard = "shard" // its org is not placed on the stream's shard
	RejectKind  = "kind"  // a global kind on a shard's stream, or the reverse
	RejectChunk = "chunk" // a part of a split write out of place, foreign or over the bound
	RejectWrite = "write" // signed, but not a write
	// RejectMoving: a write of an org whose writes pause on this shard
	// while it moves (fenced on its old shard, or not yet flipped on its
	// new one); answered 503, to retry once it lives on its new shard.
	RejectMoving = "moving"
)

// RejectReasons lists every reason, for metrics that start at zero.
var RejectReasons = []string{RejectMAC, RejectStale, RejectShard, RejectKind, RejectChunk, RejectWrite, RejectMoving}

// Counters are what a node refused or ignored since it started.
type Counters struct {
	// RejectedWrites: per reason, logged writes its appliers refused.
	RejectedWrites map[string]uint64
	// IgnoredRecords: per bucket (members, placement), values without a
	// valid MAC.
	IgnoredRecords map[string]uint64
}

// counters are a node's Counters, safe for concurrent use.
type counters struct {
	writes, records sync.Map // string -> *atomic.Uint64
	logMu           sync.Mutex
	logged          map[string]time.Time // reason -> last logged
}

func (c *counters) add(m *sync.Map, k string) uint64 {
	v, _ := m.LoadOrStore(k, new(atomic.Uint64))
	return v.(*atomic.Uint64).Add(1)
}

// quiet reports whether a rejection of kind k was logged in the last 10
// seconds (a flood of forgeries is logged once per 10 s, with its count).
func (c *counters) quiet(k string) bool {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if c.logged == nil {
		c.logged = map[string]time.Time{}
	}
	if time.Since(c.logged[k]) < 10*time.Second {
		return true
	}
	c.logged[k] = time.Now()
	return false
}

func (c *counters) snapshot() Counters {
	out := Counters{RejectedWrites: map[string]uint64{}, IgnoredRecords: map[string]uint64{}}
	for _, r := range RejectReasons {
		out.RejectedWrites[r] = 0
	}
	for _, b := range []string{"members", "placement"} {
		out.IgnoredRecords[b] = 0
	}
	c.writes.Range(func(k, v any) bool { out.RejectedWrites[k.(string)] = v.(*atomic.Uint64).Load(); return true })
	c.records.Range(func(k, v any) bool { out.IgnoredRecords[k.(string)] = v.(*atomic.Uint64).Load(); return true })
	return out
}
