package api

import (
	"io"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/policy"
)

type tokenRequest struct {
	OrgID      string   `json:"orgId" oas:"required"`
	AgentID    string   `json:"agentId" oas:"required"`
	Role       string   `json:"role" oas:"required,enum=agent|importer|org_admin"`
	ProjectIDs []string `json:"projectIds"`
}

type tokenResponse struct {
	Token      string   `json:"token"`
	OrgID      string   `json:"orgId"`
	AgentID    string   `json:"agentId"`
	Role       string   `json:"role"`
	ProjectIDs []string `json:"projectIds"`
}

func (s *Server) handleCreateToken(c echo.Context) error {
	var req tokenRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if !slices.Contains([]string{auth.RoleAgent, auth.RoleImporter, auth.RoleOrgAdmin}, req.Role) {
		return fieldError("role must be agent, importer or org_admin (operators come from the bootstrap token)")
	}
	if err := engine.ValidateID(req.OrgID); err != nil {
		return fieldError("orgId: %v", err)
	}
	if err := engine.ValidateID(req.AgentID); err != nil {
		return fieldError("agentId: %v", err)
	}
	for _, p := range req.ProjectIDs {
		if err := engine.ValidateID(p); err != nil {
			return fieldError("projectIds: %v", err)
		}
	}
	if req.ProjectIDs == nil {
		req.ProjectIDs = []string{}
	}
	secret := auth.NewTokenSecret()
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WriteToken, TokenHash: auth.TokenHash(secret),
		Token: &auth.Token{OrgID: req.OrgID, AgentID: req.AgentID, Role: req.Role, ProjectIDs: req.ProjectIDs, Origin: auth.OriginAPI}}); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, tokenResponse{Token: secret, OrgID: req.OrgID, AgentID: req.AgentID, Role: req.Role, ProjectIDs: req.ProjectIDs})
}

// handleListTokens lists tokens by public id: every org's for an
// operator (?orgId= narrows it), the caller's org's for an org admin.
func (s *Server) handleListTokens(c echo.Context) error {
	tok := token(c)
	org := c.QueryParam("orgId")
	if org != "" {
		if err := engine.ValidateID(org); err != nil {
			return fieldError("orgId: %v", err)
		}
	}
	if tok.Role != auth.RoleOperator {
		if org != "" && org != tok.OrgID {
			return apiErr(http.StatusForbidden, "forbidden", "the token belongs to org %q, not %q", tok.OrgID, org)
		}
		org = tok.OrgID
	}
	list := s.app.Tokens.List(org)
	if list == nil {
		list = []auth.Info{}
	}
	return c.JSON(http.StatusOK, tokenList{Tokens: list})
}

// handleRevokeToken revokes a token by public id, on every node of a
// cluster (a global write). An org admin revokes its org's tokens only;
// the bootstrap operator token is replaced by restarting serve with
// another, not revoked.
func (s *Server) handleRevokeToken(c echo.Context) error {
	tok := token(c)
	id := c.Param("tokenId")
	if !auth.ValidPublicID(id) {
		return fieldError("tokenId %q: a token id is tok_ and 20 hex digits (GET /v1/admin/tokens lists them)", id)
	}
	info, err := s.app.Tokens.Get(id)
	if err != nil || (tok.Role != auth.RoleOperator && info.OrgID != tok.OrgID) {
		return apiErr(http.StatusNotFound, "not_found", "no token %s", id)
	}
	if info.Origin == auth.OriginBootstrap || (info.Origin == "" && info.Role == auth.RoleOperator) {
		return apiErr(http.StatusConflict, "conflict", "token %s is the bootstrap operator token: replace it by restarting serve with another $KGCTX_ADMIN_TOKEN or --admin-token-file", id)
	}
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WriteTokenRevoke, ID: id}); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleGetPolicies(c echo.Context) error {
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(s.app.PEP.Text()))
}

func (s *Server) handlePutPolicies(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	if _, err := policy.New(string(body)); err != nil {
		return err // refused before it is written anywhere
	}
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WritePolicies, Doc: mustJSON(string(body))}); err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(s.app.PEP.Text()))
}

// handleWhoami answers what the caller's token is (its secret never).
func (s *Server) handleWhoami(c echo.Context) error {
	tok := token(c)
	projects := tok.ProjectIDs
	if projects == nil {
		projects = []string{}
	}
	return c.JSON(http.StatusOK, whoamiResponse{ID: tok.ID, OrgID: tok.OrgID, AgentID: tok.AgentID, Role: tok.Role, ProjectIDs: projects})
}

// cluster is the node this server is of: a route of a cluster's answers
// 404 on a server running alone.
func (s *Server) cluster() (Cluster, error) {
	if s.cfg.Cluster == nil {
		return nil, apiErr(http.StatusNotFound, "not_found", "this server runs alone, not as a node of a cluster")
	}
	return s.cfg.Cluster, nil
}

func (s *Server) handleClusterStatus(c echo.Context) error {
	cl, err := s.cluster()
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cl.Status())
}

// placementOf reads the {org} of a placement route on a cluster node.
func (s *Server) placementOf(c echo.Context) (Cluster, string, error) {
	cl, err := s.cluster()
	if err != nil {
		return nil, "", err
	}
	org, err := pathOrg(c)
	return cl, org, err
}

func (s *Server) handleGetPlacement(c echo.Context) error {
	cl, org, err := s.placementOf(c)
	if err != nil {
		return err
	}
	return placement(c, cl, org)
}

func (s *Server) handlePutPlacement(c echo.Context) error {
	cl, org, err := s.placementOf(c)
	if err != nil {
		return err
	}
	var req struct {
		Shard *string `json:"shard"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.Shard == nil {
		// An org with data moves: nothing is done on a body that does
		// not say where.
		return apiErr(http.StatusUnprocessableEntity, "invalid_input", `the body names no shard: {"shard": "s1"} places the org on s1, {"shard": ""} removes its override`)
	}
	mv, err := cl.Place(c.Request().Context(), org, *req.Shard)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if mv != nil && !mv.Ended() {
		status = http.StatusAccepted // in progress: GET follows it
	}
	return placement(c, cl, org, status)
}

// placement answers org's shard and its latest move.
func placement(c echo.Context, cl Cluster, org string, status ...int) error {
	shard, over, mv, err := cl.Placement(c.Request().Context(), org)
	if err != nil {
		return err
	}
	code := http.StatusOK
	if len(status) > 0 {
		code = status[0]
	}
	return c.JSON(code, PlacementResponse{OrgID: org, Shard: shard, Override: over, Move: mv})
}
