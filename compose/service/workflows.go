package service

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/policy"
)

// The workflows a transport runs on a caller's behalf once it has decoded
// and authorised the request: each is one call, so the HTTP API (and any
// other transport) only maps its answer and errors.

// ClaimRequest is a worker's claim of a session: the lease it asks for and
// what the start-of-session block is composed from.
type ClaimRequest struct {
	Session  string
	Lease    delivery.Lease // SessionID is set from Session
	Duration time.Duration
	Identity policy.Identity // who the block is composed for (Cedar)
	Scope    engine.Tenant
	WorkType string
	Query    string
	WorkItem compose.WorkItem
}

// ClaimResult is what a claim did.
type ClaimResult struct {
	Lease delivery.Lease
	Block *compose.SessionBlock
	// Enqueued: the block went onto the durable inject queue (the
	// project's runtimeInjectEnabled is on); Duplicate: it was already
	// there.
	Enqueued, Duplicate bool
	// Inject is the session's in-flight or next inject, handed to the
	// new holder (nil when none).
	Inject *delivery.Inject
}

// Claim leases the session to the worker, composes and logs the
// start-of-session block and, when the project's runtimeInjectEnabled is
// on, enqueues it; then hands the worker the session's pending inject.
// Failing to enqueue or to hand over never fails the claim (it is logged).
func (a *App) Claim(ctx context.Context, r ClaimRequest) (ClaimResult, error) {
	r.Lease.SessionID = r.Session
	lw, err := a.Write(ctx, Write{Kind: WriteLeaseClaim, Org: r.Lease.OrgID, Project: r.Lease.ProjectID, Lease: &r.Lease,
		Seconds: int(r.Duration / time.Second)})
	if err != nil {
		return ClaimResult{}, err
	}
	block, err := a.Composer.SessionBlock(ctx, compose.SessionRequest{SessionID: r.Session, WorkType: r.WorkType,
		Scope: r.Scope, Identity: r.Identity, QueryText: r.Query, WorkItem: r.WorkItem, Graph: true})
	if err != nil {
		return ClaimResult{}, err
	}
	out := ClaimResult{Lease: lw.Lease, Block: block}
	mem, err := a.Settings.MemoryConfig(r.Scope)
	if err == nil && mem.RuntimeInjectEnabled && block.Block != "" {
		_, dup, err := a.Composer.Writes.Enqueue(ctx, delivery.Inject{SessionID: r.Session, OrgID: r.Scope.Org, AgentID: r.Lease.AgentID,
			Text: block.Block, ObservationIDs: block.ObservationIDs})
		if err != nil {
			a.Logger.Warn("enqueue the start-of-session block", "session", r.Session, "err", err)
		} else {
			out.Enqueued, out.Duplicate = !dup, dup
		}
	}
	out.Inject, err = a.ClaimInject(ctx, r.Scope.Org, r.Session, r.Lease.WorkerID)
	if err != nil {
		a.Logger.Warn("hand over an inject at claim", "session", r.Session, "err", err)
	}
	return out, nil
}

// ClaimInject hands org's session's in-flight or next inject to worker,
// the holder of its lease (nil when none).
func (a *App) ClaimInject(ctx context.Context, org, session, worker string) (*delivery.Inject, error) {
	res, err := a.Write(ctx, Write{Kind: WriteInjectClaim, Org: org, Session: session, Worker: worker})
	return res.Inject, err
}

// Enqueue puts an inject on its session's queue; true when the text was
// already queued (nothing added).
func (a *App) Enqueue(ctx context.Context, in delivery.Inject) (delivery.Inject, bool, error) {
	return a.Composer.Writes.Enqueue(ctx, in)
}

// AckInject consumes the session's in-flight inject.
func (a *App) AckInject(ctx context.Context, org, session, deliveryID string) error {
	_, err := a.Write(ctx, Write{Kind: WriteInjectAck, Org: org, Session: session, ID: deliveryID})
	return err
}

// PutInjectionLog records a context injection and returns its id.
func (a *App) PutInjectionLog(ctx context.Context, l sessionlog.InjectionLog) (string, error) {
	return a.Composer.Writes.PutInjectionLog(ctx, l)
}

// ToolResult records a session's tool result in its project's graph
// (compose.Composer.ToolResult) as a write.
func (a *App) ToolResult(ctx context.Context, r compose.ToolResult) (*compose.LearnResult, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	res, err := a.Write(ctx, Write{Kind: WriteToolResult, Org: r.Scope.Org, Project: r.Scope.Project, ToolResult: &r})
	return res.Learned, err
}

// Feedback applies a session's outcome to the weights of what its
// injection logs showed, at the app's EMA rate.
func (a *App) Feedback(ctx context.Context, org, session, outcome string) (sessionlog.FeedbackResult, error) {
	res, err := a.Write(ctx, Write{Kind: WriteFeedback, Org: org, Session: session, Outcome: outcome})
	return res.Feedback, err
}

// Binding is what ties a session to projects: its lease (nil when it has
// none) and the projects of its lease and of its injection logs, each
// once, in that order.
type Binding struct {
	Lease    *delivery.Lease
	Projects []string
}

// SessionBinding reads org's session's Binding. The API's session routes
// let a caller act on a session only when it may act on each project.
func (a *App) SessionBinding(org, session string) (Binding, error) {
	var b Binding
	add := func(p string) {
		if p != "" && !slices.Contains(b.Projects, p) {
			b.Projects = append(b.Projects, p)
		}
	}
	l, err := a.Delivery.LeaseOf(org, session)
	switch {
	case err == nil:
		b.Lease = &l
		add(l.ProjectID)
	case !errors.Is(err, engine.ErrNotFound):
		return b, err
	}
	logs, err := a.Logs.InjectionLogs(org, session)
	if err != nil {
		return b, err
	}
	for _, l := range logs {
		add(l.ProjectID)
	}
	return b, nil
}

// VerbEvent hands a tool call to the in-session injector, with what the
// session's lease (nil: none) says of its runtime (whether it takes
// injected messages) and of its project.
func (a *App) VerbEvent(ctx context.Context, e compose.Event, lease *delivery.Lease) (compose.InjectionResult, error) {
	if lease != nil {
		e.SupportsMessageInjection = lease.Capability.SupportsMessageInjection
		e.LeaseProjectID = lease.ProjectID
	}
	return a.Injector.Handle(ctx, e)
}

// Refresh is a worker's lock-refresh beat: it extends the lease (for d, or
// for the claim's length when d is 0) and hands the holder the session's
// in-flight or next inject (nil when none).
func (a *App) Refresh(ctx context.Context, org, session, worker string, d time.Duration) (delivery.Lease, *delivery.Inject, error) {
	res, err := a.Write(ctx, Write{Kind: WriteLeaseRefresh, Org: org, Session: session, Worker: worker, Seconds: int(d / time.Second)})
	if err != nil {
		return res.Lease, nil, err
	}
	in, err := a.ClaimInject(ctx, org, session, worker)
	return res.Lease, in, err
}

// Import writes triplets into project t under the project's relationship
// vocabulary (a strict one refuses the others, naming the line).
func (a *App) Import(ctx context.Context, t engine.Tenant, ts []engine.TripletInput, opts engine.ImportOptions) (engine.ImportResult, error) {
	preds, err := a.Settings.Predicates(t)
	if err != nil {
		return engine.ImportResult{}, err
	}
	opts.Relationships = preds.Set()
	return a.Store.Import(ctx, t, ts, opts)
}
