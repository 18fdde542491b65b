package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/policy"
	"github.com/kgctx/kgctx/traverse"
)

type identityJSON struct {
	AgentID   string `json:"agentId"`
	OrgID     string `json:"orgId"`
	ProjectID string `json:"projectId"`
	SessionID string `json:"sessionId"`
}

type scopeJSON struct {
	OrgID     string `json:"orgId"`
	ProjectID string `json:"projectId"`
}

type graphContextRequest struct {
	Identity          identityJSON `json:"identity"`
	Scope             scopeJSON    `json:"scope" oas:"required"`
	QueryText         string       `json:"queryText"`
	BudgetTokens      *int         `json:"budgetTokens"`
	TopK              *int         `json:"topK"`
	NeighborhoodDepth *int         `json:"neighborhoodDepth"`
	// Explain adds each triplet's score parts ("explain" in the triplets).
	Explain bool `json:"explain"`
	// CodeMap asks for the block's code map section (true), none (false);
	// absent: one when the block's best seeds carry locations.
	CodeMap *bool `json:"codeMap"`
	// MinRelevance is the relevance floor: a line enters only when its
	// query relevance is at least this share of the best the block shows
	// (0 keeps every line the budget holds; absent: the default, none in
	// a code graph).
	MinRelevance *float64 `json:"minRelevance"`
}

func (graphContextRequest) refineSchema(props map[string]any) {
	bound(props, "budgetTokens", 1, compose.MaxBudgetTokens, compose.DefaultBudgetTokens)
	bound(props, "topK", 1, compose.MaxTopK, compose.DefaultTopK)
	bound(props, "neighborhoodDepth", 0, traverse.MaxDepth, compose.DefaultDepth)
	relevanceFloor(props)
}

// relevanceFloor documents a request's minRelevance in the schema.
func relevanceFloor(props map[string]any) {
	s := props["minRelevance"].(map[string]any)
	s["minimum"], s["maximum"], s["default"] = 0, 1, compose.DefaultMinRelevance
}

// principal builds the Cedar principal of a request: the token decides the
// org, role and projects; only operators act for the org the body names.
func principal(tok auth.Token, agentID, org, sessionProject string) policy.Identity {
	id := policy.Identity{AgentID: tok.AgentID, OrgID: tok.OrgID, Role: tok.Role, ProjectIDs: tok.ProjectIDs, SessionProjectID: sessionProject}
	if tok.Role == auth.RoleOperator {
		id.OrgID = org
		if agentID != "" {
			id.AgentID = agentID
		}
	}
	return id
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func (s *Server) handleGraphContext(c echo.Context) error {
	var req graphContextRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	tok := token(c)
	scope, err := scopeOf(tok, req.Identity, req.Scope)
	if err != nil {
		return err
	}
	greq := compose.GraphRequest{
		Identity:     principal(tok, req.Identity.AgentID, scope.Org, req.Identity.ProjectID),
		SessionID:    req.Identity.SessionID,
		Scope:        scope,
		QueryText:    req.QueryText,
		BudgetTokens: intOr(req.BudgetTokens, compose.DefaultBudgetTokens),
		TopK:         intOr(req.TopK, compose.DefaultTopK),
		Depth:        intOr(req.NeighborhoodDepth, compose.DefaultDepth),
		Explain:      req.Explain,
		CodeMap:      req.CodeMap,
		MinRelevance: req.MinRelevance,
	}
	b, err := s.app.Composer.GraphBlock(c.Request().Context(), greq)
	if err != nil {
		return err
	}
	s.metrics.observeGraphBlock(b)
	return c.JSON(http.StatusOK, b)
}

type ragRequestJSON struct {
	Identity            identityJSON `json:"identity"`
	Scope               scopeJSON    `json:"scope"`
	QueryText           string       `json:"queryText" oas:"required"`
	BudgetTokens        *int         `json:"budgetTokens"`
	TopK                *int         `json:"topK"`
	MaxTraversalDepth   *int         `json:"maxTraversalDepth"`
	MaxExpansionResults *int         `json:"maxExpansionResults"`
	Predicates          []string     `json:"predicates"`
	Explain             bool         `json:"explain"`
}

func (ragRequestJSON) refineSchema(props map[string]any) {
	bound(props, "budgetTokens", 1, compose.MaxBudgetTokens, compose.DefaultBudgetTokens)
	props["topK"].(map[string]any)["default"] = compose.DefaultRAGTopK
	props["maxTraversalDepth"].(map[string]any)["default"] = compose.DefaultTraversalDepth
	props["maxExpansionResults"].(map[string]any)["default"] = compose.DefaultExpansionResults
}

// scopeOf checks a body's identity and scope against the token.
func scopeOf(tok auth.Token, id identityJSON, sc scopeJSON) (engine.Tenant, error) {
	scope := engine.Tenant{Org: sc.OrgID, Project: sc.ProjectID}
	if scope.Org == "" {
		scope.Org = id.OrgID
	}
	if scope.Org == "" {
		return scope, fieldError("scope.orgId is required")
	}
	if err := engine.ValidateID(scope.Org); err != nil {
		return scope, fieldError("scope.orgId: %v", err)
	}
	if scope.Project != "" {
		if err := engine.ValidateID(scope.Project); err != nil {
			return scope, fieldError("scope.projectId: %v", err)
		}
	}
	if id.OrgID != "" && id.OrgID != scope.Org {
		return scope, apiErr(http.StatusForbidden, "forbidden", "identity.orgId %q differs from scope.orgId %q", id.OrgID, scope.Org)
	}
	return scope, checkOrg(tok, scope.Org, scope.Project)
}

func (s *Server) handleRAG(c echo.Context) error {
	var req ragRequestJSON
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	tok := token(c)
	scope, err := scopeOf(tok, req.Identity, req.Scope)
	if err != nil {
		return err
	}
	r := compose.RAGRequest{Identity: principal(tok, req.Identity.AgentID, scope.Org, req.Identity.ProjectID), Scope: scope,
		QueryText: req.QueryText, BudgetTokens: intOr(req.BudgetTokens, compose.DefaultBudgetTokens), TopK: intOr(req.TopK, compose.DefaultRAGTopK),
		MaxTraversalDepth: intOr(req.MaxTraversalDepth, compose.DefaultTraversalDepth), MaxExpansionResults: intOr(req.MaxExpansionResults, compose.DefaultExpansionResults),
		Predicates: req.Predicates, Explain: req.Explain}
	b, err := s.app.Composer.RAG(c.Request().Context(), r)
	if err != nil {
		return err
	}
	s.metrics.stages.WithLabelValues("rag", "total").Observe(b.ElapsedMs / 1e3)
	s.metrics.observeBlock("rag", b.Block == "", 0)
	return c.JSON(http.StatusOK, b)
}
