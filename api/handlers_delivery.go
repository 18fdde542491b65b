package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
)

// DefaultLeaseSeconds is a claim's lease when the body names none.
const DefaultLeaseSeconds = 30

// sessionAccess reads {sessionId} and checks that the caller's org owns the
// session: the org of its lease, else of its injection logs (a session
// nobody has claimed or logged is open to the caller's org).
func (s *Server) sessionAccess(c echo.Context) (string, error) {
	session := c.Param("sessionId")
	if err := engine.ValidateID(session); err != nil {
		return "", fieldError("sessionId in path: %v", err)
	}
	tok := token(c)
	if tok.Role == engine.RoleOperator {
		return session, nil
	}
	if l, err := s.app.Store.LeaseOf(session); err == nil {
		if l.OrgID != tok.OrgID {
			return "", apiErr(http.StatusForbidden, "forbidden", "session %q belongs to another org", session)
		}
		return session, nil
	} else if !errors.Is(err, engine.ErrNotFound) {
		return "", err
	}
	return session, s.sessionOwner(tok, session, tok.OrgID)
}

type injectJSON struct {
	DeliveryID     string   `json:"deliveryId"`
	Text           string   `json:"text"`
	ObservationIDs []string `json:"observationIds"`
	Attempts       int      `json:"attempts"`
}

func toInjectJSON(in *engine.Inject) *injectJSON {
	if in == nil {
		return nil
	}
	return &injectJSON{DeliveryID: in.DeliveryID, Text: in.Text, ObservationIDs: in.ObservationIDs, Attempts: in.Attempts}
}

func leaseDuration(secs *int) (time.Duration, error) {
	n := DefaultLeaseSeconds
	if secs != nil {
		n = *secs
	}
	if n <= 0 || time.Duration(n)*time.Second > engine.MaxLease {
		return 0, fieldError("leaseSeconds %d is outside 1..%d", n, int(engine.MaxLease.Seconds()))
	}
	return time.Duration(n) * time.Second, nil
}

type claimRequest struct {
	WorkerID     string                 `json:"workerId"`
	LeaseSeconds *int                   `json:"leaseSeconds"`
	OrgID        string                 `json:"orgId"`
	ProjectID    string                 `json:"projectId"`
	AgentID      string                 `json:"agentId"`
	WorkType     string                 `json:"workType"`
	QueryText    string                 `json:"queryText"`
	WorkItem     compose.WorkItem       `json:"workItem"`
	Capability   engine.LeaseCapability `json:"capability"`
}

// handleClaim leases the session to the worker, composes and logs the
// start-of-session block and, when the project's runtimeInjectEnabled is
// on, enqueues it. Failing to enqueue never fails the claim.
func (s *Server) handleClaim(c echo.Context) error {
	session, err := s.sessionAccess(c)
	if err != nil {
		return err
	}
	var req claimRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	tok := token(c)
	if err := engine.ValidateID(req.WorkerID); err != nil {
		return fieldError("workerId: %v", err)
	}
	t, err := orgProject(tok, req.OrgID, req.ProjectID)
	if err != nil {
		return err
	}
	req.OrgID = t.Org
	if req.WorkType != "" {
		if err := engine.ValidateID(req.WorkType); err != nil {
			return fieldError("workType: %v", err)
		}
	}
	if err := s.sessionOwner(tok, session, req.OrgID); err != nil {
		return err
	}
	d, err := leaseDuration(req.LeaseSeconds)
	if err != nil {
		return err
	}
	now := time.Now()
	lease, err := s.app.Store.ClaimLease(engine.Lease{SessionID: session, WorkerID: req.WorkerID, OrgID: req.OrgID,
		ProjectID: req.ProjectID, AgentID: req.AgentID, WorkType: req.WorkType, Capability: req.Capability}, d, now)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	block, err := s.app.Composer.SessionBlock(ctx, compose.SessionRequest{SessionID: session, WorkType: req.WorkType,
		Scope: engine.Tenant{Org: req.OrgID, Project: req.ProjectID}, Identity: principal(tok, req.AgentID, req.OrgID, req.ProjectID),
		QueryText: req.QueryText, WorkItem: req.WorkItem, Graph: true})
	if err != nil {
		return err
	}
	out := map[string]any{"workerId": lease.WorkerID, "expiresAt": lease.ExpiresAt, "logId": block.LogID, "enqueued": false}
	mem, err := s.app.Settings.MemoryConfig(engine.Tenant{Org: req.OrgID, Project: req.ProjectID})
	if err == nil && mem.RuntimeInjectEnabled && block.Block != "" {
		_, dup, err := s.app.Store.Enqueue(engine.Inject{SessionID: session, OrgID: req.OrgID, AgentID: req.AgentID,
			Text: block.Block, ObservationIDs: block.ObservationIDs}, now)
		if err != nil {
			s.log.Warn("enqueue the start-of-session block", "session", session, "err", err)
		} else {
			out["enqueued"], out["duplicate"] = !dup, dup
		}
	}
	in, err := s.app.Store.ClaimInject(session, req.WorkerID, now)
	if err != nil {
		s.log.Warn("hand over an inject at claim", "session", session, "err", err)
	}
	out["inject"] = toInjectJSON(in)
	return c.JSON(http.StatusOK, out)
}

