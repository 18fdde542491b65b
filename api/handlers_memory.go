package api

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/internal/suggest"
)

// The memory operations users of Mem0 and Graphiti expect: an org's
// projects, a project's observations listed, searched and edited, nodes
// found by name. Reads go through the scope and the Cedar check
// (compose); the edit is a Write like every other.

// projectList is GET /v1/orgs/{org}/projects' answer. Its shape is the
// explorer's project picker's: do not change it.
type projectList struct {
	Projects []compose.ProjectSummary `json:"projects" oas:"required"`
}

// observationPatch is PATCH .../observations/{id}'s body: a field absent
// (or null) is kept; metadata given replaces the whole metadata.
type observationPatch struct {
	Content  *string                 `json:"content"`
	Metadata *engine.ObservationMeta `json:"metadata"`
	Weight   *float64                `json:"weight"`
}

type nodeSearchResponse struct {
	Nodes []compose.NodeHit `json:"nodes" oas:"required"`
}

var observationListQuery = []param{
	{name: "limit", typ: "integer", doc: "Page size, 1 to 1000 (default 50)."},
	{name: "cursor", typ: "string", doc: "The nextCursor of the page before (opaque; valid for the same filters and q)."},
	{name: "tag", typ: "string", doc: "Only observations with this tag (exact)."},
	{name: "path", typ: "string", doc: "Only observations with this path or a path under it as a directory (pkg/auth selects pkg/auth/mw.go, not pkg/authz/x.go)."},
	{name: "sessionId", typ: "string", doc: "Only observations of this session (metadata.sessionId)."},
	{name: "workType", typ: "string", doc: "Only observations of this work type (metadata.workType)."},
	{name: "since", typ: "string", doc: "Only observations created at or after this RFC 3339 time."},
	{name: "until", typ: "string", doc: "Only observations created before this RFC 3339 time."},
	{name: "q", typ: "string", doc: "Search: rank the selected observations as a session block does (relevance x (0.5 + weight)), best first, each with its score and relevance; at most 1000 deep."},
}

var nodeSearchQuery = []param{
	{name: "q", typ: "string", required: true, doc: "The name to look for: its identity match (case and separators folded) first, then text search hits."},
	{name: "limit", typ: "integer", doc: "At most this many nodes, 1 to 100 (default 10)."},
}

// queryParams checks that the request's query holds only the route's
// parameters, each at most once: a typo (sessionid, tags) would otherwise
// be ignored and the answer silently unfiltered.
func queryParams(c echo.Context, known []param) error {
	names := make([]string, len(known))
	for i, p := range known {
		names[i] = p.name
	}
	for k, vs := range c.QueryParams() {
		if !slices.Contains(names, k) {
			msg := "unknown query parameter " + strconv.Quote(k)
			if s := suggest.Nearest(k, names); s != "" {
				msg += " (did you mean " + strconv.Quote(s) + "?)"
			}
			return fieldError("%s", msg)
		}
		if len(vs) > 1 {
			return fieldError("query parameter %s given %d times; give it once", k, len(vs))
		}
	}
	return nil
}

// intParam reads an optional integer query parameter in lo..hi (0 when
// absent).
func intParam(c echo.Context, name string, lo, hi int) (int, error) {
	s := c.QueryParam(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fieldError("%s must be an integer in %d..%d, not %q", name, lo, hi, s)
	}
	return n, nil
}

// timeParam reads an optional RFC 3339 query parameter.
func timeParam(c echo.Context, name string) (time.Time, error) {
	s := c.QueryParam(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fieldError("%s must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", name, s)
	}
	return t, nil
}

func (s *Server) handleListProjects(c echo.Context) error {
	org, err := pathOrg(c)
	if err != nil {
		return err
	}
	tok := token(c)
	if err := checkOrg(tok, org, ""); err != nil {
		return err
	}
	var only []string
	if tok.Role != auth.RoleOperator {
		only = tok.ProjectIDs
	}
	ps, err := s.app.Composer.Projects(org, only)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, projectList{Projects: ps})
}

func (s *Server) handleListObservations(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	if err := queryParams(c, observationListQuery); err != nil {
		return err
	}
	req := compose.ObservationListRequest{Query: c.QueryParam("q"), Cursor: c.QueryParam("cursor"),
		Filter: engine.ObservationFilter{Tag: c.QueryParam("tag"), Path: c.QueryParam("path"),
			SessionID: c.QueryParam("sessionId"), WorkType: c.QueryParam("workType")}}
	if req.Limit, err = intParam(c, "limit", 1, engine.MaxObservationPage); err != nil {
		return err
	}
	f := &req.Filter
	if f.Since, err = timeParam(c, "since"); err != nil {
		return err
	}
	if f.Until, err = timeParam(c, "until"); err != nil {
		return err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return fieldError("since (%s) must be before until (%s)", c.QueryParam("since"), c.QueryParam("until"))
	}
	for name, v := range map[string]string{"sessionId": f.SessionID, "workType": f.WorkType} {
		if v != "" {
			if err := engine.ValidateID(v); err != nil {
				return fieldError("%s: %v", name, err)
			}
		}
	}
	for name, v := range map[string]string{"tag": f.Tag, "path": f.Path} {
		if len(v) > 4096 {
			return fieldError("%s is %d bytes, the limit is 4096", name, len(v))
		}
	}
	l, err := s.app.Composer.Observations(c.Request().Context(), principal(token(c), "", t.Org, t.Project), t, req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, l)
}

func (s *Server) handlePatchObservation(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	obsID, err := pathItemID(c, "id")
	if err != nil {
		return err
	}
	var body observationPatch
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	p := engine.ObservationPatch{Content: body.Content, Metadata: body.Metadata, Weight: body.Weight}
	if err := p.Validate(s.app.Store.Dim()); err != nil {
		return apiErr(http.StatusUnprocessableEntity, "invalid_observation", "%v", err)
	}
	// What the caller may not read does not exist for it.
	id := principal(token(c), "", t.Org, t.Project)
	if _, err := s.app.Composer.Observation(id, t, obsID); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.app.Write(ctx, service.Write{Kind: service.WriteUpdateObservation, Org: t.Org, Project: t.Project, ID: obsID, ObservationPatch: &p}); err != nil {
		return err
	}
	o, err := s.app.Composer.Observation(id, t, obsID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, o)
}

func (s *Server) handleSearchNodes(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	if err := queryParams(c, nodeSearchQuery); err != nil {
		return err
	}
	limit, err := intParam(c, "limit", 1, compose.MaxNodeSearch)
	if err != nil {
		return err
	}
	hits, err := s.app.Composer.SearchNodes(c.Request().Context(), principal(token(c), "", t.Org, t.Project), t, c.QueryParam("q"), limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, nodeSearchResponse{Nodes: hits})
}
