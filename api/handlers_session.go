package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/engine/sessionlog"
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
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WriteMemoryConfig, Org: t.Org, Project: t.Project, Doc: mustJSON(cfg)}); err != nil {
		return err
	}
	return s.handleGetMemoryConfig(c)
}

func (s *Server) handleGetPlan(c echo.Context) error {
	org, err := pathOrg(c)
	if err != nil {
		return err
	}
	p, err := s.app.Settings.Plan(org)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

func (s *Server) handlePutPlan(c echo.Context) error {
	org, err := pathOrg(c)
	if err != nil {
		return err
	}
	var p compose.OrgPlan
	if err := decodeJSON(c, &p); err != nil {
		return err
	}
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WritePlan, Org: org, Doc: mustJSON(p)}); err != nil {
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
		err = strictUnmarshal(raw, &in)
	} else {
		var one engine.ObservationInput
		err = strictUnmarshal(raw, &one)
		in = []engine.ObservationInput{one}
	}
	if err != nil {
		return err
	}
	if len(in) == 0 {
		return fieldError("no observations in the body")
	}
	if err := s.quota.checkSizes(s.app.Store, map[engine.Tenant]engine.Growth{t: {Observations: len(in)}}); err != nil {
		return err
	}
	wr, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WriteObservations, Org: t.Org, Project: t.Project, Observations: in})
	ids := wr.IDs
	if err != nil {
		var ve *engine.ValidationError
		if errors.As(err, &ve) {
			return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_observations", Message: ve.Error(), Lines: ve.Lines}
		}
		return err
	}
	return c.JSON(http.StatusCreated, idsResponse{IDs: ids})
}

func (s *Server) handleGetObservation(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	obsID, err := pathItemID(c, "id")
	if err != nil {
		return err
	}
	o, err := s.app.Composer.Observation(principal(token(c), "", t.Org, t.Project), t, obsID)
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
	obsID, err := pathItemID(c, "id")
	if err != nil {
		return err
	}
	// What the caller may not read it may not delete: 404, as for GET.
	if _, err := s.app.Composer.Observation(principal(token(c), "", t.Org, t.Project), t, obsID); err != nil {
		return err
	}
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WriteDeleteObservation, Org: t.Org, Project: t.Project, ID: obsID}); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

type sessionRequestJSON struct {
	SessionID string           `json:"sessionId" oas:"required"`
	WorkType  string           `json:"workType"`
	OrgID     string           `json:"orgId"`
	ProjectID string           `json:"projectId" oas:"required"`
	AgentID   string           `json:"agentId"`
	QueryText string           `json:"queryText"`
	WorkItem  compose.WorkItem `json:"workItem"`
	Graph     *struct {
		Enabled *bool `json:"enabled"`
		// GraphEnabled is the references' spelling of Enabled; Identity
		// is accepted as the references send it, but the token, not the
		// body, says who asks.
		GraphEnabled *bool          `json:"graphEnabled"`
		Identity     map[string]any `json:"identity"`
	} `json:"graph"`
	CrossProjectTransfer *struct {
		Enabled bool `json:"enabled"`
	} `json:"crossProjectTransfer"`
	Explain bool `json:"explain"`
	// CodeMap asks the graph part for a code map (true), none (false);
	// absent: one when its best seeds carry locations.
	CodeMap *bool `json:"codeMap"`
	// MinRelevance is the relevance floor of both parts: an observation
	// enters only when its relevance is at least this share of the best
	// observation's, a line as in the graph block (0: no floor; absent: the
	// default).
	MinRelevance *float64 `json:"minRelevance"`
}

