package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
)

func (s *Server) handleGetMemoryConfig(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	cfg, err := s.app.Settings.MemoryConfig(t)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cfg)
}

func (s *Server) handlePutMemoryConfig(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	var cfg compose.MemoryConfig
	if err := decodeJSON(c, &cfg); err != nil {
		return err
	}
	if err := s.app.Settings.SetMemoryConfig(t, cfg); err != nil {
		return err
	}
	return s.handleGetMemoryConfig(c)
}

func (s *Server) handleGetPlan(c echo.Context) error {
	org := c.Param("org")
	if err := engine.ValidateID(org); err != nil {
		return fieldError("org in path: %v", err)
	}
	p, err := s.app.Settings.Plan(org)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

func (s *Server) handlePutPlan(c echo.Context) error {
	org := c.Param("org")
	if err := engine.ValidateID(org); err != nil {
		return fieldError("org in path: %v", err)
	}
	var p compose.OrgPlan
	if err := decodeJSON(c, &p); err != nil {
		return err
	}
	if err := s.app.Settings.SetPlan(org, p); err != nil {
		return err
	}
	return s.handleGetPlan(c)
}

func (s *Server) handleAddObservations(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := decodeJSON(c, &raw); err != nil {
		return err
	}
	var in []engine.ObservationInput
	if trimmed := strings.TrimSpace(string(raw)); strings.HasPrefix(trimmed, "[") {
		err = json.Unmarshal(raw, &in)
	} else {
		var one engine.ObservationInput
		err = json.Unmarshal(raw, &one)
		in = []engine.ObservationInput{one}
	}
	if err != nil {
		return jsonError(err)
	}
	if len(in) == 0 {
		return fieldError("no observations in the body")
	}
	ids, err := s.app.Store.AddObservations(c.Request().Context(), t, in, engine.ImportOptions{})
	if err != nil {
		var ve *engine.ValidationError
		if errors.As(err, &ve) {
			return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_observations", Message: ve.Error(), Lines: ve.Lines}
		}
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"ids": ids})
}

