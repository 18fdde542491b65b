package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/policy"
)

// Write kinds: every change the API makes to the graph, the observations,
// the configuration, the tokens and the policies is one Write, applied by
// App.Apply. A single node applies it at once; a cluster
// (compose/service/cluster) publishes it to a replicated log that every
// replica applies in order.
const (
	WriteImport            = "import"
	WriteObservations      = "observations"
	WriteDeleteTriplet     = "delete_triplet"
	WriteDeleteNode        = "delete_node"
	WriteDeleteObservation = "delete_observation"
	WriteUpdateObservation = "update_observation" // ID and ObservationPatch
	WriteClear             = "clear"
	WritePredicates        = "predicates"
	WriteMemoryConfig      = "memory_config"
	WritePlan              = "plan"
	WriteRecallMatrix      = "recall_matrix"
	WriteBudgets           = "budgets"
	WriteInSessionConfig   = "in_session_config"
	WritePolicies          = "policies"
	WriteToken             = "token"
	WriteTokenRevoke       = "token_revoke" // ID: the token's public id
	WriteQuotas            = "quotas"
	// Session state: leases, the inject queue, injection logs and
	// feedback, so that a cluster's nodes agree on who holds a session
	// and what was delivered.
	WriteLeaseClaim   = "lease_claim"
	WriteLeaseRefresh = "lease_refresh"
	WriteEnqueue      = "enqueue"
	WriteInjectClaim  = "inject_claim"
	WriteInjectAck    = "inject_ack"
	WriteInjectionLog = "injection_log"
	WriteFeedback     = "feedback"
	WriteToolResult   = "tool_result"
	// An org's move from one shard of a cluster to another
	// (compose/service/cluster, whose applier applies them; Move holds
	// the entry): a write of the source shard copied to the target
	// (org_copy), the source refusing the org's writes (org_fence) or
	// taking them again (org_unfence, a move given up), the org living on
	// the target from there (org_flip), the target's copy given up
	// (org_abort) and the source's copy removed (org_drop).
	WriteOrgCopy    = "org_copy"
	WriteOrgFence   = "org_fence"
	WriteOrgUnfence = "org_unfence"
	WriteOrgFlip    = "org_flip"
	WriteOrgAbort   = "org_abort"
	WriteOrgDrop    = "org_drop"
)

// writeKinds are the kinds this binary applies (KnownKind).
var writeKinds = map[string]bool{}

func init() {
	for _, k := range []string{WriteImport, WriteObservations, WriteDeleteTriplet, WriteDeleteNode, WriteDeleteObservation,
		WriteUpdateObservation, WriteClear, WritePredicates, WriteMemoryConfig, WritePlan, WriteRecallMatrix, WriteBudgets,
		WriteInSessionConfig, WritePolicies, WriteToken, WriteTokenRevoke, WriteQuotas, WriteLeaseClaim, WriteLeaseRefresh,
		WriteEnqueue, WriteInjectClaim, WriteInjectAck, WriteInjectionLog, WriteFeedback, WriteToolResult,
		WriteOrgCopy, WriteOrgFence, WriteOrgUnfence, WriteOrgFlip, WriteOrgAbort, WriteOrgDrop} {
		writeKinds[k] = true
	}
}

// KnownKind reports whether this binary applies writes of kind. A logged
// write of another kind was published by a newer binary: a replica must
// not take it for an invalid write (refused alike everywhere) but stop
// until it is upgraded (ErrUnknownKind).
func KnownKind(kind string) bool { return writeKinds[kind] }