func (sessionRequestJSON) refineSchema(props map[string]any) { relevanceFloor(props) }

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
	// The block is logged into the session: the session rule applies.
	if _, err := s.sessionBound(c, t.Org, req.SessionID); err != nil {
		return err
	}
	sr := compose.SessionRequest{SessionID: req.SessionID, WorkType: req.WorkType,
		Scope:    engine.Tenant{Org: req.OrgID, Project: req.ProjectID},
		Identity: principal(tok, req.AgentID, req.OrgID, req.ProjectID), QueryText: req.QueryText, WorkItem: req.WorkItem,
		Graph: req.Graph == nil || ((req.Graph.Enabled == nil || *req.Graph.Enabled) && (req.Graph.GraphEnabled == nil || *req.Graph.GraphEnabled))}
	if req.CrossProjectTransfer != nil {
		sr.CrossProjectTransfer = req.CrossProjectTransfer.Enabled
	}
	sr.Explain, sr.CodeMap, sr.MinRelevance = req.Explain, req.CodeMap, req.MinRelevance
	b, err := s.app.Composer.SessionBlock(c.Request().Context(), sr)
	if err != nil {
		return err
	}
	s.metrics.observeBlock("session", b.Block == "", 0)
	return c.JSON(http.StatusOK, b)
}

func (s *Server) handlePostInjectionLog(c echo.Context) error {
	var l sessionlog.InjectionLog
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
	if _, err := s.sessionBound(c, l.OrgID, l.SessionID); err != nil {
		return err
	}
	l.ID, l.FeedbackApplied = "", nil
	// The ids must be the caller's: feedback on this session moves their
	// weights.
	if err := s.app.Composer.CheckLogIDs(principal(tok, "", l.OrgID, l.ProjectID), l); err != nil {
		return err
	}
	id, err := s.app.PutInjectionLog(c.Request().Context(), l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, idResponse{ID: id})
}

// sessionLogs reads {sessionId}, checks the caller owns it (sessionOf)
// and returns its injection logs as the caller may see them (ids it may
// not read left out).
func (s *Server) sessionLogs(c echo.Context, bodyOrg string) (org, session string, logs []sessionlog.InjectionLog, err error) {
	org, session, err = s.sessionOf(c, bodyOrg)
	if err != nil {
		return "", "", nil, err
	}
	logs, err = s.app.Composer.InjectionLogs(principal(token(c), "", org, ""), org, session)
	if err != nil {
		return "", "", nil, err
	}
	return org, session, logs, nil
}

func (s *Server) handleGetInjectionLogs(c echo.Context) error {
	_, _, logs, err := s.sessionLogs(c, "")
	if err != nil {
		return err
	}
	if logs == nil {
		logs = []sessionlog.InjectionLog{}
	}
	return c.JSON(http.StatusOK, logsResponse{Logs: logs})
}

func (s *Server) handleFeedback(c echo.Context) error {
	var body feedbackRequest
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	switch body.Outcome {
	case sessionlog.OutcomeHelpful, sessionlog.OutcomeMisleading, sessionlog.OutcomeNeutral:
	default:
		return fieldError("outcome must be helpful, misleading or neutral")
	}
	org, session, logs, err := s.sessionLogs(c, body.OrgID)
	if err != nil {
		return err
	}
	if len(logs) == 0 {
		return apiErr(http.StatusNotFound, "not_found", "session %q has no injection logs", session)
	}
	res, err := s.app.Feedback(c.Request().Context(), org, session, body.Outcome)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, feedbackResponse{Updated: res})
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
func putConfig[T any](s *Server, kind string, get func() (T, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		var v T
		if err := decodeJSON(c, &v); err != nil {
			return err
		}
		if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: kind, Doc: mustJSON(v)}); err != nil {
			return err
		}
		return getConfig(get)(c)
	}
}

// orgProject fills a body's org from the token, validates org and project
// and checks the token may act on them.
func orgProject(tok auth.Token, org, project string) (engine.Tenant, error) {
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

// orgOptionalProject is orgProject for bodies whose projectId may be
// absent (the org is then the whole scope).
func orgOptionalProject(tok auth.Token, org, project string) (engine.Tenant, error) {
	if project == "" {
		if org == "" {
			org = tok.OrgID
		}
		if err := engine.ValidateID(org); err != nil {
			return engine.Tenant{Org: org}, fieldError("orgId: %v", err)
		}
		return engine.Tenant{Org: org}, checkOrg(tok, org, "")
	}
	return orgProject(tok, org, project)
}