type workerRequest struct {
	WorkerID     string `json:"workerId"`
	LeaseSeconds *int   `json:"leaseSeconds"`
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
	session, err := s.sessionAccess(c)
	if err != nil {
		return err
	}
	req, err := decodeWorker(c)
	if err != nil {
		return err
	}
	d, err := leaseDuration(req.LeaseSeconds)
	if err != nil {
		return err
	}
	now := time.Now()
	lease, err := s.app.Store.RefreshLease(session, req.WorkerID, d, now)
	if err != nil {
		return err
	}
	in, err := s.app.Store.ClaimInject(session, req.WorkerID, now)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"expiresAt": lease.ExpiresAt, "inject": toInjectJSON(in)})
}

func (s *Server) handleEnqueue(c echo.Context) error {
	session, err := s.sessionAccess(c)
	if err != nil {
		return err
	}
	var req struct {
		OrgID          string   `json:"orgId"`
		AgentID        string   `json:"agentId"`
		Text           string   `json:"text"`
		ObservationIDs []string `json:"observationIds"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	tok := token(c)
	if req.OrgID == "" {
		req.OrgID = tok.OrgID
	}
	if err := checkOrg(tok, req.OrgID, ""); err != nil {
		return err
	}
	row, dup, err := s.app.Store.Enqueue(engine.Inject{SessionID: session, OrgID: req.OrgID, AgentID: req.AgentID,
		Text: req.Text, ObservationIDs: req.ObservationIDs}, time.Now())
	if err != nil {
		return err
	}
	if dup {
		return c.JSON(http.StatusOK, map[string]bool{"duplicate": true})
	}
	return c.JSON(http.StatusCreated, row)
}

func (s *Server) handleClaimInject(c echo.Context) error {
	session, err := s.sessionAccess(c)
	if err != nil {
		return err
	}
	req, err := decodeWorker(c)
	if err != nil {
		return err
	}
	in, err := s.app.Store.ClaimInject(session, req.WorkerID, time.Now())
	if err != nil {
		return err
	}
	if in == nil {
		return c.NoContent(http.StatusNoContent)
	}
	return c.JSON(http.StatusOK, in)
}

func (s *Server) handleAck(c echo.Context) error {
	session, err := s.sessionAccess(c)
	if err != nil {
		return err
	}
	if err := s.app.Store.AckInject(session, c.Param("deliveryId")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleVerbEvent(c echo.Context) error {
	session, err := s.sessionAccess(c)
	if err != nil {
		return err
	}
	var ev compose.VerbEvent
	if err := decodeJSON(c, &ev); err != nil {
		return err
	}
	tok := token(c)
	if ev.SessionID != "" && ev.SessionID != session {
		return fieldError("sessionId %q differs from the path's %q", ev.SessionID, session)
	}
	ev.SessionID = session
	t, err := orgProject(tok, ev.OrgID, ev.ProjectID)
	if err != nil {
		return err
	}
	ev.OrgID = t.Org
	e := compose.Event{VerbEvent: ev, Identity: principal(tok, ev.AgentID, ev.OrgID, ev.ProjectID)}
	if l, err := s.app.Store.LeaseOf(session); err == nil {
		e.SupportsMessageInjection = l.Capability.SupportsMessageInjection
	}
	res, err := s.app.Injector.Handle(c.Request().Context(), e)
	if err != nil {
		return err
	}
	s.metrics.stages.WithLabelValues("insession", "total").Observe(res.ElapsedMs / 1e3)
	return c.JSON(http.StatusOK, res)
}

func (s *Server) handleDrain(c echo.Context) error {
	session, err := s.sessionAccess(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"pending": s.app.Injector.Drain(session)})
}

func (s *Server) handleForget(c echo.Context) error {
	session, err := s.sessionAccess(c)
	if err != nil {
		return err
	}
	s.app.Injector.Forget(session)
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleToolResult(c echo.Context) error {
	session, err := s.sessionAccess(c)
	if err != nil {
		return err
	}
	var req struct {
		OrgID     string `json:"orgId"`
		ProjectID string `json:"projectId"`
		AgentID   string `json:"agentId"`
		Tool      string `json:"tool"`
		Success   *bool  `json:"success"`
		Error     string `json:"error"`
		Fix       string `json:"fix"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	t, err := orgProject(token(c), req.OrgID, req.ProjectID)
	if err != nil {
		return err
	}
	if req.Success == nil {
		return fieldError("success is required")
	}
	res, err := s.app.Composer.ToolResult(c.Request().Context(), compose.ToolResult{SessionID: session,
		Scope: t, Tool: req.Tool, Success: *req.Success, Error: req.Error, Fix: req.Fix})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
