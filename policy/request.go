package policy

import (
	"sync"
	"time"

	"github.com/cedar-policy/cedar-go/types"
)

// Pool retention limits: a Request whose caches grew past these is not
// recycled with them, so one exceptional walk does not pin memory forever.
const (
	maxPooledDecisions = 1 << 15
	// maxRecords bounds the per-request memo of resource attribute records
	// and decisions (recordMemo). A walk typically touches a handful of
	// (kind, org, project, type) tuples; beyond this many we decide
	// without memoising.
	maxRecords = 256
)

// recordKey identifies a resource's attribute record (which does not
// depend on its ID, so all nodes of one project and type share it) and its
// kind: under a policy set that never tells two resources apart by id
// (policySet.idFree), everything a decision reads of a resource.
type recordKey struct {
	kind              Kind
	org, project, typ string
}

// recordMemo is a resource attribute record and, under an id-free policy
// set, the decision every resource of its recordKey gets.
type recordMemo struct {
	rec            types.Record
	decided, allow bool
}

// Request is a per-request decision cache bound to one identity, one verb
// and the policy set that was active when it was created. It is not safe
// for concurrent use. Obtain it with PEP.NewRequest and give it back with
// Release.
type Request struct {
	set    *policySet // pinned; nil means "deny everything"
	action types.EntityUID
	ctx    types.Record
	ents   entityPair // principal fixed per Request, resource per miss
	err    error      // identity/verb/PEP problem: every Allow denies
	first  error      // first per-resource or evaluation error

	decisions map[uint64]bool
	records   map[recordKey]recordMemo

	checks, hits int
	evalTime     time.Duration // what its Cedar evaluations took (EvalTime)
	released     bool
}

var requestPool = sync.Pool{New: func() any {
	return &Request{
		decisions: make(map[uint64]bool, 64),
		records:   make(map[recordKey]recordMemo, 8),
	}
}}

// NewRequest returns a pooled Request deciding verb for id under the policy
// set active now. It never returns nil: if p is nil, or id or verb is
// invalid, the Request denies every resource and Err reports why.
func (p *PEP) NewRequest(id Identity, verb string) *Request {
	r := requestPool.Get().(*Request)
	r.released = false
	r.set = p.set()
	if r.set == nil {
		r.err = ErrNilPEP
		return r
	}
	if r.action, r.err = actionFor(verb); r.err != nil {
		return r
	}
	r.ents.principal, r.ctx, r.err = principal(id)
	return r
}

// Allow reports whether the pinned policy set allows the Request's verb on
// res. The answer is cached under key for the lifetime of the Request: the
// caller guarantees that key identifies res (e.g. a dense node id), and
// res is only turned into Cedar entities on a cache miss. A cached answer
// costs a map lookup and allocates nothing. Any error denies; Err returns
// the first one.
func (r *Request) Allow(key uint64, res Resource) bool {
	if r == nil || r.released {
		return false
	}
	r.checks++
	if r.err != nil || r.set == nil {
		return false
	}
	if d, ok := r.decisions[key]; ok {
		r.hits++
		return d
	}
	d, err := r.miss(res)
	if err != nil && r.first == nil {
		r.first = err
	}
	// Errors are deterministic for a given resource under a pinned set, so
	// caching the resulting denial is as correct as caching an allow.
	r.decisions[key] = d
	return d
}

// Cached is Allow's answer for key when the Request has it without the
// resource: a decision made before under key, or a Request that denies
// everything. ok false means only Allow with the resource can answer; a
// caller whose resource costs something to build (strings read from a
// store) asks Cached first. Counted in Stats as Allow's answers are.
func (r *Request) Cached(key uint64) (allow, ok bool) {
	if r == nil || r.released {
		return false, true
	}
	if r.err != nil || r.set == nil {
		r.checks++
		return false, true
	}
	if d, ok := r.decisions[key]; ok {
		r.checks++
		r.hits++
		return d, true
	}
	return false, false
}

func (r *Request) miss(res Resource) (bool, error) {
	uid, err := resourceUID(res)
	if err != nil {
		return false, err
	}
	k := recordKey{res.Kind, res.OrgID, res.ProjectID, res.Type}
	m, ok := r.records[k]
	if m.decided {
		return m.allow, nil
	}
	if !ok {
		m.rec = r.set.record(res.OrgID, res.ProjectID, res.Type)
	}
	r.ents.resource = types.Entity{UID: uid, Attributes: m.rec}
	t := time.Now()
	d, err := decide(r.set, &r.ents, r.action, r.ctx)
	r.evalTime += time.Since(t)
	// An id-free set decides every resource of one record alike. An error
	// is not memoised: its message may name the resource.
	if r.set.idFree && err == nil {
		m.decided, m.allow = true, d
	}
	if ok || len(r.records) < maxRecords {
		r.records[k] = m
	}
	return d, err
}

// Stats returns how many Allow calls this Request answered and how many of
// them came from the cache.
func (r *Request) Stats() (checks, cacheHits int) {
	if r == nil {
		return 0, 0
	}
	return r.checks, r.hits
}

// EvalTime is how long the Request's Cedar evaluations took: decisions it
// answered from its memos cost a lookup and are not timed (a block's
// policyMs).
func (r *Request) EvalTime() time.Duration {
	if r == nil {
		return 0
	}
	return r.evalTime
}

// Err returns why the Request denies everything (nil PEP, invalid identity,
// unknown verb) or else the first error met by Allow (invalid resource,
// policy evaluation error), or nil. Useful for logging a fail-closed walk.
func (r *Request) Err() error {
	if r == nil {
		return ErrNilPEP
	}
	if r.err != nil {
		return r.err
	}
	return r.first
}

// Version returns the version of the policy set this Request pinned (0 if
// none).
func (r *Request) Version() uint64 {
	if r == nil || r.set == nil {
		return 0
	}
	return r.set.version
}

// Release returns r to the pool. r must not be used afterwards; until it is
// handed out again, further calls deny and a second Release is a no-op.
func (r *Request) Release() {
	if r == nil || r.released {
		return
	}
	decisions, records := r.decisions, r.records
	if len(decisions) > maxPooledDecisions {
		decisions = make(map[uint64]bool, 64)
	} else {
		clear(decisions) // keeps buckets: the next Request starts warm
	}
	clear(records) // drops references to caller strings
	*r = Request{decisions: decisions, records: records, released: true}
	requestPool.Put(r)
}
