package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/engine/delivery"
)

// DefaultLeaseSeconds is a claim's lease when the body names none.
const DefaultLeaseSeconds = 30

// sessionOf is the one session-ownership rule of the session routes: it
// reads {sessionId}, says whose it is (sessionOrg), and refuses a caller
// that may not act on every project the session is bound to (its lease's
// and its injection logs', service.App.SessionBinding): a token limited
// to project a cannot drive, read or teach a session of project b of its
// own org. The session's lease is kept in the request (sessionLease).
func (s *Server) sessionOf(c echo.Context, bodyOrg string) (org, session string, err error) {
	org, session, err = s.sessionOrg(c, bodyOrg)
	if err != nil {
		return "", "", err
	}
	b, err := s.sessionBound(c, org, session)
	if err != nil {
		return "", "", err
	}
	c.Set(ctxLease, b.Lease)
	return org, session, nil
}

// sessionBound is sessionOf's rule for a session named anywhere (the path,
// or a body: an injection log's, a start-of-session block's): the caller
// must be allowed every project org's session is bound to, else 403, so
// that it cannot bind another project's session to its own (and lock that
// project's tokens out of it) by leaving a log there. It returns the
// binding.
func (s *Server) sessionBound(c echo.Context, org, session string) (service.Binding, error) {
	b, err := s.app.SessionBinding(org, session)
	if err != nil {
		return b, err
	}
	tok := token(c)
	if err := checkOrg(tok, org, ""); err != nil {
		return b, err
	}
	for _, p := range b.Projects {
		if checkOrg(tok, org, p) != nil {
			// Not named: the token may not know the project exists.
			return b, apiErr(http.StatusForbidden, "forbidden", "session %q is bound to a project the token may not act on", session)
		}
	}
	return b, nil
}

const ctxLease = "kgctx.lease"

// sessionLease is the lease sessionOf read (nil when the session has none).
func sessionLease(c echo.Context) *delivery.Lease {
	l, _ := c.Get(ctxLease).(*delivery.Lease)
	return l
}

// sessionOrg reads {sessionId} and says whose it is. Session ids are scoped
// by org: a non-operator token's session is always its own org's (a body
// naming another org is refused), so an id another org already uses is
// simply another session. An operator names the org with the body's orgId
// or ?orgId=; without either, the one org that uses the id, if only one
// does.
func (s *Server) sessionOrg(c echo.Context, bodyOrg string) (org, session string, err error) {
	session = c.Param("sessionId")
	if err := engine.ValidateID(session); err != nil {
		return "", "", fieldError("sessionId in path: %v", err)
	}
	tok := token(c)
	if tok.Role != auth.RoleOperator {
		if bodyOrg != "" && bodyOrg != tok.OrgID {
			return "", "", apiErr(http.StatusForbidden, "forbidden", "the token belongs to org %q, not %q", tok.OrgID, bodyOrg)
		}
		return tok.OrgID, session, nil
	}
	org = bodyOrg
	if org == "" {
		org = c.QueryParam("orgId")
	}
	if org != "" {
		if err := engine.ValidateID(org); err != nil {
			return "", "", fieldError("orgId: %v", err)
		}
		return org, session, nil
	}
	orgs, err := s.app.Store.KV().SessionOrgs(session)
	if err != nil {
		return "", "", err
	}
	switch len(orgs) {
	case 1:
		return orgs[0], session, nil
	case 0:
		return "", "", apiErr(http.StatusBadRequest, "invalid_field", "orgId is required: an operator token names the session's org (body orgId or ?orgId=)")
	}
	return "", "", apiErr(http.StatusBadRequest, "invalid_field", "session %q is used by %d orgs: name one with orgId (body) or ?orgId=", session, len(orgs))
}

type injectJSON struct {
	DeliveryID     string   `json:"deliveryId"`
	Text           string   `json:"text"`
	ObservationIDs []string `json:"observationIds"`
	Attempts       int      `json:"attempts"`
}

func toInjectJSON(in *delivery.Inject) *injectJSON {
	if in == nil {
		return nil
	}
	return &injectJSON{DeliveryID: in.DeliveryID, Text: in.Text, ObservationIDs: in.ObservationIDs, Attempts: in.Attempts}
}