// Kinds returns every kind this binary applies, sorted, in a slice the
// caller owns.
func Kinds() []string {
	out := make([]string, 0, len(writeKinds))
	for k := range writeKinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Write is one change, complete: everything its application reads is in
// it or in the state every replica has at the same point of the log.
type Write struct {
	Kind string `json:"kind"`
	// Org and Project scope the write; global writes (Global) name none.
	Org     string `json:"org,omitempty"`
	Project string `json:"project,omitempty"`
	// Import: the triplets, their input lines and whether the writer may
	// name other orgs (operators).
	Triplets      []engine.TripletInput `json:"triplets,omitempty"`
	Lines         []int                 `json:"lines,omitempty"`
	AllowCrossOrg bool                  `json:"allowCrossOrg,omitempty"`
	// Observations to add.
	Observations []engine.ObservationInput `json:"observations,omitempty"`
	// DeleteTriplet: the triplet's key.
	Source       string `json:"source,omitempty"`
	Relationship string `json:"relationship,omitempty"`
	Target       string `json:"target,omitempty"`
	// DeleteNode, DeleteObservation, UpdateObservation: the id.
	ID string `json:"id,omitempty"`
	// UpdateObservation: what changes (embedded again by every replica
	// when it has new content and no vector).
	ObservationPatch *engine.ObservationPatch `json:"observationPatch,omitempty"`
	// Doc is a configuration document (JSON) or, for policies, the Cedar
	// text as a JSON string.
	Doc json.RawMessage `json:"doc,omitempty"`
	// Token: the hash of the new token's secret (the secret itself never
	// leaves the node that made it) and its grant.
	TokenHash string      `json:"tokenHash,omitempty"`
	Token     *auth.Token `json:"token,omitempty"`
	// Session writes: the session and worker, a lease's length in seconds
	// (a refresh: 0 keeps the claim's), the lease claimed, the inject
	// enqueued, the injection log recorded, the feedback's outcome; an
	// ack's deliveryId is ID.
	Session string                   `json:"session,omitempty"`
	Worker  string                   `json:"worker,omitempty"`
	Seconds int                      `json:"seconds,omitempty"`
	Lease   *delivery.Lease          `json:"lease,omitempty"`
	Inject  *InjectEntry             `json:"inject,omitempty"`
	Log     *sessionlog.InjectionLog `json:"log,omitempty"`
	Outcome string                   `json:"outcome,omitempty"`
	// ToolResult: the result a session's tool call gave.
	ToolResult *compose.ToolResult `json:"toolResult,omitempty"`
	// Move: an org move's entry (MoveKind kinds), whose format the
	// cluster owns.
	Move json.RawMessage `json:"move,omitempty"`
}

// MoveKind reports whether kind is a step of an org's move between the
// shards of a cluster, which the cluster's applier applies (App.Apply
// refuses them).
func MoveKind(kind string) bool {
	switch kind {
	case WriteOrgCopy, WriteOrgFence, WriteOrgUnfence, WriteOrgFlip, WriteOrgAbort, WriteOrgDrop:
		return true
	}
	return false
}

// Global reports whether w changes what every org sees (tokens, policies,
// operator settings) rather than one org's data.
func (w Write) Global() bool {
	switch w.Kind {
	case WriteToken, WriteTokenRevoke, WritePolicies, WriteRecallMatrix, WriteBudgets, WriteInSessionConfig, WriteQuotas:
		return true
	}
	return false
}

// WriteResult is what a write did.
type WriteResult struct {
	Import engine.ImportResult // WriteImport
	IDs    []string            // WriteObservations: the new ids, in order
	// Session writes: the lease claimed or refreshed, the inject
	// enqueued (Duplicate: already queued) or handed to the worker (nil:
	// none), the injection log's id (IDs), the feedback applied.
	Lease     delivery.Lease
	Inject    *delivery.Inject
	Duplicate bool
	Feedback  sessionlog.FeedbackResult
	Learned   *compose.LearnResult // WriteToolResult
	// Replayed: the write's idempotency key was applied before (a
	// retry), and this is the first application's result, or an empty
	// one when it was not kept; nothing was applied again.
	Replayed bool
	// Seq is the log sequence of a replicated write (0 on a single node);
	// Shard names its log.
	Seq   uint64
	Shard string
}

// Writer carries writes to the store (App.Writer): nil applies them at
// once (App.Apply); a cluster publishes them to its log and answers when
// this node has applied them.
type Writer interface {
	Write(ctx context.Context, w Write) (WriteResult, error)
}

// Write makes a change through the App's Writer. A replicated write's
// position is noted in ctx's positions (WithPositions).
func (a *App) Write(ctx context.Context, w Write) (WriteResult, error) {
	if a.Writer == nil {
		return a.Apply(ctx, w, ApplyOptions{})
	}
	res, err := a.Writer.Write(ctx, w)
	if p, ok := ctx.Value(positionsKey{}).(*engine.Positions); ok && res.Seq > 0 {
		p.Note(res.Shard, res.Seq)
	}
	if k, ok := ctx.Value(idempotencyKey{}).(*Idempotency); ok && res.Replayed {
		k.replayed.Store(true)
	}
	return res, err
}

// Idempotency is a request's idempotency key (the HTTP Idempotency-Key
// header) as its writes see it. A request may make several writes, in an
// order that depends only on the request: the key of each is the
// request's key and the write's index in the request, so that a retry of
// the request names each write as the first attempt did. Safe for
// concurrent use.
type Idempotency struct {
	scope, key string
	next       atomic.Int64
	replayed   atomic.Bool
}

type idempotencyKey struct{}

// WithIdempotencyKey returns a context whose writes carry key, scoped to
// scope (the caller: two callers' equal keys name different writes), and
// the Idempotency that tells whether one of them was a replay.
func WithIdempotencyKey(ctx context.Context, scope, key string) (context.Context, *Idempotency) {
	k := &Idempotency{scope: scope, key: key}
	return context.WithValue(ctx, idempotencyKey{}, k), k
}

// NextIdempotencyKey is the idempotency key of the next write made with
// ctx: the request's scope and key and the write's index among the
// request's writes (a Writer calls it once per write); ok is false when
// the request has no key.
func NextIdempotencyKey(ctx context.Context) (scope, key string, index int64, ok bool) {
	k, ok := ctx.Value(idempotencyKey{}).(*Idempotency)
	if !ok {
		return "", "", 0, false
	}
	return k.scope, k.key, k.next.Add(1) - 1, true
}

// Replayed reports whether a write of the request was a replay of one
// applied before under the same key (WriteResult.Replayed).
func (k *Idempotency) Replayed() bool { return k.replayed.Load() }

type positionsKey struct{}

// WithPositions returns a context whose Writes note their log positions
// in the Positions returned.
func WithPositions(ctx context.Context) (context.Context, *engine.Positions) {
	p := &engine.Positions{}
	return context.WithValue(ctx, positionsKey{}, p), p
}

// ApplyOptions make an application deterministic: a replica applies a
// logged write with the time and the id seed the log gave it.
type ApplyOptions struct {
	Now time.Time        // zero: time.Now()
	IDs *engine.IDSource // nil: random ids
	// NoWait returns once the write is durable, before the indexes have
	// it (bulk replay).
	NoWait bool
}

// Apply makes the change w describes.
func (a *App) Apply(ctx context.Context, w Write, o ApplyOptions) (WriteResult, error) {
	t := engine.Tenant{Org: w.Org, Project: w.Project}
	iopt := engine.ImportOptions{Now: o.Now, IDs: o.IDs, NoWait: o.NoWait}
	var res WriteResult
	var err error
	switch w.Kind {
	case WriteImport:
		iopt.AllowCrossOrg, iopt.Lines = w.AllowCrossOrg, w.Lines
		res.Import, err = a.Import(ctx, t, w.Triplets, iopt)
	case WriteObservations:
		res.IDs, err = a.Store.AddObservations(ctx, t, w.Observations, iopt)
	case WriteDeleteTriplet:
		err = a.Store.DeleteTriplet(ctx, t, w.Source, w.Relationship, w.Target)
	case WriteDeleteNode:
		err = a.Store.DeleteNode(ctx, t, w.ID)
	case WriteDeleteObservation:
		err = a.Store.DeleteObservation(ctx, t, w.ID)
	case WriteUpdateObservation:
		if w.ObservationPatch == nil {
			return res, fmt.Errorf("%w: an observation update without its patch", engine.ErrInvalidInput)
		}
		err = a.Store.UpdateObservation(ctx, t, w.ID, *w.ObservationPatch, iopt)
	case WriteClear:
		_, _, err = a.Store.ClearProject(ctx, t)
	case WritePredicates:
		err = applyDoc(w.Doc, func(v compose.PredicateConfig) error { return a.Settings.SetPredicates(t, v) })
	case WriteMemoryConfig:
		err = applyDoc(w.Doc, func(v compose.MemoryConfig) error { return a.Settings.SetMemoryConfig(t, v) })
	case WritePlan:
		err = applyDoc(w.Doc, func(v compose.OrgPlan) error { return a.Settings.SetPlan(w.Org, v) })
	case WriteRecallMatrix:
		err = applyDoc(w.Doc, a.Settings.SetRecallMatrix)
	case WriteBudgets:
		err = applyDoc(w.Doc, a.Settings.SetBudgets)
	case WriteInSessionConfig:
		err = applyDoc(w.Doc, a.Settings.SetInSessionConfig)
	case WritePolicies:
		err = applyDoc(w.Doc, a.SetPolicies)
	case WriteToken:
		if w.Token == nil {
			return res, fmt.Errorf("%w: a token write without its grant", engine.ErrInvalidInput)
		}
		tok := *w.Token
		if tok.Role == auth.RoleOperator || tok.Origin == auth.OriginBootstrap {
			// Operators come from each node's bootstrap token, never from
			// the log.
			return res, fmt.Errorf("%w: a token write may not grant the operator role", engine.ErrForbidden)
		}
		if tok.CreatedAt.IsZero() {
			tok.CreatedAt = o.Now
		}
		err = a.Tokens.PutTokenHash(w.TokenHash, tok)
	case WriteTokenRevoke:
		err = a.Tokens.Revoke(w.ID)
	case WriteQuotas:
		err = applyDoc(w.Doc, a.Settings.SetQuotas)
	case WriteLeaseClaim, WriteLeaseRefresh, WriteEnqueue, WriteInjectClaim, WriteInjectAck, WriteInjectionLog, WriteFeedback:
		err = a.applySession(ctx, w, o, &res)
	case WriteToolResult:
		if w.ToolResult == nil {
			return res, fmt.Errorf("%w: a tool result write without its result", engine.ErrInvalidInput)
		}
		res.Learned, err = a.Composer.ToolResultAt(ctx, *w.ToolResult, iopt)
	case WriteOrgCopy, WriteOrgFence, WriteOrgUnfence, WriteOrgFlip, WriteOrgAbort, WriteOrgDrop:
		return res, fmt.Errorf("%w: a %s write is a step of a cluster's org move, which its applier applies", engine.ErrInvalidInput, w.Kind)
	default:
		// Not a refusal (Refused): a newer binary's kind, which a replica
		// must neither apply nor record as applied.
		err = fmt.Errorf("%w %q", ErrUnknownKind, w.Kind)
	}
	return res, err
}

// applySession applies a write of session state, at the log's time.
func (a *App) applySession(ctx context.Context, w Write, o ApplyOptions, res *WriteResult) error {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	d := time.Duration(w.Seconds) * time.Second
	var err error
	switch w.Kind {
	case WriteLeaseClaim:
		if w.Lease == nil {
			return fmt.Errorf("%w: a lease claim without its lease", engine.ErrInvalidInput)
		}
		res.Lease, err = a.Delivery.ClaimLease(*w.Lease, d, now)
	case WriteLeaseRefresh:
		res.Lease, err = a.Delivery.RefreshLease(w.Org, w.Session, w.Worker, d, now)
	case WriteEnqueue:
		if w.Inject == nil {
			return fmt.Errorf("%w: an enqueue without its inject", engine.ErrInvalidInput)
		}
		in, ierr := w.Inject.Inject()
		if ierr != nil {
			return ierr
		}
		in, res.Duplicate, err = a.Delivery.Enqueue(in, now)
		res.Inject = &in
	case WriteInjectClaim:
		res.Inject, err = a.Delivery.ClaimInjectIDs(w.Org, w.Session, w.Worker, now, o.IDs)
	case WriteInjectAck:
		err = a.Delivery.AckInject(w.Org, w.Session, w.ID)
	case WriteInjectionLog:
		if w.Log == nil {
			return fmt.Errorf("%w: an injection log write without its log", engine.ErrInvalidInput)
		}
		l := *w.Log
		if l.ID == "" && o.IDs != nil {
			l.ID = o.IDs.ID("log")
		}
		if l.Timestamp.IsZero() && !o.Now.IsZero() {
			l.Timestamp = o.Now.UTC()
		}
		var id string
		id, err = a.Logs.PutInjectionLog(l)
		res.IDs = []string{id}
	case WriteFeedback:
		res.Feedback, err = a.Logs.ApplyFeedback(ctx, w.Org, w.Session, w.Outcome, a.FeedbackAlpha)
	}
	return err
}

func applyDoc[T any](doc json.RawMessage, set func(T) error) error {
	var v T
	if err := json.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("%w: %v", engine.ErrInvalidInput, err)
	}
	return set(v)
}

