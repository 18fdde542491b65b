package api

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/engine/tripletio"
)

// tenant reads {org} and {project} from the path and checks the token may
// act on them.
// pathOrg reads and checks the {org} of an operator's route.
func pathOrg(c echo.Context) (string, error) {
	org := c.Param("org")
	if err := engine.ValidateID(org); err != nil {
		return "", fieldError("org in path: %v", err)
	}
	return org, nil
}

// pathItemID reads the id of a node or an observation from the path: one
// no item can have (ids are at most 128 bytes of letters, digits, '_',
// '.', ':' and '-') is a 400 that does not repeat it.
func pathItemID(c echo.Context, name string) (string, error) {
	id := c.Param(name)
	if err := engine.ValidateID(id); err != nil {
		return "", fieldError("%s in path: %v", name, err)
	}
	return id, nil
}

func tenant(c echo.Context) (engine.Tenant, error) {
	t := engine.Tenant{Org: c.Param("org"), Project: c.Param("project")}
	if err := engine.ValidateID(t.Org); err != nil {
		return t, fieldError("org in path: %v", err)
	}
	if err := engine.ValidateID(t.Project); err != nil {
		return t, fieldError("project in path: %v", err)
	}
	return t, checkOrg(token(c), t.Org, t.Project)
}

// importFormat picks the body format from Content-Type.
func importFormat(c echo.Context) tripletio.Format {
	ct := strings.ToLower(c.Request().Header.Get("Content-Type"))
	switch {
	case strings.Contains(ct, "ndjson"), strings.Contains(ct, "jsonl"), strings.Contains(ct, "json-seq"):
		return tripletio.JSONL
	case strings.Contains(ct, "json"):
		return tripletio.JSON
	case strings.Contains(ct, "n-triples"):
		return tripletio.NTriples
	case strings.Contains(ct, "tab-separated"):
		return tripletio.TSV
	case strings.Contains(ct, "csv"):
		return tripletio.CSV
	}
	return tripletio.Auto
}

func (s *Server) handleImport(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	r, err := tripletio.NewReader(c.Request().Body, importFormat(c))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) || isBodyTimeout(err) {
			return err
		}
		return apiErr(http.StatusBadRequest, "malformed_body", "%v", err)
	}
	ts, lines, errs, err := tripletio.ReadBatch(r, nil, nil, 0)
	var mb *http.MaxBytesError
	if errors.As(err, &mb) || isBodyTimeout(err) {
		return err
	}
	if len(errs) > 0 {
		lines := tripletio.ToLineErrors(errs)
		if tripletio.AnySyntax(errs) {
			// The body cannot be read as a whole: name what stopped it.
			first := errs[0]
			for _, e := range errs {
				if tripletio.AnySyntax([]*tripletio.LineError{e}) {
					first = e
					break
				}
			}
			return &Error{Status: http.StatusBadRequest, Code: "malformed_body", Message: first.Error(), Lines: lines}
		}
		return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_triplets",
			Message: strconv.Itoa(len(errs)) + " invalid line(s); first: " + errs[0].Error(), Lines: lines}
	}
	if len(ts) == 0 {
		return apiErr(http.StatusBadRequest, "empty_body", "no triplets in the request body")
	}
	tok := token(c)
	if err := checkWriteProjects(tok, t, ts, lines); err != nil {
		return err
	}
	refund, err := s.checkImport(t, ts)
	if err != nil {
		s.metrics.triplets.WithLabelValues("rejected").Add(float64(len(ts)))
		return err
	}
	wr, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WriteImport, Org: t.Org, Project: t.Project, Triplets: ts, Lines: lines,
		AllowCrossOrg: tok.Role == auth.RoleOperator})
	if err != nil {
		refund()
		s.metrics.triplets.WithLabelValues("rejected").Add(float64(len(ts)))
		return err
	}
	s.metrics.triplets.WithLabelValues("accepted").Add(float64(wr.Import.Accepted))
	return c.JSON(http.StatusOK, wr.Import)
}