// deliveryInjectJSON is an inject as POST /v1/sessions/{id}/injects and
// its claim answer it: the HTTP body, apart from the queue's stored record
// (delivery.Inject) and the replicated log's entry (service.InjectEntry),
// though its fields agree with the record's today. Its name keeps the
// OpenAPI component it has always had (DeliveryInject).
type deliveryInjectJSON struct {
	DeliveryID     string    `json:"deliveryId"`
	OrgID          string    `json:"orgId"`
	SessionID      string    `json:"sessionId"`
	AgentID        string    `json:"agentId,omitempty"`
	Text           string    `json:"text"`
	ContentHash    string    `json:"contentHash"`
	ObservationIDs []string  `json:"observationIds"`
	State          string    `json:"state"`
	EnqueuedAt     time.Time `json:"enqueuedAt"`
	DeliveredAt    time.Time `json:"deliveredAt,omitzero"`
	Attempts       int       `json:"attempts"`
	Seq            uint64    `json:"seq"`
}

func toDeliveryInjectJSON(in delivery.Inject) deliveryInjectJSON {
	return deliveryInjectJSON{DeliveryID: in.DeliveryID, OrgID: in.OrgID, SessionID: in.SessionID, AgentID: in.AgentID,
		Text: in.Text, ContentHash: in.ContentHash, ObservationIDs: in.ObservationIDs, State: in.State,
		EnqueuedAt: in.EnqueuedAt, DeliveredAt: in.DeliveredAt, Attempts: in.Attempts, Seq: in.Seq}
}

// leaseDuration reads a body's leaseSeconds; def when it names none (0:
// none, for a refresh that keeps the claim's length).
func leaseDuration(secs *int, def int) (time.Duration, error) {
	if secs == nil {
		return time.Duration(def) * time.Second, nil
	}
	n := *secs
	if n <= 0 || time.Duration(n)*time.Second > delivery.MaxLease {
		return 0, fieldError("leaseSeconds %d is outside 1..%d", n, int(delivery.MaxLease.Seconds()))
	}
	return time.Duration(n) * time.Second, nil
}

type claimRequest struct {
	WorkerID     string                   `json:"workerId" oas:"required"`
	LeaseSeconds *int                     `json:"leaseSeconds"`
	OrgID        string                   `json:"orgId"`
	ProjectID    string                   `json:"projectId" oas:"required"`
	AgentID      string                   `json:"agentId"`
	WorkType     string                   `json:"workType"`
	QueryText    string                   `json:"queryText"`
	WorkItem     compose.WorkItem         `json:"workItem"`
	Capability   delivery.LeaseCapability `json:"capability"`
}

// handleClaim leases the session to the worker, composes and logs the
// start-of-session block and, when the project's runtimeInjectEnabled is
// on, enqueues it. Failing to enqueue never fails the claim.
func (s *Server) handleClaim(c echo.Context) error {
	var req claimRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	tok := token(c)
	org, session, err := s.sessionOf(c, req.OrgID)
	if err != nil {
		return err
	}
	if err := engine.ValidateID(req.WorkerID); err != nil {
		return fieldError("workerId: %v", err)
	}
	t, err := orgProject(tok, org, req.ProjectID)
	if err != nil {
		return err
	}
	req.OrgID = t.Org
	if req.WorkType != "" {
		if err := engine.ValidateID(req.WorkType); err != nil {
			return fieldError("workType: %v", err)
		}
	}
	d, err := leaseDuration(req.LeaseSeconds, DefaultLeaseSeconds)
	if err != nil {
		return err
	}
	r, err := s.app.Claim(c.Request().Context(), service.ClaimRequest{Session: session, Duration: d,
		Lease: delivery.Lease{WorkerID: req.WorkerID, OrgID: req.OrgID, ProjectID: req.ProjectID, AgentID: req.AgentID,
			WorkType: req.WorkType, Capability: req.Capability},
		Identity: principal(tok, req.AgentID, req.OrgID, req.ProjectID), Scope: t,
		WorkType: req.WorkType, Query: req.QueryText, WorkItem: req.WorkItem})
	if err != nil {
		return err
	}
	out := claimResponse{WorkerID: r.Lease.WorkerID, ExpiresAt: r.Lease.ExpiresAt, LogID: r.Block.LogID,
		Enqueued: r.Enqueued, Inject: toInjectJSON(r.Inject)}
	if r.Enqueued || r.Duplicate {
		out.Duplicate = &r.Duplicate
	}
	return c.JSON(http.StatusOK, out)
}

type workerRequest struct {
	WorkerID     string `json:"workerId" oas:"required"`
	LeaseSeconds *int   `json:"leaseSeconds"`
	// OrgID is needed only from operator tokens (see sessionOf).
	OrgID string `json:"orgId"`
}