// Refused reports whether err is Apply refusing the write itself (invalid,
// not found, forbidden, in conflict): every replica refuses it alike, as
// it depends only on the write and the state before it. Any other error
// (the store or the embedder failing) is this replica's, and the write is
// to be applied again.
func Refused(err error) bool {
	var ve *engine.ValidationError
	if errors.As(err, &ve) {
		return true
	}
	for _, e := range []error{engine.ErrInvalidInput, engine.ErrNotFound, engine.ErrForbidden, engine.ErrTooLarge,
		engine.ErrConflict, engine.ErrDimensionMismatch, compose.ErrInvalidRequest, policy.ErrInvalidPolicy} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Errors of a clustered write path (compose/service/cluster).
var (
	// ErrUnavailable: the log or the nodes a request needs are out of
	// reach; nothing was changed, or the change is not yet visible here.
	ErrUnavailable = errors.New("cluster unavailable")
	// ErrOutcomeUnknown: a replicated write was sent to the log but its
	// acknowledgement did not come in time (or it was stored but not yet
	// applied here): it may or may not take effect. A retry with the
	// same idempotency key applies it at most once.
	ErrOutcomeUnknown = errors.New("write outcome unknown")
	// ErrBadSequence: a request named a log position that is not
	// SHARD:SEQ.
	ErrBadSequence = errors.New("bad log position")
	// ErrUnknownKind: a write of a kind this binary does not know
	// (KnownKind), which a newer binary wrote. It is not a refusal: a
	// replica that meets it in a log stops applying that log there.
	ErrUnknownKind = errors.New("unknown write kind")
)