func (s *Server) handleGetObservation(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	o, err := s.app.Store.Observation(t, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}

func (s *Server) handleDeleteObservation(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	if err := s.app.Store.DeleteObservation(c.Request().Context(), t, c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

type sessionRequestJSON struct {
	SessionID            string           `json:"sessionId"`
	WorkType             string           `json:"workType"`
	OrgID                string           `json:"orgId"`
	ProjectID            string           `json:"projectId"`
	AgentID              string           `json:"agentId"`
	QueryText            string           `json:"queryText"`
	WorkItem             compose.WorkItem `json:"workItem"`
	Graph                *struct{ Enabled *bool }
	CrossProjectTransfer *struct{ Enabled bool } `json:"crossProjectTransfer"`
}

// sessionOwner refuses a session that another org has already logged: a
// session belongs to the org of its injection logs (operators excepted).
func (s *Server) sessionOwner(tok engine.Token, session, org string) error {
	if tok.Role == engine.RoleOperator {
		return nil
	}
	orgs, err := s.app.Store.SessionOrgs(session)
	if err != nil {
		return err
	}
	for _, o := range orgs {
		if o != org {
			return apiErr(http.StatusForbidden, "forbidden", "session %q belongs to another org", session)
		}
	}
	return nil
}

func (s *Server) handleSessionContext(c echo.Context) error {
	var req sessionRequestJSON
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	tok := token(c)
	t, err := orgProject(tok, req.OrgID, req.ProjectID)
	if err != nil {
		return err
	}
	req.OrgID = t.Org
	if err := engine.ValidateID(req.SessionID); err != nil {
		return fieldError("sessionId: %v", err)
	}
	if err := s.sessionOwner(tok, req.SessionID, req.OrgID); err != nil {
		return err
	}
	sr := compose.SessionRequest{SessionID: req.SessionID, WorkType: req.WorkType,
		Scope:    engine.Tenant{Org: req.OrgID, Project: req.ProjectID},
		Identity: principal(tok, req.AgentID, req.OrgID, req.ProjectID), QueryText: req.QueryText, WorkItem: req.WorkItem,
		Graph: req.Graph == nil || req.Graph.Enabled == nil || *req.Graph.Enabled}
	if req.CrossProjectTransfer != nil {
		sr.CrossProjectTransfer = req.CrossProjectTransfer.Enabled
	}
	b, err := s.app.Composer.SessionBlock(c.Request().Context(), sr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}

func (s *Server) handlePostInjectionLog(c echo.Context) error {
	var l engine.InjectionLog
	if err := decodeJSON(c, &l); err != nil {
		return err
	}
	tok := token(c)
	if l.OrgID == "" {
		l.OrgID = tok.OrgID
	}
	if err := checkOrg(tok, l.OrgID, l.ProjectID); err != nil {
		return err
	}
	if err := engine.ValidateID(l.SessionID); err != nil {
		return fieldError("sessionId: %v", err)
	}
	if err := s.sessionOwner(tok, l.SessionID, l.OrgID); err != nil {
		return err
	}
	l.ID, l.FeedbackApplied = "", nil
	id, err := s.app.Store.PutInjectionLog(l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]string{"id": id})
}

// sessionParam reads {sessionId} and checks the caller's org owns it.
func (s *Server) sessionParam(c echo.Context) (string, []engine.InjectionLog, error) {
	session := c.Param("sessionId")
	if err := engine.ValidateID(session); err != nil {
		return "", nil, fieldError("sessionId in path: %v", err)
	}
	logs, err := s.app.Store.InjectionLogs(session)
	if err != nil {
		return "", nil, err
	}
	tok := token(c)
	if tok.Role == engine.RoleOperator {
		return session, logs, nil
	}
	for _, l := range logs {
		if l.OrgID != tok.OrgID {
			return "", nil, apiErr(http.StatusForbidden, "forbidden", "session %q belongs to another org", session)
		}
		if l.ProjectID != "" && len(tok.ProjectIDs) > 0 && !slices.Contains(tok.ProjectIDs, l.ProjectID) {
			return "", nil, apiErr(http.StatusForbidden, "forbidden", "the token may not act on project %q", l.ProjectID)
		}
	}
	return session, logs, nil
}

func (s *Server) handleGetInjectionLogs(c echo.Context) error {
	_, logs, err := s.sessionParam(c)
	if err != nil {
		return err
	}
	if logs == nil {
		logs = []engine.InjectionLog{}
	}
	return c.JSON(http.StatusOK, map[string]any{"logs": logs})
}

func (s *Server) handleFeedback(c echo.Context) error {
	session, logs, err := s.sessionParam(c)
	if err != nil {
		return err
	}
	var body struct {
		Outcome string `json:"outcome"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	switch body.Outcome {
	case engine.OutcomeHelpful, engine.OutcomeMisleading, engine.OutcomeNeutral:
	default:
		return fieldError("outcome must be helpful, misleading or neutral")
	}
	if len(logs) == 0 {
		return apiErr(http.StatusNotFound, "not_found", "session %q has no injection logs", session)
	}
	org := token(c).OrgID
	if token(c).Role == engine.RoleOperator {
		org = logs[0].OrgID
	}
	res, err := s.app.Store.ApplyFeedback(c.Request().Context(), session, org, body.Outcome, s.app.FeedbackAlpha)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"updated": res})
}

// getConfig answers a configuration document.
func getConfig[T any](get func() (T, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, err := get()
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, v)
	}
}

// putConfig replaces a configuration document (set validates it), then
// answers the stored one.
func putConfig[T any](get func() (T, error), set func(T) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		var v T
		if err := decodeJSON(c, &v); err != nil {
			return err
		}
		if err := set(v); err != nil {
			return err
		}
		return getConfig(get)(c)
	}
}

// orgProject fills a body's org from the token, validates org and project
// and checks the token may act on them.
func orgProject(tok engine.Token, org, project string) (engine.Tenant, error) {
	if org == "" {
		org = tok.OrgID
	}
	t := engine.Tenant{Org: org, Project: project}
	if err := engine.ValidateID(t.Org); err != nil {
		return t, fieldError("orgId: %v", err)
	}
	if err := engine.ValidateID(t.Project); err != nil {
		return t, fieldError("projectId: %v", err)
	}
	return t, checkOrg(tok, t.Org, t.Project)
}