// decodeWorker reads the body of a worker's call and checks its workerId.
func decodeWorker(c echo.Context) (workerRequest, error) {
	var req workerRequest
	if err := decodeJSON(c, &req); err != nil {
		return req, err
	}
	if err := engine.ValidateID(req.WorkerID); err != nil {
		return req, fieldError("workerId: %v", err)
	}
	return req, nil
}

// handleRefresh is the lock-refresh beat: it extends the lease and hands
// the holder the session's in-flight or next inject.
func (s *Server) handleRefresh(c echo.Context) error {
	req, err := decodeWorker(c)
	if err != nil {
		return err
	}
	org, session, err := s.sessionOf(c, req.OrgID)
	if err != nil {
		return err
	}
	// No leaseSeconds: renew for as long as the claim asked (0 tells the
	// store to keep the lease's length).
	d, err := leaseDuration(req.LeaseSeconds, 0)
	if err != nil {
		return err
	}
	lease, in, err := s.app.Refresh(c.Request().Context(), org, session, req.WorkerID, d)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, refreshResponse{ExpiresAt: lease.ExpiresAt, Inject: toInjectJSON(in)})
}

func (s *Server) handleEnqueue(c echo.Context) error {
	var req enqueueRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	org, session, err := s.sessionOf(c, req.OrgID)
	if err != nil {
		return err
	}
	row, dup, err := s.app.Enqueue(c.Request().Context(), delivery.Inject{SessionID: session, OrgID: org, AgentID: req.AgentID,
		Text: req.Text, ObservationIDs: req.ObservationIDs})
	if err != nil {
		return err
	}
	if dup {
		return c.JSON(http.StatusOK, duplicateResponse{Duplicate: true})
	}
	return c.JSON(http.StatusCreated, toDeliveryInjectJSON(row))
}

func (s *Server) handleClaimInject(c echo.Context) error {
	req, err := decodeWorker(c)
	if err != nil {
		return err
	}
	org, session, err := s.sessionOf(c, req.OrgID)
	if err != nil {
		return err
	}
	in, err := s.app.ClaimInject(c.Request().Context(), org, session, req.WorkerID)
	if err != nil {
		return err
	}
	if in == nil {
		return c.NoContent(http.StatusNoContent)
	}
	return c.JSON(http.StatusOK, toDeliveryInjectJSON(*in))
}

func (s *Server) handleAck(c echo.Context) error {
	org, session, err := s.sessionOf(c, "")
	if err != nil {
		return err
	}
	if err := s.app.AckInject(c.Request().Context(), org, session, c.Param("deliveryId")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleVerbEvent(c echo.Context) error {
	var ev compose.VerbEvent
	if err := decodeJSON(c, &ev); err != nil {
		return err
	}
	tok := token(c)
	org, session, err := s.sessionOf(c, ev.OrgID)
	if err != nil {
		return err
	}
	if ev.SessionID != "" && ev.SessionID != session {
		return fieldError("sessionId %q differs from the path's %q", ev.SessionID, session)
	}
	ev.SessionID = session
	t, err := orgOptionalProject(tok, org, ev.ProjectID)
	if err != nil {
		return err
	}
	ev.OrgID = t.Org
	res, err := s.app.VerbEvent(c.Request().Context(), compose.Event{VerbEvent: ev, Identity: principal(tok, ev.AgentID, ev.OrgID, ev.ProjectID)}, sessionLease(c))
	if err != nil {
		return err
	}
	s.metrics.stages.WithLabelValues("insession", "total").Observe(res.ElapsedMs / 1e3)
	return c.JSON(http.StatusOK, res)
}

func (s *Server) handleDrain(c echo.Context) error {
	org, session, err := s.sessionOf(c, "")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pendingResponse{Pending: s.app.Injector.Drain(org, session)})
}

func (s *Server) handleForget(c echo.Context) error {
	org, session, err := s.sessionOf(c, "")
	if err != nil {
		return err
	}
	s.app.Injector.Forget(org, session)
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleToolResult(c echo.Context) error {
	var req toolResultRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	org, session, err := s.sessionOf(c, req.OrgID)
	if err != nil {
		return err
	}
	t, err := orgProject(token(c), org, req.ProjectID)
	if err != nil {
		return err
	}
	if req.Success == nil {
		return fieldError("success is required")
	}
	res, err := s.app.ToolResult(c.Request().Context(), compose.ToolResult{SessionID: session,
		Scope: t, Tool: req.Tool, Success: *req.Success, Error: req.Error, Fix: req.Fix})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