func (s *Server) handleQuery(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	q := engine.TripletQuery{Subject: c.QueryParam("subject"), Predicate: c.QueryParam("predicate"), Object: c.QueryParam("object")}
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > engine.MaxQueryLimit {
			return fieldError("limit must be an integer in 1..%d", engine.MaxQueryLimit)
		}
		q.Limit = n
	}
	ts, err := s.app.Composer.QueryTriplets(principal(token(c), "", t.Org, t.Project), t, q)
	if err != nil {
		return err
	}
	if ts == nil {
		ts = []engine.Triplet{}
	}
	return c.JSON(http.StatusOK, tripletList{Triplets: ts})
}

func (s *Server) handleStats(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	st, err := s.app.Store.Stats(t)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

func (s *Server) handleGetNode(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	nodeID, err := pathItemID(c, "nodeId")
	if err != nil {
		return err
	}
	n, err := s.app.Composer.Node(principal(token(c), "", t.Org, t.Project), t, nodeID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, n)
}

func (s *Server) handleDeleteNode(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	nodeID, err := pathItemID(c, "nodeId")
	if err != nil {
		return err
	}
	// What the caller may not read it may not delete: 404, as for GET.
	if _, err := s.app.Composer.Node(principal(token(c), "", t.Org, t.Project), t, nodeID); err != nil {
		return err
	}
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WriteDeleteNode, Org: t.Org, Project: t.Project, ID: nodeID}); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleDeleteTriplet(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	var body tripletKey
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	if strings.TrimSpace(body.Source) == "" || strings.TrimSpace(body.Relationship) == "" || strings.TrimSpace(body.Target) == "" {
		return fieldError("source, relationship and target are required")
	}
	// What the caller may not read it may not delete: 404, as for a
	// triplet that does not exist.
	if err := s.app.Composer.CheckTriplet(principal(token(c), "", t.Org, t.Project), t, body.Source, body.Target); err != nil {
		return err
	}
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WriteDeleteTriplet, Org: t.Org, Project: t.Project,
		Source: body.Source, Relationship: body.Relationship, Target: body.Target}); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleClear(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	if c.QueryParam("confirm") != "true" {
		return fieldError("clearing a project's graph needs ?confirm=true")
	}
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WriteClear, Org: t.Org, Project: t.Project}); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) handleGetPredicates(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	p, err := s.app.Settings.Predicates(t)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

func (s *Server) handlePutPredicates(c echo.Context) error {
	t, err := tenant(c)
	if err != nil {
		return err
	}
	var p compose.PredicateConfig
	if err := decodeJSON(c, &p); err != nil {
		return err
	}
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WritePredicates, Org: t.Org, Project: t.Project, Doc: mustJSON(p)}); err != nil {
		return err
	}
	return s.handleGetPredicates(c)
}

// checkWriteProjects refuses an import that touches a project the token
// may not write: every endpoint placed in another project of the org
// (sourceProjectId, targetProjectId) must be one of the token's projects
// when it lists some. The path's project was checked by tenant.
func checkWriteProjects(tok auth.Token, t engine.Tenant, ts []engine.TripletInput, lines []int) error {
	if tok.Role == auth.RoleOperator || len(tok.ProjectIDs) == 0 {
		return nil
	}
	for i := range ts {
		for _, f := range []struct{ name, project string }{{"sourceProjectId", ts[i].SourceProjectID}, {"targetProjectId", ts[i].TargetProjectID}} {
			if f.project == "" || f.project == t.Project || slices.Contains(tok.ProjectIDs, f.project) {
				continue
			}
			line := i + 1
			if i < len(lines) && lines[i] > 0 {
				line = lines[i]
			}
			return apiErr(http.StatusForbidden, "forbidden", "line %d: %s %q is a project the token may not write; nothing was written", line, f.name, f.project)
		}
	}
	return nil
}
